"""nnet.ctc against a brute-force reference written here: the probability of a label
sequence is the sum, over every path of symbols (one per step), of the product of the
steps' softmax probabilities, for the paths that collapse (merge repeats, drop blanks)
to the labels. Costs in float64 and float32, padding, per-entry lengths, repeated
labels, impossible labels; the gradient by finite differences (verify_grad)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import arignote.tensor as T
from arignote import function, shared
from arignote.gradient import grad, verify_grad
from arignote.tensor.nnet.ctc import ConnectionistTemporalClassification, ctc, ctc_available


def _collapse(path):
    merged = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
    return [k for k in merged if k != 0]


def ref_ctc(acts, labels, lengths):
    costs = []
    for b in range(acts.shape[1]):
        x = acts[:lengths[b], b].astype(np.float64)
        probs = np.exp(x - x.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        target = [int(k) for k in labels[b] if k >= 0]
        total = sum(np.prod([probs[t, k] for t, k in enumerate(path)])
                    for path in itertools.product(range(x.shape[1]), repeat=len(x))
                    if _collapse(path) == target)
        costs.append(-np.log(total) if total > 0 else np.inf)
    return np.array(costs)


CASES = [  # (steps, batch, symbols, labels, lengths)
    (3, 2, 3, [[1, 2], [2, -1]], [3, 3]),
    (4, 3, 3, [[1, 1], [2, -1], [-1, -1]], [4, 2, 3]),   # a repeat, padding, no label at all
    (4, 1, 4, [[3, 1, 2]], [4]),
    (2, 2, 3, [[1, 1], [1, 2]], [2, 2]),                  # [1, 1] needs 3 steps: impossible
]


@pytest.mark.parametrize("steps, batch, symbols, labels, lengths", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_costs_match_the_sum_over_alignments(steps, batch, symbols, labels, lengths, dtype):
    rng = np.random.default_rng(steps * 10 + batch)
    acts = (rng.normal(size=(steps, batch, symbols)) * 2).astype(dtype)
    labels, lengths = np.array(labels, np.int32), np.array(lengths, np.int32)
    a, lab, n = T.tensor3("a", dtype=dtype), T.imatrix("labels"), T.ivector("lengths")
    cost = ctc(a, lab, n)
    assert cost.dtype == dtype and cost.ndim == 1
    got, shape = function([a, lab, n], [cost, cost.shape])(acts, labels, lengths)
    want = ref_ctc(acts, labels, lengths)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "float32" else 1e-12)
    assert tuple(shape) == (batch,)


def test_gradient_by_finite_differences_and_zero_past_each_length():
    rng = np.random.default_rng(5)
    labels, lengths = np.array([[1, 2, -1], [2, 2, 1]], np.int32), np.array([3, 5], np.int32)
    weights = np.array([0.7, -1.3])

    def cost(acts):
        return ctc(acts, shared(labels), shared(lengths)) * weights
    acts = rng.normal(size=(5, 2, 4))
    verify_grad(cost, [acts], rng=np.random.RandomState(1))
    a = T.dtensor3("a")
    g = function([a], grad(ctc(a, labels, lengths).sum(), a))(acts)
    np.testing.assert_array_equal(g[3:, 0], 0)   # entry 0 runs 3 steps only
    np.testing.assert_allclose(g.sum(axis=2), 0, atol=1e-12)  # softmax minus a posterior


def test_long_sequences_do_not_underflow():
    steps = 400
    acts = np.zeros((steps, 1, 3))
    labels = np.array([[1, 2] * 50], np.int32)
    a, n = T.dtensor3("a"), np.array([steps], np.int32)
    cost, g = function([a], [ctc(a, labels, n), grad(ctc(a, labels, n).sum(), a)])(acts)
    assert np.isfinite(cost).all() and cost[0] > 100 and np.isfinite(g).all()


def test_the_gradient_is_computed_only_when_used():
    a, lab, n = T.dtensor3("a"), T.imatrix("labels"), T.ivector("lengths")
    cost = ctc(a, lab, n)
    for outputs, wanted in (([cost], [False]), ([cost, grad(cost.sum(), a)], [True])):
        f = function([a, lab, n], outputs)
        ops = [node.op for node in f.maker.fgraph.apply_nodes
               if isinstance(node.op, ConnectionistTemporalClassification)]
        assert [op.compute_grad for op in ops] == wanted
        acts = np.random.default_rng(0).normal(size=(3, 1, 3))
        np.testing.assert_allclose(f(acts, np.array([[1]], np.int32), np.array([3], np.int32))[0],
                                   ref_ctc(acts, [[1]], [3]), rtol=1e-12)


def test_compute_grad_false_and_bad_inputs():
    a, lab, n = T.tensor3("a"), T.imatrix("labels"), T.ivector("lengths")
    op = ConnectionistTemporalClassification(compute_grad=False)
    cost = op(a, lab, n)
    with pytest.raises(TypeError, match="compute_grad=False"):
        grad(cost.sum(), a)
    assert ctc_available()
    with pytest.raises(TypeError, match="labels .* must be int32"):
        ctc(a, T.lmatrix("l64"), n)
    with pytest.raises(ValueError, match="activations .* must have 3"):
        ctc(T.matrix("m"), lab, n)
    f = function([a, lab, n], ctc(a, lab, n))
    with pytest.raises(ValueError, match=r"input_lengths \[4\] must be in \[0, 3\]"):
        f(np.zeros((3, 1, 2), a.dtype), np.ones((1, 1), np.int32), np.array([4], np.int32))


def test_an_impossible_label_costs_inf_with_a_zero_gradient():
    a = T.dtensor3("a")
    labels, lengths = np.array([[1, 1], [1, -1]], np.int32), np.array([2, 2], np.int32)
    cost = ctc(a, labels, lengths)
    got, g = function([a], [cost, grad(cost[0], a)])(np.random.default_rng(2).normal(size=(2, 2, 3)))
    assert got[0] == np.inf and np.isfinite(got[1])
    np.testing.assert_array_equal(g, 0)
