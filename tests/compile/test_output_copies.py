"""Outputs whose memory is an input's or a constant's are computed by a DeepCopyOp node."""
import numpy as np

import arignote as A
import arignote.tensor as T
from arignote.compile.io import In, Out
from arignote.compile.output_copies import DeepCopyOp


def _ops(f):
    return [type(node.op) for node in f.maker.fgraph.toposort()]


def test_an_input_returned_as_it_is_is_copied_by_a_node():
    x = T.matrix("x")
    f = A.function([x], x)
    assert _ops(f) == [DeepCopyOp]
    a = np.arange(4.0).reshape(2, 2)
    out = f(a)
    np.testing.assert_array_equal(out, a)
    assert not np.shares_memory(out, a)


def test_a_view_of_an_input_is_copied_after_the_view():
    x = T.vector("x")
    f = A.function([x], x[1:])
    assert _ops(f)[-1] is DeepCopyOp
    a = np.arange(5.0)
    out = f(a)
    np.testing.assert_array_equal(out, a[1:])
    assert not np.shares_memory(out, a)


def test_a_folded_constant_output_is_a_fresh_copy_at_each_call():
    f = A.function([], T.constant(np.array([1.0, 2.0])) * 2)
    assert _ops(f) == [DeepCopyOp]
    first = f()
    first[0] = 100.0
    np.testing.assert_array_equal(f(), [2.0, 4.0])


def test_computed_and_borrowed_outputs_get_no_copy_node():
    x = T.vector("x")
    assert DeepCopyOp not in _ops(A.function([x], x * 2))
    assert _ops(A.function([In(x, borrow=True)], Out(x, borrow=True))) == []
    a = np.arange(3.0)
    assert A.function([In(x, borrow=True)], Out(x, borrow=True))(a) is a


def test_a_shared_value_returned_is_copied_unless_borrowed():
    s = A.shared(np.arange(3.0))
    f = A.function([], s)
    assert _ops(f) == [DeepCopyOp]
    out = f()
    out[0] = 50.0
    assert s.get_value()[0] == 0.0
    assert _ops(A.function([], Out(s, borrow=True))) == []
