"""The error function's stable forms: complements, log(erfc) and its gradient."""
import numpy as np
import pytest
from scipy import special

from arignote import function
from arignote import tensor as T
from arignote.gradient import grad
from tests.rewriting.rewrite_utils import check_same_values, op_names, phase_mode

STABLE = phase_mode("canonicalize", "stabilize")
x = T.dvector("x")
WIDE = np.array([-30, -6, -3, -1, -1e-9, 0, 1e-9, 1, 3, 6, 10, 27, 30, 100.0])


@pytest.mark.parametrize("build, expected, reference", [
    (lambda: 1 - T.erf(x), ["erfc"], lambda v: special.erfc(v)),
    (lambda: 1 + (-T.erf(x)), ["erfc"], lambda v: special.erfc(v)),
    (lambda: 1 + T.erf(x), ["neg", "erfc"], lambda v: special.erfc(-v)),
    (lambda: T.erf(x) - 1, ["erfc", "neg"], lambda v: -special.erfc(v)),
    (lambda: -1 + T.erf(x), ["erfc", "neg"], lambda v: -special.erfc(v)),
    (lambda: -1 - T.erf(x), ["neg", "erfc", "neg"], lambda v: -special.erfc(-v)),
    (lambda: 1 - T.erfc(x), ["erf"], lambda v: special.erf(v)),
    (lambda: T.erfc(-x) - 1, ["erf"], lambda v: special.erf(v)),
    (lambda: T.erfc(x) + (-1), ["neg", "erf"], lambda v: -special.erf(v)),
], ids=["1-erf", "1+-erf", "1+erf", "erf-1", "-1+erf", "-1-erf", "1-erfc", "erfc(-x)-1", "erfc+-1"])
def test_complements_become_one_function(build, expected, reference):
    f = function([x], build(), mode=STABLE)
    assert op_names(f) == expected
    np.testing.assert_allclose(f(WIDE), reference(WIDE), rtol=1e-14, atol=0)


def test_complements_keep_the_tail_the_naive_form_loses():
    tail = np.array([6.0, 10.0, 20.0])
    assert not function([x], 1 - T.erf(x), mode=phase_mode("canonicalize"))(tail).any()  # all rounded to 0
    np.testing.assert_allclose(function([x], 1 - T.erf(x))(tail), special.erfc(tail), rtol=1e-14)


@pytest.mark.parametrize("build", [lambda: 2 - T.erf(x), lambda: T.erf(x) + 2, lambda: 1 + T.erfc(x)],
                         ids=["2-erf", "erf+2", "1+erfc"])
def test_other_sums_are_left_alone(build):
    f = check_same_values([x], build(), STABLE, [WIDE])
    assert len(op_names(f)) == 2


def _log_erfc(v):
    """log(erfc(v)) without underflow: through erfcx where v > 0, log1p(erf(-v)) elsewhere (near 0,
    log(erfc(v)) itself loses digits)."""
    return np.where(v > 0, np.log(special.erfcx(np.maximum(v, 0))) - np.maximum(v, 0) ** 2,
                    np.log1p(special.erf(-np.minimum(v, 0))))


def test_log_erfc_is_finite_where_erfc_underflows():
    f = function([x], T.log(T.erfc(x)), mode=STABLE)
    assert "erfcx" in op_names(f) and "erfc" not in op_names(f)
    with np.errstate(all="raise"):  # the branch not taken computes nothing infinite
        got = f(WIDE)
    np.testing.assert_allclose(got, _log_erfc(WIDE), rtol=1e-13)
    asymptotic = -10000 - np.log(100 * np.sqrt(np.pi)) + np.log1p(-1 / 20000)  # erfc(x) ~ e^-x²/(x√π)(1-1/2x²)
    assert got[-1] == pytest.approx(asymptotic, rel=1e-12)


@pytest.mark.parametrize("build", [
    lambda: grad(T.log(T.erfc(x)).sum(), x),
    lambda: T.exp(-T.sqr(x)) / T.erfc(x),
    lambda: T.mul(T.exp(T.neg(x * x)), -10.1) / T.erfc(x),
], ids=["grad", "exp(-sqr)/erfc", "c*exp(-x*x)/erfc"])
def test_gaussian_over_erfc_is_finite(build):
    out = build()
    f = function([x], out, mode=STABLE)
    assert "erfcx" in op_names(f) and "erfc" not in op_names(f) and "exp" not in op_names(f)
    got = f(WIDE)
    assert np.isfinite(got).all()
    naive = function([x], out, mode=phase_mode("canonicalize"))
    with np.errstate(all="ignore"):
        close = np.abs(WIDE) < 20  # where the naive form still works, both agree
        np.testing.assert_allclose(got[close], naive(WIDE)[close], rtol=1e-12)
        assert np.isnan(naive(WIDE)[-1])


def test_gradient_of_log_erfc_matches_its_closed_form():
    got = function([x], grad(T.log(T.erfc(x)).sum(), x))(WIDE)
    np.testing.assert_allclose(got, -2 / np.sqrt(np.pi) / special.erfcx(WIDE), rtol=1e-13)


def test_gaussian_of_another_variable_is_left_alone():
    y = T.dvector("y")
    f = check_same_values([x, y], T.exp(-T.sqr(y)) / T.erfc(x), STABLE, [WIDE[:6], WIDE[6:12]])
    assert "erfcx" not in op_names(f)
