"""is_same_graph: structural equality of two graphs (Theano's table of cases), with givens
substituting leaves or inner variables in either graph; constants compare by value."""
from __future__ import annotations

import pytest

from arignote import tensor as T
from arignote.graph.traversal import is_same_graph


def check(cases):
    for v1, v2, outcomes in cases:
        for givens, expected in outcomes:
            assert is_same_graph(v1, v2, givens=givens) is expected, (v1, v2, givens)
            assert is_same_graph(v2, v1, givens=givens) is expected, (v2, v1, givens)


def test_single_variables():
    x, y = T.vector("x"), T.vector("y")
    check([(x, x, [({}, True)]), (x, y, [({}, False), ({y: x}, True)]),
           (x, T.neg(x), [({}, False)]), (x, T.neg(y), [({}, False)])])


def test_graphs():
    x, y, z = T.vector("x"), T.vector("y"), T.vector("z")
    t = x * y
    check([(x * 2, x * 2, [({}, True)]),
           (x * 2, y * 2, [({}, False), ({y: x}, True), ({x: y}, True)]),
           (x * 2, y * 3, [({}, False), ({y: x}, False)]),
           (t * 2, z * 2, [({}, False), ({t: z}, True), ({z: t}, True)]),
           (x * (y * z), (x * y) * z, [({}, False)]),
           (x, t, [({}, False), ({t: x}, True)]),
           (x * x, x * y, [({}, False), ({y: x}, True)]),
           (x * x + z, x * y + t, [({}, False), ({y: x}, False), ({y: x, t: z}, True)])])
    check([(T.exp(x).sum(), T.exp(x).sum(), [({}, True), ([(x, y)], True)]),
           (T.exp(x).sum(axis=0), T.exp(x).sum(), [({}, True)]),  # the same reduction spelled twice
           (x + T.constant(2.0), x + T.constant(2.0), [({}, True)]),
           (x + T.constant(2.0), x + T.constant(3.0), [({}, False)])])


def test_cyclic_givens_are_refused():
    x = T.vector("x")
    with pytest.raises(ValueError, match="contains it"):
        is_same_graph(x * 2, x * 3, givens={x: x * 2})
