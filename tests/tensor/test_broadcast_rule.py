"""Theano's broadcasting rule: the types decide which dimensions stretch.

A dimension stretches only where its type marks it broadcastable; a length-1
dimension that is not broadcastable meeting a longer one is an error naming
both variables, so every gradient has its input's shape. Checked here on every
CPU path: the reference ``perform``, the generated thunk, fused Composites (whole
and tiled), and in place. tests/gpu/test_broadcast_rule_gpu.py runs the same
contract on the GPU backends.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arignote import function, grad
from arignote import tensor as T
from arignote.backends.cpu.tiling import TILE
from arignote.compile.mode import Mode
from arignote.tensor.elemwise import BroadcastRule, Elemwise
from arignote.tensor.type import TensorType

NO_REWRITES = Mode(optimizer=None)


def reference_rule(shapes, patterns):
    """The output shape by Theano's rule, or None where it is an error."""
    out = []
    for d in range(len(shapes[0])):
        lengths = {s[d] for s, p in zip(shapes, patterns) if not p[d]}
        if len(lengths) > 1:
            return None
        out.append(lengths.pop() if lengths else 1)
    return tuple(out)


@st.composite
def cases(draw):
    """2 or 3 inputs of one ndim; each dimension is a common length or 1, and a length-1
    dimension is broadcastable or not at random."""
    ndim = draw(st.integers(1, 3))
    common = draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim))
    n_in = draw(st.integers(2, 3))
    shapes, patterns = [], []
    for _ in range(n_in):
        shape = tuple(n if draw(st.booleans()) else 1 for n in common)
        shapes.append(shape)
        patterns.append(tuple(n == 1 and draw(st.booleans()) for n in shape))
    return shapes, patterns


def compile_sum(patterns, mode=None):
    xs = [TensorType("float64", p)(f"x{i}") for i, p in enumerate(patterns)]
    out = xs[0]
    for k, x in enumerate(xs[1:], start=2):
        out = out + x * k
    return xs, out, function(xs, out, mode=mode)


@given(cases())
def test_the_types_decide_on_every_cpu_path(case):
    shapes, patterns = case
    values = [np.random.default_rng(0).normal(size=s) for s in shapes]
    expected_shape = reference_rule(shapes, patterns)
    for mode in (None, NO_REWRITES):  # fused and generated thunks / one node per op
        *_, f = compile_sum(patterns, mode)
        if expected_shape is None:
            # The failing node may read the inputs themselves or products of them.
            with pytest.raises(ValueError, match=r"has shape \(.*(not broadcastable|differ in dimension)"):
                f(*values)
        else:
            reference = values[0] + sum(v * k for k, v in enumerate(values[1:], start=2))
            np.testing.assert_allclose(f(*values), reference)
            assert f(*values).shape == expected_shape


@given(cases())
def test_a_gradient_has_its_inputs_shape(case):
    shapes, patterns = case
    expected_shape = reference_rule(shapes, patterns)
    xs, out, _ = compile_sum(patterns)
    g = function(xs, grad(out.sum(), xs))
    values = [np.ones(s) for s in shapes]
    if expected_shape is None:
        # The graph as written computes the sum, and refuses. (Rewritten, a gradient
        # graph may read only the inferred shape of the sum and so not see a mismatch.)
        unrewritten = function(xs, grad(out.sum(), xs), mode=NO_REWRITES)
        with pytest.raises(ValueError, match="not broadcastable|differ in dimension"):
            unrewritten(*values)
        return
    size = int(np.prod(expected_shape))
    for k, (gk, v) in enumerate(zip(g(*values), values), start=1):
        assert gk.shape == v.shape
        # Each element of x_k is used size / x_k.size times, with coefficient k (x0: 1).
        np.testing.assert_allclose(gk, np.full(v.shape, k * size / max(v.size, 1)))


def test_a_length_one_dimension_that_is_not_broadcastable_is_an_error_naming_both():
    x, y = T.matrix("x"), T.matrix("y")
    f = function([x, y], x + y)
    with pytest.raises(ValueError) as info:
        f(np.ones((1, 3)), np.ones((2, 3)))
    text = str(info.value)
    assert "'x' has shape (1, 3) and 'y' has shape (2, 3)" in text
    assert "Dimension 0 of 'x' has length 1 but is not broadcastable" in text
    assert "tensor.addbroadcast(x, 0)" in text and "shape_padleft(x)" in text
    assert "dimshuffle('x', ...)" in text


def test_the_old_numpy_broadcast_gave_a_gradient_of_the_wrong_shape():
    # On numpy's rule the gradient of x below came out (2, 3) for an x of shape (1, 3).
    x, y = T.matrix("x"), T.matrix("y")
    g = function([x, y], grad((x * y).sum(), x))
    with pytest.raises(ValueError, match="not broadcastable"):
        g(np.ones((1, 3)), np.ones((2, 3)))
    r = T.row("r")  # declared broadcastable: the gradient is summed back to (1, 3)
    gr = function([r, y], grad((r * y).sum(), r))(np.ones((1, 3)), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(gr, np.full((1, 3), 4.0))


def test_declaring_the_dimension_broadcastable_is_the_fix():
    x, y = T.matrix("x"), T.matrix("y")
    for fixed in (T.addbroadcast(x, 0), T.patternbroadcast(x, (True, False))):
        got = function([x, y], fixed + y)(np.ones((1, 3)), np.ones((2, 3)))
        np.testing.assert_array_equal(got, np.full((2, 3), 2.0))
    v = T.vector("v")
    got = function([v, y], T.shape_padleft(v) + y)(np.arange(3.0), np.zeros((2, 3)))
    np.testing.assert_array_equal(got, np.tile(np.arange(3.0), (2, 1)))


def test_lengths_that_simply_differ_name_both_variables_and_the_constant():
    v = T.vector("v")
    f = function([v], v + np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"'v' has shape \(3,\) and the constant \[1\. 2\.\] has shape "
                                         r"\(2,\), which differ in dimension 0 \(3 and 2\)"):
        f(np.ones(3))


def test_a_fused_node_names_the_users_variables_and_where_the_expression_was_written():
    x, y = T.matrix("x"), T.matrix("y")
    out = T.exp(x) * 2 + T.tanh(y)  # the line the error points to
    f = function([x, y], out)
    assert any("Composite" in str(n.op) for n in f.maker.fgraph.toposort())
    with pytest.raises(ValueError) as info:
        f(np.ones((1, 3)), np.ones((2, 3)))
    text = str(info.value)
    assert "'x' has shape (1, 3) and 'y' has shape (2, 3)" in text
    assert "arg " not in text  # numpy's numbering of ufunc arguments
    assert f"fused elementwise expression built at {out.tag.trace}" in text


def test_tiled_fused_nodes_and_in_place_nodes_keep_the_rule():
    x, y = T.matrix("x"), T.matrix("y")
    n = TILE // 8 + 1  # (8, n) outputs run tile by tile
    f = function([x, y], T.exp(x) * 2 + y)
    with pytest.raises(ValueError, match="'x' has shape \\(1, "):
        f(np.ones((1, n)), np.ones((8, n)))
    r = T.row("r")
    g = function([r, y], T.exp(r) * 2 + y)
    np.testing.assert_allclose(g(np.zeros((1, n)), np.ones((8, n))), np.full((8, n), 3.0))
    # (x * 2) is computed inside the graph, so the add may overwrite it in place.
    h = function([x, y], T.sqrt(x * 2) + y, mode=Mode(optimizer="fast_run").excluding("fusion"))
    assert any(n.op.destroy_map for n in h.maker.fgraph.toposort())
    with pytest.raises(ValueError, match="not broadcastable"):
        h(np.ones((1, 3)), np.ones((2, 3)))


def test_the_reference_perform_keeps_the_rule():
    x, y = T.matrix("x"), T.matrix("y")
    node = (x + y).owner
    cell = [[None]]
    with pytest.raises(ValueError, match="'x' has shape \\(1, 3\\)"):
        node.op.perform(node, [np.ones((1, 3)), np.ones((2, 3))], cell)
    node = (T.row("r") + y).owner
    node.op.perform(node, [np.ones((1, 3)), np.ones((2, 3))], cell)
    assert cell[0][0].shape == (2, 3)


def test_the_rule_is_data_that_pickles():
    import pickle
    x, r = T.matrix("x"), T.row("r")
    node = Elemwise((x + r).owner.op.scalar_op)(x, r).owner
    rule = pickle.loads(pickle.dumps(BroadcastRule(node, [0, 1])))
    assert rule((2, 3), (1, 3)) == (2, 3)
    with pytest.raises(ValueError, match="differ in dimension 1"):
        rule((2, 3), (1, 4))
