"""Scalar-typed graphs: types, constants, each op of the table on scalar variables, gradients."""
import numpy as np
import pytest

from arignote import config, function, grad, scalar, tensor
from arignote.scalar.ops import TABLE
from arignote.tensor.elemwise import Elemwise

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64", "complex128"]


def point(dtype: str, k: int) -> np.generic:
    """A value of ``dtype`` inside every op's domain where one exists (0.3, 0.6 ... for floats)."""
    values = {"b": [True, False, True], "i": [3, 2, 5], "u": [3, 2, 5], "f": [0.3, 0.6, 0.45],
              "c": [0.3 + 0.2j, 0.6 - 0.1j, 0.45 + 0.3j]}
    return np.dtype(dtype).type(values[np.dtype(dtype).kind][k])


# ------------------------------------------------------------------ types and variables
def test_types_are_the_constructors():
    x = scalar.float64("x")
    assert x.type == scalar.float64 == scalar.ScalarType("float64") and x.type is not scalar.float32
    assert x.dtype == "float64" and x.name == "x" and x.ndim == 0
    assert str(scalar.int8) == "int8" and scalar.Scalar is scalar.ScalarType
    assert scalar.bool.dtype == "bool" and scalar.ScalarType("floatX").dtype == config.floatX
    a, b = scalar.floats("ab")
    assert (a.name, b.name, a.dtype) == ("a", "b", "float64") and scalar.ints("i").dtype == "int64"
    assert [t.dtype for t in scalar.float_types] == ["float16", "float32", "float64"]
    assert set(scalar.all_types) == set(scalar.discrete_types) | set(scalar.continuous_types)
    with pytest.raises(TypeError, match="'float128' is not a scalar dtype"):
        scalar.ScalarType("float128")


def test_filter_follows_the_tensor_rules():
    t = scalar.float32
    assert type(t.filter(1.5)) is np.float32 and t.filter(np.int8(3)) == 3
    with pytest.raises(TypeError, match="change when converted to float32"):
        t.filter(np.float64(0.1))
    assert t.filter(np.float64(0.1), allow_downcast=True) == np.float32(0.1)
    with pytest.raises(TypeError, match="strict=True"):
        t.filter(1.5, strict=True)
    with pytest.raises(TypeError, match="symbolic variable"):
        t.filter(scalar.float32("y"))


@pytest.mark.parametrize("value, dtype", [(2, "int8"), (300, "int16"), (2 ** 40, "int64"), (2 ** 63, "uint64"),
                                          (1.5, "float32"), (1.1, "float64"), (float("nan"), "float32"),
                                          (1e300, "float64"), (True, "bool"), (1j, "complex128"),
                                          (np.float16(2), "float16"), (np.int64(2), "int64")])
def test_constant_dtypes(value, dtype):
    c = scalar.constant(value, name="c")
    assert isinstance(c, scalar.ScalarConstant) and c.dtype == dtype and c.name == "c"
    assert c.data.dtype == dtype and (c.data == value or value != value)
    if not isinstance(value, complex):
        assert scalar.constant(value, dtype="float64").dtype == "float64"


def test_constant_refuses_arrays_and_variables():
    with pytest.raises(TypeError, match="takes a number"):
        scalar.constant([1, 2])
    with pytest.raises(TypeError, match="use as_scalar"):
        scalar.constant(scalar.int8("i"))


def test_autocast_float_as_nests_and_reaches_tensor_constants():
    default = scalar.autocast_float.dtypes
    with scalar.autocast_float_as("float32"):
        assert scalar.autocast_float.dtypes == ("float32",)
        assert scalar.constant(1.1).dtype == "float32" and (tensor.fvector() + 1.1).dtype == "float32"
        with scalar.autocast_float_as("float64"):
            assert (tensor.fvector() + 1.5).dtype == "float64"
        assert scalar.autocast_float.dtypes == ("float32",)
    assert scalar.autocast_float.dtypes == default
    assert (tensor.fvector() + 1.1).dtype == "float64" and (tensor.fvector() + 1.5).dtype == "float32"
    with config.change_flags(floatX="float32"):
        assert scalar.constant(1.1).dtype == "float32"


def test_as_scalar():
    x = scalar.int8("x")
    assert scalar.as_scalar(x) is x and scalar.as_scalar(x.owner if x.owner else x) is x
    assert scalar.as_scalar(3).dtype == "int8"
    t = tensor.fscalar("t")
    s = scalar.as_scalar(t)
    assert s.type == scalar.float32 and isinstance(s.owner.op, tensor_conversion().ScalarFromTensor)
    with pytest.raises(TypeError, match="'m' is TensorType.*not a scalar"):
        scalar.as_scalar(tensor.matrix("m"))
    with pytest.raises(TypeError, match="cannot make a scalar of str"):
        scalar.as_scalar("three")


def tensor_conversion():
    from arignote.tensor import scalar_conversion
    return scalar_conversion


# ------------------------------------------------------------------ operators and upcasting
@pytest.mark.parametrize("expr, name", [(lambda x, y: x + y, "add"), (lambda x, y: x - y, "sub"),
                                        (lambda x, y: x * y, "mul"), (lambda x, y: x / y, "true_div"),
                                        (lambda x, y: x // y, "int_div"), (lambda x, y: x % y, "mod"),
                                        (lambda x, y: x ** y, "pow"), (lambda x, y: x < y, "lt"),
                                        (lambda x, y: x <= y, "le"), (lambda x, y: x > y, "gt"),
                                        (lambda x, y: x >= y, "ge"), (lambda x, y: 2 + x, "add"),
                                        (lambda x, y: 2.0 - x, "sub"), (lambda x, y: 3 * x, "mul"),
                                        (lambda x, y: 1 / x, "true_div"), (lambda x, y: 7 // x, "int_div"),
                                        (lambda x, y: 7 % x, "mod"), (lambda x, y: 2 ** x, "pow")])
def test_operators_apply_the_table(expr, name):
    x, y = scalar.float64("x"), scalar.float64("y")
    out = expr(x, y)
    assert out.owner.op is TABLE[name]
    f = function([x, y], out, on_unused_input="ignore")
    got = f(1.5, 0.5)
    want = expr(np.float64(1.5), np.float64(0.5))
    assert type(got) is type(want) and got == want


def test_bitwise_and_unary_operators():
    i, j = scalar.int16("i"), scalar.int16("j")
    f = function([i, j], [i & j, i | j, i ^ j, ~i, -i, abs(j)])
    assert f(12, -10) == [12 & -10, 12 | -10, 12 ^ -10, ~12, -12, 10]
    x = scalar.float64("x")
    assert (x.astype("int32").dtype, x.zeros_like().eval({}), x.ones_like("int8").dtype) == ("int32", 0, "int8")


@pytest.mark.parametrize("a, b, want", [("int8", "int16", "int16"), ("int32", "float32", "float64"),
                                        ("uint8", "int8", "int16"), ("bool", "int8", "int8"),
                                        ("float32", "complex64", "complex64"), ("int64", "uint64", "float64")])
def test_upcast_is_numpy_array_promotion(a, b, want):
    x, y = scalar.ScalarType(a)("x"), scalar.ScalarType(b)("y")
    assert (x + y).dtype == want == scalar.upcast(a, b)


def test_float_results_of_integers():
    i = scalar.int8("i")
    assert scalar.exp(i).dtype == "float32" and scalar.exp(scalar.int32("k")).dtype == "float64"
    assert (i / i).dtype == config.floatX and (i // i).dtype == "int8"
    with config.change_flags(floatX="float32"):
        assert (i / i).dtype == "float32" and (scalar.int32("k") + scalar.float32("f")).dtype == "float32"
    # computed in the output dtype, as Elemwise does: int8 exp in float32, not float16
    assert function([i], scalar.exp(i))(5) == np.exp(np.float32(5))


def test_associative_ops_take_several_inputs():
    x, y, z = scalar.floats("xyz")
    assert function([x, y, z], scalar.add(x, y, z))(1.0, 2.0, 4.0) == 7.0
    assert function([x, y, z], scalar.mul(x, y, z))(1.5, 2.0, 4.0) == 12.0
    with pytest.raises(TypeError, match="sub takes 2 inputs, got 3"):
        scalar.sub(x, y, z)


def test_refusals_name_the_inputs():
    c = scalar.complex64("c")
    with pytest.raises(scalar.ComplexError, match="mod: input 0 \\('c'\\) is complex64.*astype\\('float64'\\)"):
        c % scalar.int32("n")
    assert issubclass(scalar.ComplexError, TypeError)
    b = scalar.bool("b")
    with pytest.raises(TypeError, match="sub is not defined for bool inputs"):
        b - b
    with pytest.raises(TypeError, match="and_: input 0 \\('x'\\) is float64"):
        scalar.float64("x") & scalar.int8("i")


# ------------------------------------------------------------------ every op vs Elemwise and numpy
def _cases():
    for name, op in TABLE.items():
        for dtype in DTYPES:
            dtypes = [dtype] * op.nin
            if name == "switch":
                dtypes = ["bool", dtype, dtype]
            try:
                op.output_dtype(*dtypes)
            except TypeError:
                continue
            yield name, dtypes


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name, dtypes", list(_cases()))
def test_every_op_matches_elemwise_on_0d_tensors(name, dtypes):
    op = TABLE[name]
    values = [point(d, k) for k, d in enumerate(dtypes)]
    svars = [scalar.ScalarType(d)(f"s{k}") for k, d in enumerate(dtypes)]
    tvars = [tensor.TensorType(d, ())(f"t{k}") for k, d in enumerate(dtypes)]
    got = function(svars, op(*svars))(*values)
    want = function(tvars, Elemwise(op)(*tvars))(*[np.asarray(v) for v in values])
    assert isinstance(got, np.generic) and got.dtype == want.dtype == op.output_dtype(*dtypes)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "float64"])
def test_values_against_numpy(dtype):
    x, y = scalar.ScalarType(dtype)("x"), scalar.ScalarType(dtype)("y")
    a, b = np.dtype(dtype).type(7), np.dtype(dtype).type(-3)
    f = function([x, y], [x + y, x * y, x // y, x % y, scalar.maximum(x, y), scalar.sqr(y), x > y])
    for got, want in zip(f(a, b), [a + b, a * b, a // b, a % b, max(a, b), b * b, a > b]):
        assert got == want and got.dtype == np.asarray(want).dtype


# ------------------------------------------------------------------ gradients
DIFFERENTIABLE = ["add", "sub", "mul", "true_div", "pow", "maximum", "minimum", "arctan2", "neg", "abs",
                  "sqr", "sqrt", "inv", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                  "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arctanh",
                  "deg2rad", "rad2deg", "sigmoid", "softplus", "erf", "erfc", "gammaln", "identity"]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_match_finite_differences(name):
    op = TABLE[name]
    xs = [scalar.float64(f"x{k}") for k in range(op.nin)]
    at = [0.3 + 0.25 * k for k in range(op.nin)]
    out = op(*xs)
    grads = grad(out, xs)
    assert all(g.type == scalar.float64 for g in grads)
    f, df = function(xs, out), function(xs, grads)
    eps = 1e-6
    for k, g in enumerate(df(*at)):
        up, down = list(at), list(at)
        up[k] += eps
        down[k] -= eps
        np.testing.assert_allclose(g, (f(*up) - f(*down)) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_gradient_of_a_chain_and_of_flat_ops():
    x, y = scalar.floats("xy")
    z = scalar.exp(x) * y + scalar.sin(x * y)
    gx, gy = function([x, y], grad(z, [x, y]))(0.5, 2.0)
    np.testing.assert_allclose([gx, gy], [np.exp(0.5) * 2 + np.cos(1.0) * 2, np.exp(0.5) + np.cos(1.0) * 0.5])
    assert grad(x > y, y).eval({x: 1.0, y: 1.0}) == 0.0
    i = scalar.int8("i")
    assert grad(scalar.exp(i), i).dtype == "float32"  # an integer's gradient is a float (exp's dtype)
    gz = scalar.float64("gz")
    (g,) = scalar.exp.grad([x], [gz])
    assert g.type == scalar.float64 and function([x, gz], g)(0.0, 3.0) == 3.0
