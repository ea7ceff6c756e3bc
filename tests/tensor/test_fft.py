"""tensor.fft: rfft/irfft against numpy's rfftn/irfftn, the three norms, round trips,
gradients by finite differences, shapes and the refusals."""
import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.gradient import verify_grad
from arignote.tensor import fft

SHAPES = [(2, 8), (3, 7), (1, 4, 6), (2, 3, 5), (2, 2, 3, 4)]
SCALE = {None: lambda n: (1.0, 1.0 / n), "ortho": lambda n: (n ** -0.5, n ** -0.5),
         "no_norm": lambda n: (1.0, 1.0)}


def numpy_rfft(x):
    out = np.fft.rfftn(x, axes=tuple(range(1, x.ndim)))
    return np.stack([out.real, out.imag], axis=-1)


def tensor_of(ndim, dtype="float64"):
    return T.TensorType(dtype, (False,) * ndim)("x")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("norm", [None, "ortho", "no_norm"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rfft_and_irfft_match_numpy(shape, norm, dtype):
    x = np.random.RandomState(len(shape)).randn(*shape).astype(dtype)
    n = int(np.prod(shape[1:]))
    forward, inverse = SCALE[norm](n)
    v = tensor_of(len(shape), dtype)
    out = function([v], fft.rfft(v, norm=norm))(x)
    tol = 1e-4 if dtype == "float32" else 1e-10
    assert out.dtype == dtype and out.shape == shape[:-1] + (shape[-1] // 2 + 1, 2)
    np.testing.assert_allclose(out, numpy_rfft(x.astype("float64")) * forward, rtol=tol, atol=tol)
    s = tensor_of(len(shape) + 1, dtype)
    back = function([s], fft.irfft(s, norm=norm, is_odd=shape[-1] % 2 == 1))(out)
    assert back.dtype == dtype and back.shape == shape
    np.testing.assert_allclose(back, x * forward * inverse * n, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(2, 6), (1, 5), (2, 3, 4), (1, 2, 5)])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_gradients_match_finite_differences(shape, norm):
    rng = np.random.RandomState(1)
    verify_grad(lambda x: fft.rfft(x, norm=norm), [rng.randn(*shape)], rng=rng)
    spectrum = numpy_rfft(rng.randn(*shape))
    odd = shape[-1] % 2 == 1
    verify_grad(lambda y: fft.irfft(y, norm=norm, is_odd=odd), [spectrum], rng=rng)


def test_the_adjoint_ops_are_each_others_transposes():
    """<A x, y> == <x, A^T y> for the unnormalized ops and their adjoints."""
    rng = np.random.RandomState(2)
    for shape in [(1, 6), (2, 7), (1, 3, 4)]:
        x, s = rng.randn(*shape), np.array(shape[1:])
        y = rng.randn(*shape[:-1], shape[-1] // 2 + 1, 2)
        a, at = (function([v], op(v, s)) for v, op in
                 ((tensor_of(len(shape)), fft.RFFTOp()), (tensor_of(len(shape) + 1), fft.IRFFTOp(True))))
        np.testing.assert_allclose(np.sum(a(x) * y), np.sum(x * at(y)), rtol=1e-10)
        c, ct = (function([v], op(v, s)) for v, op in
                 ((tensor_of(len(shape) + 1), fft.IRFFTOp()), (tensor_of(len(shape)), fft.RFFTOp(True))))
        np.testing.assert_allclose(np.sum(c(y) * x), np.sum(y * ct(x)), rtol=1e-10)


def test_inferred_shapes_need_no_transform():
    x = T.dtensor3("x")
    f = function([x], [fft.rfft(x).shape, fft.irfft(fft.rfft(x)).shape])
    assert not any(isinstance(n.op, (fft.RFFTOp, fft.IRFFTOp)) for n in f.maker.fgraph.toposort())
    assert [tuple(v) for v in f(np.zeros((2, 3, 6)))] == [(2, 3, 4, 2), (2, 3, 6)]


def test_refusals_say_what_was_expected():
    with pytest.raises(ValueError, match="norm must be None"):
        fft.rfft(T.dmatrix(), norm="unitary")
    with pytest.raises(ValueError, match="is_odd must be True or False"):
        fft.irfft(T.dtensor3(), is_odd=1)
    with pytest.raises(TypeError, match=r"shape \(batch, \.\.\., n\)"):
        fft.rfft(T.dvector())
    with pytest.raises(TypeError, match="float array"):
        fft.rfft(T.lmatrix())
    with pytest.raises(TypeError, match=r"n//2 \+ 1, 2"):
        fft.irfft(T.dmatrix())
    y = T.dtensor3("y")
    with pytest.raises(ValueError, match="must have length 2"):
        function([y], fft.irfft(y))(np.zeros((1, 4, 3)))
