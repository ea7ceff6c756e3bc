"""as_op: a numpy function as an op (values, several outputs, infer_shape, checked
results, no views of inputs, pickling by name, errors)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import arignote
from arignote import as_op, function, tensor as T
from arignote.compile.ops import FromFunctionOp


def _dot_shape(node, input_shapes):
    a, b = input_shapes
    return [a[:-1] + b[-1:]]


@as_op(itypes=[T.fmatrix, T.fmatrix], otypes=[T.fmatrix], infer_shape=_dot_shape)
def numpy_dot(a, b):
    return np.dot(a, b)


@as_op(itypes=[T.dvector], otypes=[T.dvector, T.lscalar])
def sort_and_argmax(v):
    return np.sort(v), np.argmax(v)


@as_op(itypes=T.dvector, otypes=T.fvector)
def wrong_dtype(v):
    return v * 2  # float64, declared float32


@as_op(itypes=[T.dvector], otypes=[T.dvector])
def same_array(v):
    return v


def test_values_and_several_outputs():
    x, y = T.fmatrices("x", "y")
    a, b = np.random.default_rng(0).random((2, 5, 4), dtype=np.float32)
    np.testing.assert_allclose(function([x, y], numpy_dot(x, y.T))(a, b), a @ b.T, rtol=1e-6)
    v = T.dvector("v")
    values = np.array([3.0, -1.0, 7.0, 2.0])
    ordered, where = function([v], list(sort_and_argmax(v)))(values)
    np.testing.assert_array_equal(ordered, np.sort(values))
    assert where == 2 and where.dtype == np.int64
    assert isinstance(numpy_dot, FromFunctionOp) and str(numpy_dot) == "FromFunctionOp{numpy_dot}"


def test_infer_shape_keeps_the_op_out_of_a_shape_graph():
    x, y = T.fmatrices("x", "y")
    f = function([x, y], numpy_dot(x, y).shape)
    assert not any(isinstance(n.op, FromFunctionOp) for n in f.maker.fgraph.toposort())
    assert tuple(f(np.ones((2, 3), np.float32), np.ones((3, 5), np.float32))) == (2, 5)
    v = T.dvector("v")
    g = function([v], sort_and_argmax(v)[0].shape)  # no infer_shape: the op runs
    assert any(isinstance(n.op, FromFunctionOp) for n in g.maker.fgraph.toposort())
    assert tuple(g(np.ones(4))) == (4,)


def test_results_are_checked_and_never_views_of_inputs():
    v = T.dvector("v")
    with pytest.raises(TypeError, match=r"output 0 of wrong_dtype expects .*float32.*declare otypes\[0\]"):
        function([v], wrong_dtype(v))(np.ones(3))
    values = np.arange(3.0)
    out = function([v], same_array(v))(values)
    np.testing.assert_array_equal(out, values)
    assert not np.may_share_memory(out, values)


def test_no_gradient():
    v = T.dvector("v")
    with pytest.raises(NotImplementedError, match="no gradient is defined for FromFunctionOp"):
        arignote.grad(same_array(v).sum(), v)


def test_pickles_by_its_name():
    copy = pickle.loads(pickle.dumps(numpy_dot))
    assert copy is numpy_dot
    x, y = T.fmatrices("x", "y")
    f = pickle.loads(pickle.dumps(function([x, y], numpy_dot(x, y))))
    a = np.ones((2, 2), np.float32)
    np.testing.assert_array_equal(f(a, a), a @ a)


def test_bad_declarations_and_inputs():
    with pytest.raises(TypeError, match="itypes must be types such as"):
        as_op(itypes=[T.dvector("v")], otypes=[T.dvector])
    with pytest.raises(TypeError, match="infer_shape must be a callable"):
        as_op(itypes=[T.dvector], otypes=[T.dvector], infer_shape=3)
    with pytest.raises(TypeError, match=r"input 0 'm' is .*matrix.*declared with itypes\[0\]"):
        same_array(T.dmatrix("m"))
    with pytest.raises(TypeError, match="takes 1 inputs, got 2"):
        same_array(T.dvector(), T.dvector())
