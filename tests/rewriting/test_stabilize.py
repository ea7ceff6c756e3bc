"""Stabilization: the stable forms replace the naive ones, and the acceptance's numerical checks."""
import warnings

import numpy as np
import pytest
from scipy import special

from arignote import function
from arignote import tensor as T
from arignote.gradient import grad
from arignote.tensor import nnet
from tests.rewriting.rewrite_utils import check_same_values, op_names, phase_mode

STABLE = phase_mode("canonicalize", "stabilize")
rng = np.random.default_rng(0)
x = T.dvector("x")


@pytest.mark.parametrize("build, expected", [
    (lambda: T.log(1 + x), ["log1p"]),
    (lambda: T.log(x + 1), ["log1p"]),
    (lambda: T.exp(x) - 1, ["expm1"]),
    (lambda: T.log(T.sigmoid(x)), ["neg", "softplus", "neg"]),
    (lambda: T.log(1 - T.sigmoid(x)), ["softplus", "neg"]),
    (lambda: T.log(1 + T.exp(x)), ["softplus"]),
    (lambda: T.exp(x) + (-1), ["expm1"]),
    (lambda: T.log1p(-T.sigmoid(x)), ["softplus", "neg"]),
], ids=["log(1+x)", "log(x+1)", "exp(x)-1", "log(sigmoid)", "log(1-sigmoid)", "log(1+exp)",
        "exp(x)+(-1)", "log1p(-sigmoid)"])
def test_stable_forms_replace_the_naive_ones(build, expected):
    f = check_same_values([x], build(), STABLE, [rng.uniform(0.1, 3, 6)])
    assert op_names(f) == expected


def test_log1p_and_expm1_are_accurate_near_zero():
    tiny = np.array([1e-20, 1e-10, -1e-12])
    np.testing.assert_allclose(function([x], T.log(1 + x))(tiny), np.log1p(tiny), rtol=1e-15)
    np.testing.assert_allclose(function([x], T.exp(x) - 1)(tiny), np.expm1(tiny), rtol=1e-15)
    assert function([x], T.log(1 + x))(tiny)[0] == 1e-20


def test_log_sigmoid_is_finite_where_the_sigmoid_saturates():
    big = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    f = function([x], [T.log(T.sigmoid(x)), T.log(1 - T.sigmoid(x))])
    low, high = f(big)
    np.testing.assert_allclose(low, -np.logaddexp(0, -big))
    np.testing.assert_allclose(high, -np.logaddexp(0, big))


def test_log_softmax_replaces_log_of_softmax_and_stays_finite():
    m = T.dmatrix("m")
    f = check_same_values([m], T.log(nnet.softmax(m)), STABLE, [rng.standard_normal((3, 4))])
    assert op_names(f) == ["LogSoftmax"]
    logits = 1e4 + rng.standard_normal((3, 5)) * 1e3
    out = f(logits)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, special.log_softmax(logits, axis=1), rtol=1e-12)


@pytest.mark.parametrize("index, reference", [
    (lambda sm, y: sm[T.arange(y.shape[0]), y], lambda a, y: a[np.arange(len(y)), y]),  # an NLL
    (lambda sm, y: sm[0], lambda a, y: a[0]),
    (lambda sm, y: sm[:, 1], lambda a, y: a[:, 1]),
    (lambda sm, y: sm[y], lambda a, y: a[y]),
], ids=["rows,labels", "row 0", "column 1", "rows y"])
def test_log_of_an_indexed_softmax_is_the_indexed_log_softmax(index, reference):
    m, y = T.dmatrix("m"), T.lvector("y")
    yv = np.array([2, 0, 1])
    f = check_same_values([m, y], -T.log(index(nnet.softmax(m), y)), STABLE, [rng.standard_normal((3, 4)), yv])
    assert "Softmax" not in op_names(f) and "LogSoftmax" in op_names(f)
    logits = np.array([[1e4, 0.0, -1e4, 5.0], [1.0, 2.0, 3.0, 4.0], [-1e4, 1e4, 0.0, 0.0]])
    out = f(logits, yv)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, -reference(special.log_softmax(logits, axis=1), yv), rtol=1e-12)


def test_crossentropy_categorical_1hot_of_a_softmax_is_finite_for_huge_logits():
    m, y = T.dmatrix("m"), T.lvector("y")
    out = function([m, y], nnet.crossentropy_categorical_1hot(nnet.softmax(m), y))(
        np.array([[1e4, 0.0, -1e4]]), np.array([2]))
    np.testing.assert_allclose(out, [2e4])


def test_softmax_of_logits_around_1e4_has_no_nan():
    m = T.dmatrix("m")
    logits = 1e4 + rng.standard_normal((4, 6)) * 10
    out = function([m], nnet.softmax(m))(logits)
    assert not np.isnan(out).any()
    np.testing.assert_allclose(out, special.softmax(logits, axis=1), rtol=1e-12)


_EXP_RATIOS = {
    "sum(1).dimshuffle(0,x)": (2, lambda c: T.exp(c) / T.exp(c).sum(axis=1).dimshuffle(0, "x"), 1),
    "sum(1, keepdims)": (2, lambda c: T.exp(c) / T.exp(c).sum(axis=1, keepdims=True), 1),
    "sum(0) broadcast": (2, lambda c: T.exp(c) / T.exp(c).sum(axis=0), 0),
    "vector": (1, lambda c: T.exp(c) / T.exp(c).sum(), 0),
    "softmax_graph": (2, nnet.softmax_graph, 1),
    "3-d, axis 1": (3, lambda c: T.exp(c) / T.exp(c).sum(axis=1, keepdims=True), 1),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(_EXP_RATIOS))
def test_written_out_softmax_becomes_the_op(name, dtype):
    ndim, build, axis = _EXP_RATIOS[name]
    c = T.tensor(dtype, (False,) * ndim, "c")
    f = check_same_values([c], build(c), STABLE, [rng.standard_normal((3, 4, 2)[:ndim]).astype(dtype)],
                          rtol=1e-5 if dtype == "float32" else 1e-12)
    assert op_names(f) == ["Softmax"] and f.maker.fgraph.toposort()[0].op.axis == axis
    huge = (rng.standard_normal((3, 4, 2)[:ndim]) * 1e4).astype(dtype)
    np.testing.assert_allclose(f(huge), special.softmax(huge.astype("float64"), axis=axis).astype(dtype),
                               rtol=1e-5, atol=1e-30)


@pytest.mark.parametrize("build", [
    lambda c: T.exp(c) / T.exp(c).sum(axis=1),  # broadcasts the row sums along the rows: no softmax
    lambda c: T.exp(c) / T.exp(c + 1).sum(axis=1, keepdims=True),
    lambda c: T.exp(c) / T.exp(c).sum(axis=(0, 1), keepdims=True),
    lambda c: T.exp(c) / T.exp(c).max(axis=1, keepdims=True),
], ids=["other axis", "other numerator", "two axes", "max"])
def test_other_exp_ratios_are_left_alone(build):
    c = T.dmatrix("c")
    f = check_same_values([c], build(c), STABLE, [rng.standard_normal((3, 3))])
    assert "Softmax" not in op_names(f)


def test_logsumexp_is_shifted_by_the_max():
    m = T.dmatrix("m")
    expr = T.log(T.sum(T.exp(m), axis=1))
    f = check_same_values([m], expr, STABLE, [rng.standard_normal((3, 4))])
    assert "Reduce{maximum}" in str(f.maker.fgraph.toposort())
    big = np.array([[1000.0, 999.0, -5.0], [-np.inf, -np.inf, -np.inf], [np.inf, 0.0, 1.0]])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(f(big), special.logsumexp(big, axis=1))


@pytest.mark.parametrize("mode", [STABLE, None])
def test_logsumexp_is_shifted_once(mode):
    """The shifted form is itself a log of a sum of exps: it must not be shifted again
    (it was, pass after pass, until the phase stopped at 4 times the graph's size)."""
    m = T.dmatrix("m")
    peak = T.max(m, axis=1, keepdims=True)
    by_hand = T.log(T.sum(T.exp(m - peak), axis=1)) + peak.flatten()
    for expr in (T.log(T.sum(T.exp(m), axis=1)), by_hand):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # RewritePhaseStopped included
            f = function([m], expr, mode=mode)
        maxima = [n for n in f.maker.fgraph.toposort() if "maximum" in str(n.op)]
        assert len(maxima) == 1, maxima
        big = np.array([[1000.0, 999.0, -5.0], [3.0, 1.0, 0.2]])
        np.testing.assert_allclose(f(big), special.logsumexp(big, axis=1))


def test_categorical_crossentropy_of_softmax_is_stable_with_its_gradient():
    m, idx = T.dmatrix("m"), T.lvector("idx")
    onehot = T.dmatrix("onehot")
    logits = np.array([[1e4, 0.0, -1e4], [3.0, 1.0, 0.2]])
    labels = np.array([2, 1])
    expected = -special.log_softmax(logits, axis=1)[np.arange(2), labels]
    probs = special.softmax(logits, axis=1)
    expected_grad = probs - np.eye(3)[labels]
    for target, value in ((idx, labels), (onehot, np.eye(3)[labels])):
        cost = nnet.categorical_crossentropy(nnet.softmax(m), target)
        f = function([m, target], [cost, grad(cost.sum(), m)])
        got, g = f(logits, value)
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        np.testing.assert_allclose(g, expected_grad, atol=1e-12)


def test_binary_crossentropy_of_a_saturated_sigmoid_is_finite_with_its_gradient():
    t = T.dvector("t")
    z = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    target = np.array([1.0, 1.0, 0.5, 0.0, 0.0])
    cost = nnet.binary_crossentropy(nnet.sigmoid(x), t)
    f = function([x, t], [cost, grad(cost.sum(), x)])
    value, g = f(z, target)
    expected = target * np.logaddexp(0, -z) + (1 - target) * np.logaddexp(0, z)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(g, special.expit(z) - target, atol=1e-12)


def test_hand_written_binary_crossentropy_is_stabilized():
    t = T.dvector("t")
    s = T.sigmoid(x)
    cost = -(t * T.log(s) + (1 - t) * T.log(1 - s))
    z = np.array([-800.0, 0.3, 800.0])
    target = np.array([1.0, 0.2, 0.0])
    value = function([x, t], cost)(z, target)
    np.testing.assert_allclose(value, target * np.logaddexp(0, -z) + (1 - target) * np.logaddexp(0, z))
    f = check_same_values([x, t], cost, STABLE, [rng.standard_normal(5), rng.uniform(0, 1, 5)])
    assert "log" not in op_names(f)


def test_crossentropies_of_plain_probabilities_are_unchanged():
    p, t = T.dmatrix("p"), T.dmatrix("t")
    probs = special.softmax(rng.standard_normal((3, 4)), axis=1)
    cost = nnet.categorical_crossentropy(p, t)
    np.testing.assert_allclose(function([p, t], cost)(probs, np.eye(4)[[0, 1, 3]]),
                               -np.log(probs[[0, 1, 2], [0, 1, 3]]))
    bce = nnet.binary_crossentropy(p, t)
    tv = rng.uniform(0, 1, (3, 4))
    np.testing.assert_allclose(function([p, t], bce)(probs, tv),
                               -(tv * np.log(probs) + (1 - tv) * np.log(1 - probs)))


def test_float32_stays_float32():
    xf = T.fvector("xf")
    f = function([xf], [T.log(1 + xf), T.exp(xf) - 1, T.log(T.sigmoid(xf))])
    for out in f(np.array([1e-3, 2.0], dtype="float32")):
        assert out.dtype == np.float32


# ------------------------------------------------------------- written-out sigmoids
SIGMOID_FORMS = {
    "1/(1+exp(-z))": lambda z: 1 / (1 + T.exp(-z)),
    "1/(exp(-z)+1)": lambda z: 1 / (T.exp(-z) + 1),
    "1./(1.+exp(-z))": lambda z: 1.0 / (1.0 + T.exp(-z)),
    "exp(z)/(1+exp(z))": lambda z: T.exp(z) / (1 + T.exp(z)),
    "inv(1+exp(-z))": lambda z: T.inv(1 + T.exp(-z)),
    "sigmoid(z)": T.sigmoid,
}


@pytest.mark.parametrize("form", list(SIGMOID_FORMS))
def test_written_out_sigmoids_become_the_op(form):
    f = check_same_values([x], SIGMOID_FORMS[form](x), STABLE, [rng.uniform(-5, 5, 6)], rtol=1e-14)
    assert op_names(f) == ["sigmoid"]


def test_the_other_sign_and_the_complement_are_recognised():
    # 1 / (1 + exp(z)) = sigmoid(-z), and exp(-z) / (1 + exp(-z)) too.
    for out in (1 / (1 + T.exp(x)), T.exp(-x) / (1 + T.exp(-x))):
        f = check_same_values([x], out, STABLE, [rng.uniform(-5, 5, 6)], rtol=1e-14)
        assert op_names(f) == ["neg", "sigmoid"]
    # Another numerator is a factor beside the sigmoid (nnet.sigmoid_rewrites.local_exp_over_1_plus_exp).
    for out in (2 / (1 + T.exp(-x)), T.exp(x) / (1 + T.exp(-x))):
        f = check_same_values([x], out, STABLE, [rng.uniform(-5, 5, 6)], rtol=1e-14)
        assert "sigmoid" in op_names(f) and "true_div" not in op_names(f)
    # Not a sigmoid: another constant in the denominator.
    f = check_same_values([x], 1 / (2 + T.exp(-x)), STABLE, [rng.uniform(-5, 5, 6)], rtol=1e-14)
    assert "sigmoid" not in op_names(f)


@pytest.mark.parametrize("form", [f for f in SIGMOID_FORMS if f != "sigmoid(z)"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logs_of_written_out_sigmoids_are_exact_where_they_saturate(form, dtype):
    z = T.vector("z", dtype=dtype)
    p = SIGMOID_FORMS[form](z)
    f = function([z], [T.log(p), T.log(1 - p), T.log1p(-p)])
    assert {"true_div", "inv", "exp"}.isdisjoint(op_names_of_fused(f))
    values = np.array([30.0, 1000.0, -1000.0, -30.0, 0.0], dtype)
    log_p, log_q, log1p_q = f(values)
    expected_p = -np.logaddexp(0, -values.astype("float64"))  # log(sigmoid(z)), exactly
    expected_q = -np.logaddexp(0, values.astype("float64"))   # log(1 - sigmoid(z))
    tol = 1e-6 if dtype == "float32" else 1e-15
    for got, expected in ((log_p, expected_p), (log_q, expected_q), (log1p_q, expected_q)):
        assert got.dtype == dtype and np.all(np.isfinite(got))
        np.testing.assert_allclose(got, expected, rtol=tol)
    if dtype == "float64":
        assert log_q[0] == -30.000000000000092  # was -30.00102 written out
        assert log_q[1] == -1000.0 and log_p[2] == -1000.0  # were nan / -inf


def op_names_of_fused(f) -> set[str]:
    """Scalar op names of every node, looking inside fused Composites."""
    names = set()
    for node in f.maker.fgraph.toposort():
        scalar = getattr(node.op, "scalar_op", None)
        steps = getattr(scalar, "steps", None)
        names.update(op.name for op, _ in steps) if steps else names.add(getattr(scalar, "name", ""))
    return names


def test_the_tutorial_cross_entropy_and_its_gradient_stay_finite():
    # The hand-written logistic loss: -(t log p + (1 - t) log(1 - p)), p = 1 / (1 + exp(-z)).
    z, t = T.dvector("z"), T.dvector("t")
    p = 1 / (1 + T.exp(-z))
    cost = -(t * T.log(p) + (1 - t) * T.log(1 - p)).sum()
    f = function([z, t], [cost, grad(cost, z)])
    zv = np.array([-1000.0, -30.0, 0.5, 30.0, 1000.0])
    tv = np.array([1.0, 0.0, 1.0, 0.0, 0.0])
    c, g = f(zv, tv)
    expected = np.sum(tv * np.logaddexp(0, -zv) + (1 - tv) * np.logaddexp(0, zv))
    np.testing.assert_allclose(c, expected, rtol=1e-15)
    np.testing.assert_allclose(g, special.expit(zv) - tv, rtol=1e-12, atol=1e-300)


LOGADD_A = np.array([10000, -np.inf, np.inf, 1, -1000, -np.inf, np.inf, 1e-300, 0.5])
LOGADD_B = np.array([10000, -np.inf, 5, 2, -1001, 3, np.inf, -50, 0.5])


def test_log_of_a_sum_of_exps_is_logaddexp():
    y = T.dvector("y")
    f = function([x, y], T.log(T.exp(x) + T.exp(y)), mode=STABLE)
    assert "log" not in op_names(f)
    with np.errstate(all="raise"):  # neither branch computes inf - inf
        got = f(LOGADD_A, LOGADD_B)
    np.testing.assert_allclose(got, np.logaddexp(LOGADD_A, LOGADD_B), rtol=1e-15)
    assert np.isinf(function([x, y], T.log(T.exp(x) + T.exp(y)), mode=phase_mode("canonicalize"))(
        LOGADD_A[:1], LOGADD_B[:1])).all()  # the written-out form overflows


def test_log_of_a_longer_sum_of_exps_folds_logaddexp():
    y = T.dvector("y")
    out = T.log(T.exp(x) + T.exp(y) + T.exp(x - y) + T.exp(x + y))
    f = check_same_values([x, y], out, STABLE, [np.array([1.0, -3]), np.array([2.0, 0.25])], rtol=1e-14)
    np.testing.assert_allclose(f(np.array([10000.0]), np.array([10000.0])), [20000.0])


def test_log_of_a_sum_with_another_term_is_left_alone():
    y = T.dvector("y")
    f = check_same_values([x, y], T.log(T.exp(x) + y), STABLE, [np.arange(3.0), np.arange(3.0)])
    assert "log" in op_names(f)
