"""Training with grad and updates against numpy, and gradients that stay finite where
probabilities saturate."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, softmax as np_softmax

from arignote import function, shared, tensor as T
from arignote.gradient import grad
from arignote.tensor.nnet import binary_crossentropy, categorical_crossentropy, sigmoid, softmax


def _data(rng, n=40, feats=5):
    X = rng.normal(size=(n, feats))
    y = (rng.random(n) < expit(X @ rng.normal(size=feats))).astype("float64")
    return X, y


@pytest.mark.parametrize("form", ["theano_tutorial", "sigmoid_bce"])
def test_logistic_regression_matches_numpy(rng, form):
    """Issue 3's acceptance: shared + grad + updates == hand-written numpy steps, to 1e-7."""
    X, Y = _data(rng)
    w0 = rng.normal(size=X.shape[1])
    w, b = shared(w0.copy(), name="w"), shared(0.0, name="b")
    x, y = T.dmatrix("x"), T.dvector("y")
    if form == "theano_tutorial":
        p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
        xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    else:
        p_1 = sigmoid(T.dot(x, w) + b)
        xent = binary_crossentropy(p_1, y)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = grad(cost, [w, b])
    train = function([x, y], [cost, gw, gb], updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])

    w_np, b_np = w0.copy(), 0.0
    for _ in range(30):
        p = expit(X @ w_np + b_np)
        cost_np = np.mean(-Y * np.log(p) - (1 - Y) * np.log(1 - p)) + 0.01 * (w_np ** 2).sum()
        gw_np = X.T @ (p - Y) / len(Y) + 0.02 * w_np
        gb_np = np.mean(p - Y)
        cost_v, gw_v, gb_v = train(X, Y)
        np.testing.assert_allclose(cost_v, cost_np, rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(gw_v, gw_np, rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(gb_v, gb_np, rtol=1e-7, atol=1e-7)
        w_np, b_np = w_np - 0.1 * gw_np, b_np - 0.1 * gb_np
        np.testing.assert_allclose(w.get_value(), w_np, rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(b.get_value(), b_np, rtol=1e-7, atol=1e-7)


SATURATED = np.array([-1000.0, -800.0, -40.0, -1.0, 0.0, 1.0, 40.0, 800.0, 1000.0])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("target", [0.0, 1.0, 0.3])
def test_binary_crossentropy_of_saturated_sigmoid_has_finite_gradient(dtype, target):
    x = T.vector("x", dtype=dtype)
    g = grad(binary_crossentropy(sigmoid(x), target).sum(), x)
    got = function([x], g)(SATURATED.astype(dtype))
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expit(SATURATED) - target, rtol=1e-5, atol=1e-6)


def test_log_sigmoid_gradients_are_finite():
    x = T.dvector("x")
    g1 = grad(T.log(sigmoid(x)).sum(), x)
    g2 = grad(T.log(1 - sigmoid(x)).sum(), x)
    got1, got2 = function([x], [g1, g2])(SATURATED)
    np.testing.assert_allclose(got1, expit(-SATURATED), atol=1e-12)
    np.testing.assert_allclose(got2, -expit(SATURATED), atol=1e-12)


def test_stable_form_leaves_other_paths_alone():
    # sigmoid(x) is also used directly: that path still goes through its own rule.
    x = T.dvector("x")
    s = sigmoid(x)
    g = grad((T.log(s) + 3 * s).sum(), x)
    xv = np.array([-2.0, 0.5, 3.0])
    np.testing.assert_allclose(function([x], g)(xv),
                               expit(-xv) + 3 * expit(xv) * expit(-xv), rtol=1e-12)
    # Asking for the gradient at the skipped intermediate still works.
    gs = grad(T.log(s).sum(), s)
    np.testing.assert_allclose(function([x], gs)(xv), 1 / expit(xv), rtol=1e-12)


@pytest.mark.parametrize("targets", ["one_hot", "indices"])
def test_categorical_crossentropy_of_huge_logits_has_finite_gradient(targets):
    x = T.dmatrix("x")
    logits = np.array([[1e4, 0.0, -1e4], [0.0, 2e4, 1.0], [3.0, 1.0, 2.0]])
    labels = np.array([2, 0, 1])
    t = np.eye(3)[labels] if targets == "one_hot" else labels
    g = grad(categorical_crossentropy(softmax(x), t).sum(), x)
    got = function([x], g)(logits)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, np_softmax(logits, axis=1) - np.eye(3)[labels], atol=1e-12)


def test_softmax_and_log_softmax_gradients_at_huge_logits():
    x = T.dmatrix("x")
    logits = np.array([[1e4, 0.0, -1e4], [5.0, 5.0, 5.0]])
    w = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]])
    g_sm = grad((softmax(x) * w).sum(), x)
    g_lsm = grad((T.nnet.log_softmax(x) * w).sum(), x)
    got_sm, got_lsm = function([x], [g_sm, g_lsm])(logits)
    sm = np_softmax(logits, axis=1)
    np.testing.assert_allclose(got_sm, sm * (w - (w * sm).sum(axis=1, keepdims=True)), atol=1e-12)
    np.testing.assert_allclose(got_lsm, w - sm * w.sum(axis=1, keepdims=True), atol=1e-12)
