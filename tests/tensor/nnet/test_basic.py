"""Theano's names of the softmax ops in tensor.nnet.basic: ``Softmax()`` / ``LogSoftmax()``
with no axis (the last), the instances ``softmax_op`` / ``logsoftmax_op``, and the plain
``softmax_graph``; against scipy, over ranks and dtypes, with finite-difference gradients."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.special as sp

from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.graph.traversal import io_toposort
from arignote.tensor import nnet
from tests.utils import assert_matches, check_infer_shape, run, value, var_for

SHAPES = [(5,), (3, 4), (2, 3, 4), (1, 1)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_default_axis_is_the_last(shape, dtype):
    v = value(shape, dtype)
    x = var_for(v)
    for op, reference in ((nnet.Softmax(), sp.softmax), (nnet.softmax_op, sp.softmax),
                          (nnet.LogSoftmax(), sp.log_softmax), (nnet.logsoftmax_op, sp.log_softmax)):
        out = op(x)
        # The node holds the op of the resolved axis: the one the backends and rewrites read.
        assert type(out.owner.op) is type(op) and out.owner.op.axis == len(shape) - 1
        assert out.dtype == dtype and out.broadcastable == x.broadcastable
        assert_matches(run([x], out, v), reference(v.astype("float64"), axis=-1).astype(dtype))
        check_infer_shape([x], out, [v])


def test_theano_instances_compare_and_pickle():
    assert nnet.softmax_op == nnet.Softmax() == nnet.Softmax(-1) != nnet.Softmax(1)
    assert nnet.logsoftmax_op == nnet.LogSoftmax()
    assert pickle.loads(pickle.dumps(nnet.softmax_op)) == nnet.softmax_op
    x = T.matrix("x")
    assert nnet.softmax_op(x).owner.op == nnet.softmax(x).owner.op == nnet.Softmax(1)


def test_negative_axes_resolve_and_bad_axes_name_the_input():
    x = T.tensor3("x")
    assert nnet.Softmax(-2)(x).owner.op.axis == 1
    v = value((2, 3, 4))
    assert_matches(run([x], nnet.LogSoftmax(-3)(x), v), sp.log_softmax(v, axis=0))
    with pytest.raises(ValueError, match="softmax along axis -4 of 'x', which has 3 dimensions"):
        nnet.Softmax(-4)(x)
    with pytest.raises(ValueError, match="logsoftmax along axis 3 of 'x'"):
        nnet.LogSoftmax(3)(x)


@pytest.mark.parametrize("shape", SHAPES)
def test_gradients_of_the_theano_instances(shape):
    v = value(shape) / 5
    verify_grad(nnet.softmax_op, [v], n_tests=1)
    verify_grad(nnet.logsoftmax_op, [v], n_tests=1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_graph_is_the_plain_graph(shape, dtype):
    v = (value(shape) / 5).astype(dtype)
    x = var_for(v)
    out = nnet.softmax_graph(x)
    assert out.dtype == dtype and out.ndim == len(shape)
    assert not any(isinstance(n.op, nnet.Softmax) for n in io_toposort([], [out]))
    assert_matches(run([x], out, v), sp.softmax(v.astype("float64"), axis=-1).astype(dtype))
    verify_grad(nnet.softmax_graph, [v.astype("float64")], n_tests=1)


def test_softmax_graph_compiles_to_the_stable_op():
    """Theano's softmax_graph is the graph exp(c) / sum(exp(c)); stabilization makes it the
    softmax op once compiled (as Theano's softmax_simplifier did), so large logits give no NaN."""
    x = T.matrix("x")
    v = np.array([[1e4, 0.0]])
    assert_matches(run([x], nnet.softmax_graph(x), v), np.array([[1.0, 0.0]]))

