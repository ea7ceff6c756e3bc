"""complex(real, imag) and complex_from_polar(abs, angle) against numpy, with Theano's output
dtypes; gradients of real, imag, complex and complex_from_polar by finite differences of
real-valued costs (Theano's convention: dC/dRe + i dC/dIm)."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.gradient import verify_grad
from tests.utils import assert_matches


@pytest.mark.parametrize("dtype,out", [("float32", "complex64"), ("float64", "complex128"),
                                       ("int32", "complex128"), ("int8", "complex64")])
def test_values_and_dtypes(dtype, out):
    rng = np.random.default_rng(0)
    re, im = (rng.random(5) * 10).astype(dtype), (rng.random(5) * 10).astype(dtype)
    x, y = T.vector(dtype=dtype), T.vector(dtype=dtype)
    assert_matches(function([x, y], T.complex(x, y))(re, im), (re + 1j * im.astype("float64")).astype(out))
    polar = function([x, y], T.complex_from_polar(x, y))(re, im)
    assert_matches(polar, (re * np.exp(1j * im.astype("float64"))).astype(out), rtol=1e-5)
    z = T.complex(x, y)
    parts = function([x, y], [T.real(z), T.imag(z), abs(z)])(re, im)
    np.testing.assert_allclose(parts[0], re, rtol=1e-6)
    np.testing.assert_allclose(parts[1], im, rtol=1e-6)
    np.testing.assert_allclose(parts[2], np.hypot(re.astype("float64"), im.astype("float64")), rtol=1e-5)


def test_broadcasting_and_refusal():
    m, v = T.dmatrix(), T.dvector()
    got = function([m, v], T.complex(m, v))(np.ones((2, 3)), np.arange(3.0))
    assert_matches(got, np.ones((2, 3)) + 1j * np.arange(3.0))
    with pytest.raises(TypeError):
        T.complex(T.zvector(), v)


def test_gradients():
    rng = np.random.default_rng(1)
    w1, w2 = rng.random(4), rng.random(4)

    def through(build):
        return lambda a, b: T.real(build(a, b)) * w1 + T.imag(build(a, b)) * w2

    verify_grad(through(T.complex), [rng.random(4), rng.random(4)])
    verify_grad(through(T.complex_from_polar), [rng.random(4) + 0.5, rng.random(4) * 3])
    verify_grad(lambda a: T.real(a) * 2 + T.imag(a), [rng.random(4)])  # of a real input


def test_conj_and_angle_gradients():
    rng = np.random.default_rng(2)
    w1, w2 = rng.random(4), rng.random(4)
    verify_grad(lambda a, b: T.real(T.conj(T.complex(a, b))) * w1 + T.imag(T.conj(T.complex(a, b))) * w2,
                [rng.random(4), rng.random(4)])
    verify_grad(lambda a, b: T.angle(T.complex(a, b)) * w1, [rng.random(4) + 0.5, rng.random(4) - 0.5])
    verify_grad(lambda a: T.conj(a) * w1 + T.angle(a), [rng.random(4) + 0.1])


def test_complex_numbers_order_as_numpy_orders_them():
    # Theano's maximum, minimum and comparisons take complex numbers (real part first).
    a, b = T.zvector("a"), T.zvector("b")
    av = np.array([1 + 2j, 1 - 1j, 3 + 0j, -1 + 5j])
    bv = np.array([1 + 1j, 1 + 1j, 2 + 9j, -1 + 5j])
    outs = [T.maximum(a, b), T.minimum(a, b), a < b, a <= b, a > b, a >= b]
    got = function([a, b], outs)(av, bv)
    for actual, ref in zip(got, [np.maximum, np.minimum, np.less, np.less_equal, np.greater,
                                 np.greater_equal]):
        assert_matches(actual, ref(av, bv))


def test_erf_of_complex_numbers_and_its_gradient_is_refused():
    import scipy.special
    z = T.zvector("z")
    values = np.array([0.5 + 0.5j, -1 + 0.25j])
    assert_matches(function([z], T.erf(z))(values), scipy.special.erf(values))
    with pytest.raises(NotImplementedError, match="erf of complex"):
        T.grad(T.real(T.erf(z)).sum(), z)
    with pytest.raises(NotImplementedError, match="pow of complex"):
        T.grad(T.real(z ** 2).sum(), z)


def test_abs_gradient_of_complex_numbers():
    # |re + i im|: the gradient is d/dre + i d/dim = z / |z|, by finite differences of both parts.
    rng = np.random.default_rng(4)
    verify_grad(lambda a, b: T.abs(T.complex(a, b)), [rng.random(4) + 0.5, rng.random(4) - 0.5])
    z = T.zvector("z")
    values = np.array([3 + 4j, -1 + 0j])
    assert_matches(function([z], T.grad(T.abs(z).sum(), z))(values), values / np.abs(values))
