"""The numpy path of the CPU Elemwise thunk on small arrays: constant operands bound in the
dtype of numpy's loop, and the result checks it leaves out, give what numpy gives."""
import numpy as np
import pytest

from arignote import function, tensor as T

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float32", "float64", "complex128"]
CONSTANTS = [(1, "int8"), (-3, "int16"), (2.5, "float64"), (0.5, "float32"), (True, "bool"),
             (300, "int16"), (1 + 2j, "complex128")]
OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sub": lambda a, b: a - b,
       "maximum": T.maximum, "lt": lambda a, b: a < b}


def _value(dtype, shape, rng):
    return (rng.standard_normal(shape) * 50).astype(dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("constant", CONSTANTS, ids=str)
def test_constant_operand_gives_what_an_input_of_its_dtype_gives(op, dtype, constant, rng):
    """The same graph with the constant fed as an input (no binding) is the reference: the
    same values in the same dtype, exactly, both operand orders, vector and 0-d."""
    c, c_dtype = constant
    build = OPS[op]
    for ndim in (0, 1):
        x = T.TensorType(dtype, (False,) * ndim)("x")
        y = T.TensorType(c_dtype, ())("y")
        k = T.constant(np.asarray(c, dtype=c_dtype))
        for order in ((x, k), (k, x)):
            try:
                out = build(*order)
            except TypeError:  # an op that refuses these dtypes (sub of bools, lt of complex)
                continue
            f = function([x], out)
            ref = function([x, y], build(*[y if v is k else v for v in order]))
            v = _value(dtype, (7,) * ndim, rng)
            got, want = f(v), ref(v, np.asarray(c, dtype=c_dtype))
            assert type(got) is np.ndarray and got.dtype == want.dtype == out.type.numpy_dtype
            np.testing.assert_array_equal(got, want)


def test_w2_constant_is_bound_in_the_loop_dtype():
    """``x + 1`` on float64: the int8 constant is bound as a float64 0-d array (numpy's loop
    reads it so), not cast on every call; the result checks are left out."""
    x = T.vector("x", dtype="float64")
    f = function([x], x + 1)
    (thunk,) = f._thunks
    bound = thunk.__globals__["K1"]
    assert bound.dtype == np.float64 and bound.shape == () and bound == 1
    assert "astype" not in thunk.source and "asarray" not in thunk.source
    v = np.arange(10.0)
    np.testing.assert_array_equal(f(v), v + 1)


def test_a_loop_that_would_change_keeps_the_constant_dtype():
    """int8 + an int16 constant runs numpy's int16 loop: the constant stays int16 (cast to
    int8 it would pick the int8 loop and wrap around)."""
    x = T.vector("x", dtype="int8")
    f = function([x], x + T.constant(np.int16(300)))
    assert f._thunks[0].__globals__["K1"].dtype == np.int16
    v = np.array([100, -100, 127], dtype="int8")
    got = f(v)
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got, v.astype("int16") + 300)


def test_zero_d_output_is_an_array():
    """A 0-d result stays checked: numpy's ufunc returns a scalar there, the call an array."""
    x = T.scalar("x", dtype="float64")
    got = function([x], x * 2)(3.0)
    assert type(got) is np.ndarray and got.shape == () and got == 6.0


def test_broadcasting_with_a_constant_and_a_mismatch_error(rng):
    c, r = T.col("c"), T.row("r")
    f = function([c, r], c + r + 1)
    a, b = rng.standard_normal((3, 1)), rng.standard_normal((1, 4))
    np.testing.assert_array_equal(f(a, b), a + b + 1)
    m, n = T.matrix("m"), T.matrix("n")
    g = function([m, n], m * n + 2)
    with pytest.raises(ValueError):
        g(np.ones((2, 3)), np.ones((3, 2)))


def test_fresh_output_each_call():
    """The output is never the buffer of an earlier call (nor the caller's input)."""
    x = T.vector("x")
    f = function([x], x + 1)
    v = np.arange(4, dtype=x.dtype)
    first, second = f(v), f(v)
    assert first is not second and not np.shares_memory(first, second)
    assert not np.shares_memory(first, v)
