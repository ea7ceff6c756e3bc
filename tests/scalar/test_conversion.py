"""tensor_from_scalar / scalar_from_tensor, and scalars meeting tensors."""
import numpy as np
import pytest

from arignote import function, grad, scalar, tensor
from arignote.tensor.scalar_conversion import (ScalarFromTensor, TensorFromScalar, scalar_from_tensor,
                                               tensor_from_scalar)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64", "complex64"])
def test_round_trip_keeps_dtype_and_value(dtype):
    s = scalar.ScalarType(dtype)("s")
    t = tensor_from_scalar(s)
    assert isinstance(t.owner.op, TensorFromScalar) and t.type == tensor.TensorType(dtype, ())
    back = scalar_from_tensor(t)
    assert isinstance(back.owner.op, ScalarFromTensor) and back.type == s.type
    value = np.dtype(dtype).type(1)
    got_t, got_s = function([s], [t, back])(value)
    assert isinstance(got_t, np.ndarray) and got_t.shape == () and got_t.dtype == dtype and got_t == value
    assert isinstance(got_s, np.generic) and got_s.dtype == dtype and got_s == value


def test_scalars_and_tensors_mix():
    x, v = scalar.float32("x"), tensor.fvector("v")
    for expr in (v + x, x + v, v * x, x - v):
        assert expr.type == tensor.fvector().type
    f = function([v, x], [v + x, x - v])
    out = f(np.array([1, 2], "float32"), 3.0)
    np.testing.assert_array_equal(out[0], [4, 5])
    np.testing.assert_array_equal(out[1], [2, 1])
    t = tensor.dscalar("t")
    assert (scalar.as_scalar(t) * scalar.float64("y")).type == scalar.float64


def test_gradients_through_the_conversions():
    x, t = scalar.float64("x"), tensor.dscalar("t")
    cost = tensor.sqr(tensor_from_scalar(x * scalar_from_tensor(t)))  # (x t)^2
    gx, gt = grad(cost, [x, t])
    assert gx.type == scalar.float64 and gt.type == t.type
    np.testing.assert_allclose(function([x, t], [gx, gt])(3.0, 2.0), [2 * 3 * 4, 2 * 9 * 2])
    i = scalar.int32("i")
    assert TensorFromScalar().grad([i], [tensor.dscalar()]) == [None]


def test_conversion_errors():
    with pytest.raises(TypeError, match="takes a 0-d tensor, got 'v'.*1 dimensions"):
        scalar_from_tensor(tensor.dvector("v"))
    with pytest.raises(TypeError, match="takes a scalar variable, got 't'.*a tensor already"):
        tensor_from_scalar(tensor.dscalar("t"))
    assert tensor_from_scalar(2.5).dtype == "float32"  # a number becomes a scalar constant first
