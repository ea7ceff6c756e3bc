"""``tensor.fourier.fft`` against numpy.fft.fft: lengths n cropping and padding, constant,
default, negative and symbolic axes, real and complex inputs, inferred shapes; bad
arguments refused, and no gradient (as in Theano)."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.gradient import NullTypeGradError, grad
from arignote.tensor.fourier import Fourier, fft
from tests.utils import assert_matches, check_infer_shape


@pytest.mark.parametrize("n,axis", [(None, None), (10, 0), (4, 1), (None, 0), (6, -1), (1, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_matches_numpy(n, axis, dtype):
    rng = np.random.default_rng(0)
    values = rng.random((8, 6)).astype(dtype)
    if dtype == "complex128":
        values = values + 1j * rng.random((8, 6))
    a = T.matrix(dtype=dtype)
    out = fft(a, n, axis)
    assert isinstance(out.owner.op, Fourier) and out.dtype == "complex128"
    expected = np.fft.fft(values, n=n, axis=-1 if axis is None else axis).astype("complex128")
    assert_matches(function([a], out)(values), expected)
    check_infer_shape([a], out, [values])


def test_symbolic_axis_and_vector():
    a, b = T.dmatrix(), T.iscalar()
    values = np.random.default_rng(1).random((5, 3))
    for axis in (0, 1):
        assert_matches(function([a, b], fft(a, 7, b))(values, axis), np.fft.fft(values, 7, axis))
        assert_matches(function([a, b], fft(a, None, b))(values, axis), np.fft.fft(values, axis=axis))
        np.testing.assert_array_equal(function([a, b], fft(a, 7, b).shape)(values, axis),
                                      np.fft.fft(values, 7, axis).shape)
    v = T.dvector()
    assert_matches(function([v], fft(v, 16, 0))(np.arange(12.0)), np.fft.fft(np.arange(12.0), 16))


def test_refusals_and_no_gradient():
    a = T.dmatrix()
    with pytest.raises(TypeError, match="at least one dimension"):
        fft(T.dscalar())
    with pytest.raises(TypeError, match="out of range"):
        fft(a, None, 2)
    with pytest.raises(TypeError, match="integer scalar"):
        fft(a, 2.5, 0)
    with pytest.raises(TypeError, match="at least 1"):
        fft(a, 0, 0)
    n = T.iscalar()
    with pytest.raises(ValueError, match="at least 1"):
        function([a, n], fft(a, n, 0))(np.ones((2, 2)), 0)
    out = fft(a)
    with pytest.raises(NullTypeGradError, match="fft"):
        grad(None, a, known_grads={out: T.ones_like(out)})
