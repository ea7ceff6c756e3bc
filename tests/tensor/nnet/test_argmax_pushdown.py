"""``local_argmax_pushdown``: the argmax (argmin) of a softmax along its axis, or of a strictly
increasing map along any axes, is taken of the input, so predictions skip the softmax. Values
against numpy; the cases that must stay (other axes, maps that are not increasing)."""
from __future__ import annotations

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.compat.theano.optdb import optdb
from arignote.compile.mode import OPT_FAST_RUN
from arignote.graph.fg import FunctionGraph
from arignote.tensor import nnet
from arignote.tensor.nnet.basic import LogSoftmax, Softmax
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.reduction import Argmax

RNG = np.random.RandomState(3)


def compiled(inputs, out):
    f = arignote.function(inputs, out)
    return f, [n.op for n in f.maker.fgraph.toposort()]


def test_predictions_skip_the_softmax():
    x, b = T.matrix("x"), T.vector("b")
    f, ops = compiled([x, b], T.argmax(nnet.softmax(T.dot(x, x.T) + b), axis=1))
    assert not any(isinstance(op, Softmax) for op in ops)
    xv, bv = RNG.randn(4, 4), RNG.randn(4)
    assert np.array_equal(f(xv, bv), np.argmax(xv @ xv.T + bv, axis=1))


@pytest.mark.parametrize("make", [nnet.log_softmax, lambda z: nnet.softmax_with_bias(z, T.zeros_like(z[0]))])
def test_log_softmax_and_softmax_with_bias(make):
    x = T.matrix("x")
    f, ops = compiled([x], [T.argmax(make(x), axis=-1), T.argmin(make(x), axis=1)])
    assert not any(isinstance(op, (Softmax, LogSoftmax)) for op in ops)
    xv = RNG.randn(5, 7)
    big, small = f(xv)
    assert np.array_equal(big, xv.argmax(1)) and np.array_equal(small, xv.argmin(1))


@pytest.mark.parametrize("fn", [T.exp, nnet.sigmoid, nnet.softplus, T.tanh])
def test_increasing_maps_along_any_axes(fn):
    x = T.tensor3("x")
    f, ops = compiled([x], [T.argmax(fn(x)), T.argmax(fn(x), axis=(0, 2)), T.argmin(fn(x), axis=1)])
    assert not any(isinstance(op, Elemwise) for op in ops)
    xv = RNG.randn(3, 4, 5)
    whole, pair, least = f(xv)
    assert whole == xv.argmax()
    assert np.array_equal(pair, xv.transpose(1, 0, 2).reshape(4, -1).argmax(1))
    assert np.array_equal(least, xv.argmin(1))


def test_saturated_sigmoid_gives_the_largest_input():
    x = T.vector("x", dtype="float32")
    f, _ = compiled([x], T.argmax(nnet.sigmoid(x)))
    assert f(np.array([40.0, 41.0, -3.0], dtype="float32")) == 1  # sigmoid rounds both to 1.0


def test_what_must_stay():
    x = T.matrix("x")
    across_rows = T.argmax(nnet.softmax(x), axis=0)  # probabilities of different rows
    not_increasing = T.argmax(T.sqr(x), axis=1)
    f, ops = compiled([x], [across_rows, not_increasing])
    assert any(isinstance(op, Softmax) for op in ops)
    xv = np.array([[10.0, 9.0], [0.0, -5.0]])
    e = np.exp(xv - xv.max(1, keepdims=True))
    by_column, squares = f(xv)
    assert np.array_equal(by_column, (e / e.sum(1, keepdims=True)).argmax(0))
    assert not np.array_equal(by_column, xv.argmax(0))
    assert np.array_equal(squares, (xv ** 2).argmax(1))


@pytest.mark.parametrize("form", ["exp / sum", "exp / sum of another exp", "shifted"])
def test_the_written_out_softmax_is_read_too(form):
    x = T.matrix("x")
    w = x - x.max(axis=1, keepdims=True) if form == "shifted" else x
    e = T.exp(w)
    total = (T.exp(w) if form == "exp / sum of another exp" else e).sum(axis=1, keepdims=True)
    f, ops = compiled([x], T.argmax(e / total, axis=1))
    assert not any(isinstance(op, Softmax) for op in ops)
    assert not any(isinstance(op, Elemwise) and op.scalar_op.name in ("exp", "true_div") for op in ops)
    xv = RNG.randn(5, 6) * 800  # exp overflows: the written-out ratio is NaN, argmax of it garbage
    assert np.array_equal(f(xv), xv.argmax(1))


def test_the_theano_query_pushes_below_sigmoid_tanh_exp_and_softmax():
    x = T.matrix("x")
    for sm in (nnet.softmax_graph, nnet.softmax):
        fgraph = FunctionGraph([x], [T.argmax(sm(T.exp(T.tanh(nnet.sigmoid(x)))), axis=-1)])
        optdb.query(OPT_FAST_RUN).optimize(fgraph)
        nodes = fgraph.toposort()
        assert len(nodes) == 1 and isinstance(nodes[0].op, Argmax) and nodes[0].inputs == fgraph.inputs
