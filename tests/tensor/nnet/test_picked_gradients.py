"""The gradient of one picked (log-)probability per row, as in the negative log-likelihood
``-log_softmax(z)[arange(n), y]``: its class sums are scattered, not summed over every class.
Values against numpy's ``(softmax - onehot) / n`` and finite differences, for repeated and
missing rows, broadcast increments and the plain softmax path."""
from __future__ import annotations

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor import nnet
from arignote.tensor.reduction import CAReduce
from tests.utils import assert_matches

RNG = np.random.RandomState(7)


def np_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def nll_grad_reference(z, rows, labels, weights):
    """d/dz of sum_i weights[i] * log_softmax(z)[rows[i], labels[i]]."""
    g = np.zeros_like(z)
    np.add.at(g, (rows, labels), weights)
    return g - np_softmax(z) * g.sum(axis=1, keepdims=True)


def class_axis_sums(f) -> list:
    """The reductions over axis 1 (alone, or fused with the elementwise map they read)."""
    reducers = [getattr(n.op, "reducer", n.op) for n in f.maker.fgraph.toposort()]
    return [r for r in reducers if isinstance(r, CAReduce) and r.axis == (1,)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mean_nll_gradient_has_no_pass_over_the_classes(dtype):
    z, y = T.matrix("z", dtype=dtype), T.lvector("y")
    cost = -T.mean(T.log(nnet.softmax(z))[T.arange(y.shape[0]), y])
    f = arignote.function([z, y], arignote.grad(cost, z))
    assert not class_axis_sums(f)
    zv, yv = RNG.randn(6, 5).astype(dtype), RNG.randint(0, 5, 6)
    got = f(zv, yv)
    assert got.dtype == dtype
    expected = (np_softmax(zv.astype("float64")) - np.eye(5)[yv]) / 6
    assert_matches(got, expected.astype(dtype))


def test_repeated_and_missing_rows_and_a_broadcast_increment():
    z, rows, labels = T.matrix("z"), T.lvector("rows"), T.lvector("labels")
    picked = nnet.log_softmax(z)[rows, labels]
    f = arignote.function([z, rows, labels], arignote.grad(T.sum(picked) * 3.0, z))
    zv = RNG.randn(4, 6)
    r, c = np.array([0, 0, 2, 2, 2]), np.array([1, 1, 0, 5, 3])  # rows 1 and 3 untouched
    assert_matches(f(zv, r, c), nll_grad_reference(zv, r, c, np.full(5, 3.0)))


def test_per_row_weights_and_large_logits_stay_finite():
    z, y, w = T.matrix("z"), T.lvector("y"), T.vector("w")
    cost = -T.sum(w * nnet.log_softmax(z)[T.arange(y.shape[0]), y])
    f = arignote.function([z, y, w], arignote.grad(cost, z))
    zv, yv, wv = RNG.randn(5, 4) * 1e3, RNG.randint(0, 4, 5), RNG.rand(5)
    got = f(zv, yv, wv)
    assert np.isfinite(got).all()
    assert_matches(got, -nll_grad_reference(zv, np.arange(5), yv, wv))


def test_softmax_path_scatters_the_weighted_sums():
    z, y = T.matrix("z"), T.lvector("y")
    picked = nnet.softmax(z)[T.arange(y.shape[0]), y]
    f = arignote.function([z, y], arignote.grad(T.sum(T.sqr(picked)), z))
    assert not class_axis_sums(f)
    zv, yv = RNG.randn(5, 3), RNG.randint(0, 3, 5)
    sm = np_softmax(zv)
    gz = np.zeros_like(zv)
    gz[np.arange(5), yv] = 2 * sm[np.arange(5), yv]
    assert_matches(f(zv, yv), (gz - (gz * sm).sum(axis=1, keepdims=True)) * sm)


def test_finite_differences():
    yv = np.array([2, 0, 2, 1])
    verify_grad(lambda z: -T.mean(nnet.log_softmax(z)[np.arange(4), yv]), [RNG.randn(4, 3)], rng=RNG)
    verify_grad(lambda z: T.sum(T.sqr(nnet.softmax(z)[np.arange(4), yv])), [RNG.randn(4, 3)], rng=RNG)


def test_other_gradients_still_sum_over_the_classes():
    z = T.matrix("z")
    f = arignote.function([z], arignote.grad(T.sum(T.sqr(nnet.log_softmax(z))), z))
    assert class_axis_sums(f)
    zv = RNG.randn(3, 4)
    ls = np.log(np_softmax(zv))
    g = 2 * ls
    assert_matches(f(zv), g - np_softmax(zv) * g.sum(axis=1, keepdims=True))
