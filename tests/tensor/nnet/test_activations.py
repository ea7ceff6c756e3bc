"""The rest of Theano's nnet surface against numpy/scipy: relu(x, alpha), elu, selu,
softsign, hard_sigmoid, ultra_fast_sigmoid, softmax_with_bias, the one-hot softmax
cross-entropies, sigmoid_binary_crossentropy and h_softmax; dtypes kept; gradients by
finite differences."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import arignote
from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor import nnet
from tests.utils import assert_matches, run

ALPHA, SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _ultra_fast(x):  # Theano's piecewise tanh approximation, from its documentation
    t = np.abs(x) / 2
    approx = np.where(t < 1.7, 1.5 * t / (1 + t), np.where(t < 3, 0.935409070603099 + 0.0458812946797165 * (t - 1.7),
                                                            0.99505475368673))
    return 0.5 + 0.5 * np.sign(x) * approx


ACTIVATIONS = {
    "relu": (nnet.relu, lambda x: np.maximum(x, 0)),
    "relu-leaky": (lambda x: nnet.relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    "elu": (nnet.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    "elu-alpha": (lambda x: nnet.elu(x, 0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(np.minimum(x, 0)))),
    "selu": (nnet.selu, lambda x: SCALE * np.where(x > 0, x, ALPHA * np.expm1(np.minimum(x, 0)))),
    "softsign": (nnet.softsign, lambda x: x / (1 + np.abs(x))),
    "hard_sigmoid": (nnet.hard_sigmoid, lambda x: np.clip(0.2 * x + 0.5, 0, 1)),
    "ultra_fast_sigmoid": (nnet.ultra_fast_sigmoid, _ultra_fast),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activations_match_numpy(name, dtype):
    fn, reference = ACTIVATIONS[name]
    v = np.concatenate([np.linspace(-8, 8, 33), [-1000.0, 1000.0, 0.0]]).astype(dtype)
    x = T.vector("x", dtype=dtype)
    y = fn(x)
    assert y.dtype == dtype
    assert_matches(run([x], y, v), reference(v.astype(np.float64)).astype(dtype), 1e-5 if dtype == "float32" else None)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_verify_grad_of_activations(name):
    v = np.array([-3.1, -0.7, -0.2, 0.3, 0.9, 2.6])  # away from the kinks
    verify_grad(ACTIVATIONS[name][0], [v], n_tests=1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("alpha", [0, 0.1, 0.3])
def test_relu_gradient_at_zero_is_theanos(alpha, dtype):
    """Theano writes relu as (1 + a) / 2 * x + (1 - a) / 2 * |x|: at exactly 0 its gradient
    is (1 + a) / 2 (0.5 for the plain rectifier), the slopes on either side elsewhere."""
    x = T.vector("x", dtype=dtype)
    y = nnet.relu(x, alpha)
    assert y.dtype == dtype
    grad = run([x], arignote.grad(y.sum(), x), np.array([-2.0, 0.0, 3.0], dtype))
    assert_matches(grad, np.array([alpha, (1 + alpha) / 2, 1.0], dtype))
    ints = T.ivector("i")
    assert nnet.relu(ints).dtype == "int32"
    assert_matches(run([ints], nnet.relu(ints), np.array([-3, 0, 4], "int32")), np.array([0, 0, 4], "int32"))


def test_activation_gradients_stay_finite_for_huge_inputs():
    x = T.vector("x")
    v = np.array([-1e4, 1e4])
    for name in ("elu", "selu", "softsign"):
        grad = run([x], arignote.grad(ACTIVATIONS[name][0](x).sum(), x), v)
        assert np.isfinite(grad).all(), name


def test_one_hot_softmax_crossentropies():
    rng = np.random.default_rng(0)
    xv, bv, yv = rng.standard_normal((5, 4)) * 50, rng.standard_normal(4), rng.integers(0, 4, 5)
    x, b, y = T.matrix("x"), T.vector("b"), T.lvector("y")
    nll, sm = nnet.crossentropy_softmax_1hot(x, y)
    got_nll, got_sm = run([x, y], [nll, sm], xv, yv)
    assert_matches(got_sm, sp.softmax(xv, axis=1))
    assert_matches(got_nll, -sp.log_softmax(xv, axis=1)[np.arange(5), yv])
    nll_b, sm_b = run([x, b, y], list(nnet.crossentropy_softmax_1hot_with_bias(x, b, y)), xv, bv, yv)
    assert_matches(sm_b, sp.softmax(xv + bv, axis=1))
    assert_matches(nll_b, -sp.log_softmax(xv + bv, axis=1)[np.arange(5), yv])
    probs = sp.softmax(xv / 50, axis=1)
    assert_matches(run([x, y], nnet.crossentropy_categorical_1hot(x, y), probs, yv),
                   -np.log(probs[np.arange(5), yv]))
    verify_grad(lambda x, b: nnet.crossentropy_softmax_1hot_with_bias(x, b, yv)[0], [xv / 50, bv], n_tests=1)
    grad = run([x, y], arignote.grad(nll.sum(), x), xv * 100, yv)  # saturated softmax: still finite
    assert np.isfinite(grad).all()
    with pytest.raises(TypeError, match="the targets 'x' must be an integer vector"):
        nnet.crossentropy_softmax_1hot(x, x)


def test_sigmoid_binary_crossentropy():
    rng = np.random.default_rng(1)
    ov, tv = rng.standard_normal(7) * 4, rng.random(7)
    o, t = T.vector("o"), T.vector("t")
    out = nnet.sigmoid_binary_crossentropy(o, t)
    s = sp.expit(ov)
    assert_matches(run([o, t], out, ov, tv), -(tv * np.log(s) + (1 - tv) * np.log(1 - s)))
    verify_grad(nnet.sigmoid_binary_crossentropy, [ov, tv], n_tests=1)
    huge = run([o, t], out, np.array([1e4, -1e4]), np.array([0.0, 1.0]))
    assert_matches(huge, np.array([1e4, 1e4]))
    # At a zero logit the gradient is sigmoid(0) - target exactly, as zero-initialised layers need.
    g = run([o, t], arignote.grad(out.sum(), o), np.zeros(3), np.array([0.0, 0.25, 1.0]))
    assert_matches(g, np.array([0.5, 0.25, -0.5]))
    f32 = nnet.sigmoid_binary_crossentropy(T.fvector("a"), T.fvector("b"))
    assert f32.dtype == "float32"


def _h_softmax_reference(xv, W1, b1, W2, b2, n_outputs):
    classes = sp.softmax(xv @ W1 + b1, axis=1)
    within = sp.softmax(np.einsum("bf,cfo->bco", xv, W2) + b2, axis=2)
    return (classes[:, :, None] * within).reshape(len(xv), -1)[:, :n_outputs]


def test_h_softmax():
    rng = np.random.default_rng(2)
    batch, features, n_classes, per_class, n_outputs = 4, 5, 3, 4, 11
    values = [rng.standard_normal((batch, features)), rng.standard_normal((features, n_classes)),
              rng.standard_normal(n_classes), rng.standard_normal((n_classes, features, per_class)),
              rng.standard_normal((n_classes, per_class))]
    x, W1, b1, W2, b2 = T.matrix("x"), T.matrix("W1"), T.vector("b1"), T.tensor3("W2"), T.matrix("b2")
    target = T.lvector("target")
    full = nnet.h_softmax(x, batch, n_outputs, n_classes, per_class, W1, b1, W2, b2)
    expected = _h_softmax_reference(*values, n_outputs)
    assert_matches(run([x, W1, b1, W2, b2], full, *values), expected)
    tv = rng.integers(0, n_outputs, batch)
    picked = nnet.h_softmax(x, batch, n_outputs, n_classes, per_class, W1, b1, W2, b2, target)
    assert_matches(run([x, W1, b1, W2, b2, target], picked, *values, tv), expected[np.arange(batch), tv])
    verify_grad(lambda *a: nnet.h_softmax(a[0], batch, n_outputs, n_classes, per_class, *a[1:], tv),
                values, n_tests=1)
