"""Copies of compiled functions: ``f.copy()`` and ``copy.copy(f)`` share the shared
variables (Theano's copy); ``copy.deepcopy`` of objects holding functions and their
shared variables gives an independent model whose functions use its own copies."""
from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np

from arignote import config, function, grad, scan, shared, tensor as T
from arignote.compile.executor import Function


def test_copy_copy_is_theanos_copy():
    s = shared(np.float64(0), "s")
    f = function([], s * 1, updates={s: s + 1}, name="step")
    g = copy.copy(f)
    assert isinstance(g, Function) and g is not f and g.name == "step copy"
    g()
    f()
    assert s.get_value() == 2
    assert f.copy(name="other").name == "other"


def test_a_swapped_copy_can_be_swapped_again():
    a, b, c = (shared(np.float64(v), n) for v, n in ((1, "a"), (10, "b"), (100, "c")))
    f = function([], a * 2)
    g = f.copy(swap={a: b})
    assert g() == [20] and g.copy()() == [20]  # a copy with swap returns a list (Theano 1.0)
    assert g.copy(swap={b: c})() == [200]


def test_deepcopy_of_a_function_uses_copies_of_its_shared_variables(device):
    w = shared(np.ones(3, dtype="float32"), "w")
    x = T.fvector("x")
    f = function([x], (x * w).sum(), updates={w: w * np.float32(2)})
    g = copy.deepcopy(f)
    assert g(np.ones(3, dtype="float32")) == 3
    assert g(np.ones(3, dtype="float32")) == 6
    np.testing.assert_array_equal(w.get_value(), [1, 1, 1])
    assert f(np.ones(3, dtype="float32")) == 3


def test_deepcopy_maps_a_shared_variable_once_for_its_holder_and_its_functions(device):
    w = shared(np.zeros(2, dtype="float32"), "w")
    holder = {"w": w, "bump": function([], [], updates={w: w + np.float32(1)}),
              "read": function([], w * np.float32(10))}
    twin = copy.deepcopy(holder)
    assert twin["w"] is not w and type(twin["w"]) is type(w)
    twin["bump"]()
    np.testing.assert_array_equal(twin["w"].get_value(), [1, 1])
    np.testing.assert_array_equal(twin["read"](), [10, 10])
    np.testing.assert_array_equal(w.get_value(), [0, 0])
    holder["bump"]()
    np.testing.assert_array_equal(twin["w"].get_value(), [1, 1])


class Elman:
    """The Elman network of DeepLearningTutorials' rnnslu: word embeddings, a scan over
    the sentence, a training function updating every parameter, a normalisation."""

    def __init__(self, nh: int = 5, nc: int = 3, ne: int = 8, de: int = 4, cs: int = 3):
        rng = np.random.RandomState(1)

        def param(name, *shape):
            return shared((0.2 * rng.uniform(-1, 1, shape)).astype(config.floatX), name)

        self.emb, self.wx = param("embeddings", ne + 1, de), param("wx", de * cs, nh)
        self.wh, self.w = param("wh", nh, nh), param("w", nh, nc)
        self.bh, self.b, self.h0 = (shared(np.zeros(n, config.floatX), name)
                                    for name, n in (("bh", nh), ("b", nc), ("h0", nh)))
        self.params = [self.emb, self.wx, self.wh, self.w, self.bh, self.b, self.h0]
        idxs, y, lr = T.imatrix(), T.ivector("y"), T.scalar("lr")
        x = self.emb[idxs].reshape((idxs.shape[0], de * cs))

        def recurrence(x_t, h_tm1):
            h_t = T.nnet.sigmoid(T.dot(x_t, self.wx) + T.dot(h_tm1, self.wh) + self.bh)
            return [h_t, T.nnet.softmax(T.dot(h_t, self.w) + self.b)]

        [_, p], _ = scan(recurrence, sequences=x, outputs_info=[self.h0, None], n_steps=x.shape[0])
        nll = -T.mean(T.log(p)[T.arange(x.shape[0]), y])
        updates = OrderedDict((q, q - lr * g) for q, g in zip(self.params, grad(nll, self.params)))
        self.classify = function([idxs], T.argmax(p, axis=1))
        self.sentence_train = function([idxs, y, lr], nll, updates=updates)
        self.normalize = function([], updates={
            self.emb: self.emb / T.sqrt((self.emb ** 2).sum(axis=1)).dimshuffle(0, "x")})

    def train(self, words, labels, lr):
        cost = self.sentence_train(words, labels, lr)
        self.normalize()
        return cost

    def values(self):
        return [p.get_value() for p in self.params]


WORDS = np.array([[8, 1, 2], [1, 2, 3], [2, 3, 8]], dtype="int32")
LABELS = np.array([0, 2, 1], dtype="int32")


def test_deepcopy_of_an_rnnslu_model_trains_each_side_separately(device):
    with config.change_flags(floatX="float32"):
        model = Elman()
        lr = np.float32(0.5)
        start = model.values()
        best = copy.deepcopy(model)
        costs = [model.train(WORDS, LABELS, lr) for _ in range(4)]
        for before, p in zip(start, best.values()):
            np.testing.assert_array_equal(p, before)  # training the original left the copy alone
        trained = model.values()
        # the copy's functions read and update the copy's parameters: the same four steps
        # from the same start give the same numbers, and leave the original as it is
        assert [best.train(WORDS, LABELS, lr) for _ in range(4)] == costs
        for a, b in zip(best.values(), trained):
            np.testing.assert_array_equal(a, b)
        for a, b in zip(model.values(), trained):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(best.classify(WORDS), model.classify(WORDS))
        used = {id(s.origin) for f in (best.classify, best.sentence_train, best.normalize)
                for s in f.maker.shared_inputs}
        assert used <= {id(p) for p in best.params}
