"""Log-losses of a softmax in every form users write (the op, Theano's instances,
``SoftmaxWithBias``, ``exp(x) / sum(exp(x))`` with or without the maximum subtracted) are
computed as ``log_softmax`` of the logits, in value and in gradient (``nnet.softmax_logits``
reads the logits for the rewrites and the gradients' stable forms). Values against a float64
numpy reference computed stably, gradients by finite differences, and logits of +-1000, where
the written-out graphs give inf / NaN, finite."""
from __future__ import annotations

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor import nnet
from arignote.tensor.nnet.basic import LogSoftmax, Softmax, softmax_logits
from tests.utils import NUMPY_FP_WARNINGS_ONLY

pytestmark = NUMPY_FP_WARNINGS_ONLY

RNG = np.random.RandomState(7)
B = np.array([0.5, -2.0, 1.0, 0.0])  # the bias of the biased forms (4 classes)


def _hand(z):
    e = T.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _hand_shifted(z):
    e = T.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1).dimshuffle(0, "x")


# form -> (softmax of the matrix z, the logits numpy sees for the values of z)
FORMS = {
    "softmax": (nnet.softmax, lambda v: v),
    "softmax_op": (nnet.softmax_op, lambda v: v),
    "softmax(x + b)": (lambda z: nnet.softmax(z + B), lambda v: v + B),
    "softmax_with_bias": (lambda z: nnet.softmax_with_bias(z, B), lambda v: v + B),
    "SoftmaxWithBias()": (lambda z: nnet.SoftmaxWithBias()(z, T.constant(B)), lambda v: v + B),
    "exp / sum": (_hand, lambda v: v),
    "exp(x - max) / sum": (_hand_shifted, lambda v: v),
}
LABELS = np.array([1, 3, 0])


def _log_softmax(v):
    shifted = v - v.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


# loss -> (graph of the probabilities p and the labels y, numpy of the reference log-softmax)
LOSSES = {
    "log(p)": (lambda p, y: T.log(p).sum(), lambda ls: ls.sum()),
    "-log(p)[rows, y]": (lambda p, y: -T.log(p)[T.arange(y.shape[0]), y].mean(),
                         lambda ls: -ls[np.arange(3), LABELS].mean()),
    "-log(p[rows, y])": (lambda p, y: -T.log(p[T.arange(y.shape[0]), y]).mean(),
                         lambda ls: -ls[np.arange(3), LABELS].mean()),
    "categorical_crossentropy(p, y)": (lambda p, y: nnet.categorical_crossentropy(p, y).mean(),
                                       lambda ls: -ls[np.arange(3), LABELS].mean()),
    "categorical_crossentropy(p, one-hot)": (
        lambda p, y: nnet.categorical_crossentropy(p, T.eye(4)[y]).mean(),
        lambda ls: -ls[np.arange(3), LABELS].mean()),
    "categorical_crossentropy(p, soft)": (
        lambda p, y: nnet.categorical_crossentropy(p, T.constant(np.full((3, 4), 0.25))).sum(),
        lambda ls: -(0.25 * ls).sum()),
    "crossentropy_categorical_1hot(p, y)": (lambda p, y: nnet.crossentropy_categorical_1hot(p, y).sum(),
                                            lambda ls: -ls[np.arange(3), LABELS].sum()),
}


def _loss(form, loss):
    x, y = T.matrix("x"), T.lvector("y")
    return x, y, LOSSES[loss][0](FORMS[form][0](x), y)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("form", FORMS)
def test_values_and_gradients_are_finite_for_huge_logits(form, loss):
    x, y, cost = _loss(form, loss)
    f = arignote.function([x, y], [cost, T.grad(cost, x)], on_unused_input="ignore")
    v = np.array([[1000.0, -1000.0, 0.0, 3.0], [-1000.0, 2.0, 1000.0, 999.0], [0.0, 0.0, -1000.0, 0.0]])
    got, g = f(v, LABELS)
    np.testing.assert_allclose(got, LOSSES[loss][1](_log_softmax(FORMS[form][1](v))), rtol=1e-12)
    assert np.all(np.isfinite(g))


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("form", FORMS)
def test_gradients_match_finite_differences(form, loss):
    def cost(x):
        return LOSSES[loss][0](FORMS[form][0](x), T.constant(LABELS))
    verify_grad(cost, [RNG.randn(3, 4) * 3], n_tests=1, rng=RNG)


@pytest.mark.parametrize("form", FORMS)
def test_the_compiled_loss_holds_log_softmax_and_no_log(form):
    x, y, cost = _loss(form, "-log(p)[rows, y]")
    ops = [n.op for n in arignote.function([x, y], cost).maker.fgraph.toposort()]
    assert any(isinstance(op, LogSoftmax) for op in ops)
    assert not any(getattr(getattr(op, "scalar_op", None), "name", None) == "log" for op in ops)


def test_the_gradient_reads_no_exp_of_the_written_out_softmax():
    # Differentiated as softmax(x): the gradient graph never computes exp(x) itself.
    x = T.matrix("x")
    g = T.grad((_hand(x) * RNG.randn(3, 4)).sum(), x)
    v = np.array([[1000.0, 0, 0, 0], [0, -1000.0, 5.0, 0], [1.0, 2.0, 3.0, 4.0]])
    got = arignote.function([x], g)(v)
    assert np.all(np.isfinite(got))
    verify_grad(lambda z: (_hand(z) * T.constant(np.arange(12.0).reshape(3, 4))).sum(), [RNG.randn(3, 4)],
                n_tests=1, rng=RNG)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vectors_keep_their_dtype(dtype):
    v = T.vector("v", dtype=dtype)
    out = T.log(nnet.softmax(v))
    g = T.grad(out[2], v)
    f = arignote.function([v], [out, g])
    value = np.array([1000.0, -1000.0, 0.0], dtype)
    got, grad = f(value)
    assert got.dtype == dtype and grad.dtype == dtype
    np.testing.assert_allclose(got, _log_softmax(value.astype("float64")[None])[0], rtol=1e-6)
    np.testing.assert_allclose(grad, [-1.0, 0.0, 1.0], atol=1e-6)
    # The one-hot cross-entropy of a vector's softmax: one value, its gradient softmax - onehot.
    onehot = np.array([0.0, 1.0, 0.0], dtype)
    cost = nnet.categorical_crossentropy(nnet.softmax(v), onehot)
    got, grad = arignote.function([v], [cost, T.grad(cost, v)])(value)
    np.testing.assert_allclose(got, 2000.0, rtol=1e-6)
    np.testing.assert_allclose(grad, [1.0, -1.0, 0.0], atol=1e-6)


def test_softmax_logits_reads_every_form():
    x, b = T.matrix("x"), T.vector("b")
    for p, axis in ((nnet.softmax(x), 1), (nnet.softmax(x, axis=0), 0), (nnet.softmax_with_bias(x, b), 1),
                    (_hand(x), 1), (T.exp(x) / T.exp(x).sum(axis=0, keepdims=True), 0),
                    (T.exp(x) / T.exp(x).sum(axis=1).dimshuffle(0, "x"), 1)):
        found = softmax_logits(p)
        assert found is not None and found.axis == axis
    biased = softmax_logits(nnet.softmax_with_bias(x, b))
    assert biased.sources == [x, b]
    np.testing.assert_allclose(biased.z.eval({x: np.ones((2, 3)), b: np.arange(3.0)}), 1 + np.tile(np.arange(3.0), (2, 1)))
    # Not softmaxes: a sum over the other axis, another numerator, a plain division.
    for p in (T.exp(x) / T.exp(x).sum(axis=0, keepdims=True).T, T.exp(x) / T.exp(x + 1).sum(axis=1, keepdims=True),
              x / x.sum(axis=1, keepdims=True), T.exp(x)):
        assert softmax_logits(p) is None


def test_crossentropy_categorical_1hot_is_theano_s_op_instance():
    x, y = T.matrix("x"), T.lvector("y")
    out = nnet.crossentropy_categorical_1hot(nnet.softmax(x), y)
    assert out.owner.op == nnet.crossentropy_categorical_1hot
    assert isinstance(out.owner.op, nnet.CrossentropyCategorical1Hot)
    with pytest.raises(ValueError, match="class indices"):
        arignote.function([x, y], out)(np.zeros((2, 3)), np.array([0, 3]))


def test_a_plain_matrix_of_probabilities_keeps_the_textbook_log():
    # Not a softmax: the loss is -log(p) at the labels, and its gradient -1 / p.
    p, y = T.matrix("p"), T.lvector("y")
    cost = nnet.crossentropy_categorical_1hot(p, y).sum()
    f = arignote.function([p, y], [cost, T.grad(cost, p)])
    value = np.array([[0.2, 0.8], [0.5, 0.5]])
    got, g = f(value, np.array([1, 0]))
    np.testing.assert_allclose(got, -np.log(0.8) - np.log(0.5))
    np.testing.assert_allclose(g, [[0, -1 / 0.8], [-1 / 0.5, 0]])
    assert not any(isinstance(n.op, Softmax) for n in arignote.function([p, y], cost).maker.fgraph.toposort())
