"""The opt-in rewrites local_ultra_fast_sigmoid and local_hard_sigmoid (Theano's nnet docs):
off by default, and when included every sigmoid computes the approximation (numpy
references here), while log(sigmoid(x)) keeps its stable form."""
import numpy as np
import pytest
from scipy.special import expit

import arignote.tensor as T
from arignote import function
from arignote.compile.mode import get_default_mode
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.nnet import sigmoid, ultra_fast_sigmoid


def ref_hard(x):
    return np.clip(0.2 * x + 0.5, 0, 1)


def ref_ultra_fast(x):
    t = np.abs(x) / 2
    approx = np.where(t < 1.7, 1.5 * t / (1 + t),
                      np.where(t < 3, 0.935409070603099 + 0.0458812946797165 * (t - 1.7), 0.99505475368673))
    return 0.5 + 0.5 * np.sign(x) * approx


def _scalar_ops(f):
    return {n.op.scalar_op.name for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Elemwise)}


@pytest.mark.parametrize("name, ref", [("local_ultra_fast_sigmoid", ref_ultra_fast),
                                       ("local_hard_sigmoid", ref_hard)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_included_rewrite_replaces_every_sigmoid(name, ref, dtype):
    x = T.matrix("x", dtype=dtype)
    values = np.array([[-50, -10, -4, -1.3, 0, 0.7, 4, 10, 50]], dtype=dtype)
    plain = function([x], sigmoid(x))
    assert "sigmoid" in _scalar_ops(plain)
    np.testing.assert_allclose(plain(values), 1 / (1 + np.exp(-values.astype(np.float64))), rtol=1e-6)
    f = function([x], [sigmoid(x) * 3, T.log(sigmoid(x))], mode=get_default_mode().including(name))
    assert "sigmoid" not in _scalar_ops(f)
    scaled, log_sig = f(values)
    assert scaled.dtype == dtype
    np.testing.assert_allclose(scaled, 3 * ref(values.astype(np.float64)), rtol=1e-6, atol=1e-7)
    # Stabilized first: log(sigmoid(-50)) is -50, never log of an approximation's 0.
    np.testing.assert_allclose(log_sig[0, 0], -50, rtol=1e-6)


def test_ultra_fast_sigmoid_is_the_elemwise_of_the_rewritten_graph():
    x = T.dmatrix("x")
    f = function([x], sigmoid(x), mode=get_default_mode().including("local_ultra_fast_sigmoid"))
    assert [node.op for node in f.maker.fgraph.toposort()] == [ultra_fast_sigmoid]


def test_including_the_specialize_phase_keeps_the_exact_sigmoid():
    """The approximations are opt-in: only their own names select them, never their phase."""
    x = T.dmatrix("x")
    f = function([x], sigmoid(x), mode=get_default_mode().including("specialize"))
    assert _scalar_ops(f) == {"sigmoid"}
    np.testing.assert_allclose(f(np.array([[-3.0, 0.5]])), 1 / (1 + np.exp([[3.0, -0.5]])))


@pytest.mark.parametrize("shaped", [T.flatten, lambda s: s.reshape([s.size]), lambda s: s.T])
def test_log_of_a_reshaped_sigmoid_is_stable(shaped):
    """log(sigmoid) and log(1 - sigmoid) through a reshape or transpose: -softplus, finite at +-40
    (without moving the sigmoid below the reshape, log(1 - sigmoid(40)) rounds to log(0))."""
    x = T.matrix("x")
    f = function([x], [T.log(shaped(sigmoid(x))), T.log(1 - shaped(sigmoid(x)))])
    xv = np.array([[40.0, -40.0, 0.5], [3.0, -2.0, 0.0]])
    ref = np.ravel if shaped(T.matrix()).ndim == 1 else np.transpose
    log_p, log_q = f(xv)
    assert np.allclose(log_p, ref(-np.logaddexp(0, -xv)), rtol=1e-12, atol=0)
    assert np.allclose(log_q, ref(-np.logaddexp(0, xv)), rtol=1e-12, atol=0)


def test_a_sigmoid_read_twice_is_not_moved():
    x = T.matrix("x")
    s = sigmoid(x)
    f = function([x], [s, T.flatten(s)])
    sigmoids = [n for n in f.maker.fgraph.toposort()
                if isinstance(n.op, Elemwise) and "sigmoid" in str(n.op.scalar_op)]
    assert len(sigmoids) == 1
    xv = np.array([[1.0, -2.0]])
    out, flat = f(xv)
    assert np.allclose(flat, 1 / (1 + np.exp(-xv.ravel())))


def _elemwise_names(f):
    return [n.op.scalar_op.name for n in f.maker.fgraph.toposort() if isinstance(n.op, Elemwise)]


NO_FUSION = get_default_mode().excluding("fusion")
POINTS = np.array([-1000.0, -30.0, -1.0, 0.0, 2.0, 30.0, 1000.0])


def _sigm(v):
    return expit(v)  # no overflow


@pytest.mark.parametrize("build, ref", [
    (lambda x: 3.0 / (1 + T.exp(-x)), lambda v: 3 * _sigm(v)),
    (lambda x: T.fill(x, -1.0) / (1 + T.exp(-x)), lambda v: -_sigm(v)),
    (lambda x: -2.5 / (T.exp(x) + 1), lambda v: -2.5 * _sigm(-v)),
    (lambda x: T.exp(x) / (1 + T.exp(x)), _sigm),
    (lambda x: (T.fill(x, -1.0) * T.exp(x)) / ((1 + T.exp(x)) * (1 + T.exp(-x))), lambda v: -_sigm(v) ** 2),
    (lambda x: (2 * T.exp(x)) / ((1 + T.exp(x)) * (x * x + 1)), lambda v: 2 * _sigm(v) / (v * v + 1)),
])
def test_quotients_of_one_plus_exp_become_sigmoids(build, ref):
    x = T.vector("x")
    f = function([x], build(x), mode=NO_FUSION)
    names = _elemwise_names(f)
    assert "sigmoid" in names and "exp" not in names
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(f(POINTS), ref(POINTS), rtol=1e-12, atol=1e-300)


def test_minus_one_over_one_plus_exp_is_a_negated_sigmoid():
    x = T.vector("x")
    f = function([x], T.fill(x, -1.0) / (1 + T.exp(-x)), mode=NO_FUSION)
    assert _elemwise_names(f) == ["sigmoid", "neg"]


@pytest.mark.parametrize("build, ref", [
    (lambda x: T.exp(x) / (2 + T.exp(x)), lambda v: np.exp(v) / (2 + np.exp(v))),
    (lambda x: T.exp(x) / (1 - T.exp(x)), lambda v: np.exp(v) / (1 - np.exp(v))),
    (lambda x: 1.0 / (1 + T.exp(x) + x), lambda v: 1 / (1 + np.exp(v) + v)),
])
def test_other_quotients_stay(build, ref):
    x = T.vector("x")
    f = function([x], build(x), mode=NO_FUSION)
    assert "sigmoid" not in _elemwise_names(f)
    v = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(f(v), ref(v), rtol=1e-12)
