"""TensorVariable: operators with Python scalars and numpy arrays on either side,
numpy's ufuncs on variables, the refusals of truth value, iteration and len,
attributes, constructors, reprs."""
from __future__ import annotations

import operator

import numpy as np
import pytest

from arignote import config, tensor
from arignote.tensor.type import TensorType
from arignote.tensor.variable import TensorConstant, TensorVariable, as_tensor_variable, constant
from tests.utils import NUMPY_FP_WARNINGS_ONLY, assert_matches, run

pytestmark = NUMPY_FP_WARNINGS_ONLY

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow, operator.lt, operator.le, operator.gt, operator.ge]
BITWISE = [operator.and_, operator.or_, operator.xor]
X = np.array([1.5, -2.0, 3.0])


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", [2, 0.5, np.array([0.5, 2.0, -1.0]), np.float64(3.0)],
                         ids=["int", "float", "array", "npscalar"])
def test_binary_operators_on_either_side(op, other):
    x = tensor.dvector("x")
    for symbolic, expected in [(op(x, other), op(X, other)), (op(other, x), op(other, X))]:
        assert isinstance(symbolic, TensorVariable), type(symbolic)
        assert_matches(run([x], symbolic, X), np.asarray(expected))


@pytest.mark.parametrize("op", BITWISE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", [3, np.array([1, 2, 3], "int32"), True], ids=["int", "array", "bool"])
def test_bitwise_operators_on_either_side(op, other):
    i = tensor.ivector("i")
    values = np.array([5, 6, 7], "int32")
    for symbolic, expected in [(op(i, other), op(values, other)), (op(other, i), op(other, values))]:
        assert isinstance(symbolic, TensorVariable)
        assert_matches(run([i], symbolic, values), expected.astype(symbolic.dtype))


def test_numpy_array_on_the_left_builds_a_graph():
    x = tensor.dvector("x")
    for result in [np.ones(3) + x, np.ones(3) * x, np.ones(3) < x, np.ones(3) - x, np.ones(3) ** x]:
        assert isinstance(result, TensorVariable), type(result)
    assert_matches(run([x], np.ones(3) - x, X), 1 - X)
    assert_matches(run([x], np.float32(2) * x, X), 2 * X)


UFUNCS = [np.arccos, np.arcsin, np.arctan, np.arctanh, np.ceil, np.cos, np.cosh, np.deg2rad, np.exp,
          np.exp2, np.expm1, np.floor, np.log, np.log10, np.log1p, np.log2, np.rad2deg, np.sin,
          np.sinh, np.sqrt, np.tan, np.tanh, np.trunc, np.negative, np.absolute, np.sign]


@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numpy_ufuncs_build_the_graph(ufunc, dtype):
    x = tensor.matrix("x", dtype=dtype)
    values = np.random.default_rng(0).uniform(0.05, 0.95, (3, 4)).astype(dtype)
    symbolic = ufunc(x)
    assert isinstance(symbolic, TensorVariable), type(symbolic)
    assert_matches(run([x], symbolic, values), ufunc(values), rtol=1e-5 if dtype == "float32" else None)


def test_numpy_binary_ufuncs_and_matmul_build_the_graph():
    x, m = tensor.dvector("x"), tensor.dmatrix("m")
    other = np.array([0.5, 2.0, -1.0])
    for ufunc in [np.add, np.subtract, np.true_divide, np.maximum, np.arctan2, np.power]:
        assert_matches(run([x], ufunc(other, x), X), ufunc(other, X))
        assert_matches(run([x], ufunc(x, other), X), ufunc(X, other))
    square = np.arange(9.0).reshape(3, 3)
    assert_matches(run([m], square @ m, square), square @ square)
    assert isinstance(np.ones(3) > x, TensorVariable)
    # ``==`` keeps comparing identities, from either side (Theano's ``==``)
    assert (np.ones(3) == x) is False and (np.ones(3) != x) is True and (x == np.ones(3)) is False


def test_numpy_ufunc_without_a_symbolic_form_is_refused_clearly():
    x = tensor.dvector("x")
    with pytest.raises(TypeError, match=r"numpy's add.reduce has no symbolic form for 'x'"):
        np.add.reduce(x)
    with pytest.raises(TypeError, match="add with out"):
        np.add(x, 1.0, out=np.zeros(3))


def test_unary_operators():
    x, i = tensor.dvector("x"), tensor.ivector("i")
    values = np.array([1, -2, 3], "int32")
    assert_matches(run([x], -x, X), -X)
    assert_matches(run([x], abs(x), X), np.abs(X))
    assert +x is x
    assert_matches(run([i], ~i, values), ~values)


def test_operators_with_two_variables_and_constants():
    x, y = tensor.dvector("x"), tensor.dmatrix("y")
    yv = np.arange(6.0).reshape(2, 3)
    assert_matches(run([x, y], (x + y) * 2 - y / (x + 10), X, yv), (X + yv) * 2 - yv / (X + 10))
    c = constant(np.array([1.0, 2.0, 3.0]))
    assert isinstance(c + x, TensorVariable)
    assert_matches(run([x], c * x, X), X * [1, 2, 3])


def test_equality_keeps_identity_semantics():
    x = tensor.vector("x")
    assert (x == x) is True and (x != tensor.vector()) is True
    assert {x: 1}[x] == 1
    assert tensor.eq(x, 1).dtype == "bool"


@pytest.mark.parametrize("action, error, match", [
    (iter, ValueError, "'x' is not known"), (lambda v: list(v), ValueError, "'x' is not known"),
    (len, TypeError, "len"),
])
def test_iterating_a_vector_of_unknown_length_and_len_raise(action, error, match):
    """Theano's rule: ValueError (length not known) for a vector, TypeError for len()."""
    x = tensor.vector("x")
    with pytest.raises(error, match=match):
        action(x)
    with pytest.raises(error, match=match.replace("'x'", "")):
        action(x > 0)


@pytest.mark.parametrize("make", [tensor.scalar, tensor.matrix])
def test_iterating_a_non_vector_raises_type_error(make):
    with pytest.raises(TypeError, match="cannot iterate over symbolic 'm', which has"):
        list(make("m"))


def test_unpacking_a_shape_computes_each_length():
    """``n, d = X.shape`` (and ``tensor.shape(X)``) unpack into scalars that compute."""
    X, t3 = tensor.matrix("X"), tensor.tensor3("t3")
    n, d = X.shape
    rows, cols = tensor.shape(X)
    a, b = t3.shape[1:]
    c, = t3.shape[-1:]
    outs = run([X, t3], [n * 10 + d, rows - cols, a, b, c], np.zeros((3, 4)), np.zeros((5, 6, 7)))
    assert [int(o) for o in outs] == [34, -1, 6, 7, 7]


def test_unpacking_a_stack_of_scalars_and_a_constant():
    a, b = tensor.dscalar("a"), tensor.dscalar("b")
    p, q = tensor.stack([a, b])
    u, v, w = constant(np.array([4.0, 5.0, 6.0]))
    outs = run([a, b], [p * q, q - p, u + v * w], 2.0, 7.0)
    assert_matches(np.array([float(o) for o in outs]), np.array([14.0, 5.0, 34.0]))


def test_truth_value_as_theano():
    """Every variable is true (``if not W:`` tests for a missing one), except the results
    of the comparison operators, which raise: ``a < b < c`` must not drop ``a < b``."""
    x, W = tensor.vector("x"), shared_zeros()
    assert bool(x) and bool(W) and bool(x + 1) and bool(tensor.lt(x, 0)) and bool(tensor.constant(0))
    for comparison in (x > 0, x < 0, x >= 0, x <= 0, W < x):
        with pytest.raises(TypeError, match="truth value of the comparison .*switch"):
            bool(comparison)
    with pytest.raises(TypeError, match="a < b < c"):
        _ = 0 < x < 1


def shared_zeros():
    from arignote import shared
    return shared(np.zeros(3), name="W")


def test_attributes():
    x = tensor.tensor("int16", (False, True, False), name="x")
    assert x.ndim == 3 and x.dtype == "int16" and x.broadcastable == (False, True, False)
    assert x.type == TensorType("int16", (False, True, False))
    assert x.T.broadcastable == (False, True, False)
    assert x.transpose(1, 0, 2).broadcastable == (True, False, False)
    assert x.transpose((2, 1, 0)).broadcastable == (False, True, False)
    assert x.astype("float32").dtype == "float32"
    with pytest.raises(ValueError, match="permutation"):
        x.transpose(0, 0, 1)


def test_transpose_values():
    m = tensor.dmatrix("m")
    values = np.arange(6.0).reshape(2, 3)
    assert_matches(run([m], m.T, values), values.T)
    t = tensor.dtensor3("t")
    cube = np.arange(24.0).reshape(2, 3, 4)
    assert_matches(run([t], t.transpose(1, 2, 0), cube), cube.transpose(1, 2, 0))
    assert_matches(run([t], t.transpose(-1, 0, 1), cube), cube.transpose(2, 0, 1))


def test_eval():
    x, y = tensor.dvector("x"), tensor.dvector("y")
    out = x * 2 + y
    assert_matches(out.eval({x: X, y: np.ones(3)}), X * 2 + 1)
    assert_matches(out.eval({x: X, y: np.zeros(3)}), X * 2)
    assert_matches(constant(np.arange(3)).eval(), np.arange(3))
    assert_matches((constant(2.0) * 3).eval(), np.asarray(6.0, "float32"))


# ------------------------------------------------------------------ constructors
KINDS = {"scalar": (), "vector": (False,), "matrix": (False, False), "row": (True, False),
         "col": (False, True), "tensor3": (False,) * 3, "tensor4": (False,) * 4,
         "tensor5": (False,) * 5}
PREFIXES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32",
            "d": "float64", "c": "complex64", "z": "complex128"}


@pytest.mark.parametrize("kind", KINDS)
def test_constructors(kind):
    for prefix, dtype in PREFIXES.items():
        var = getattr(tensor, prefix + kind)("v")
        assert isinstance(var, TensorVariable)
        assert (var.dtype, var.broadcastable, var.name) == (dtype, KINDS[kind], "v")
    assert getattr(tensor, kind)().dtype == "float64"
    assert getattr(tensor, kind)(dtype="int8").dtype == "int8"
    with config.change_flags(floatX="float32"):
        assert getattr(tensor, kind)().dtype == "float32"


def test_tensor_constructor():
    var = tensor.tensor("float32", (False, True), name="t")
    assert (var.dtype, var.broadcastable, var.name) == ("float32", (False, True), "t")
    assert tensor.tensor(shape=(None, 1)).broadcastable == (False, True)
    assert tensor.tensor().dtype == "float64"
    with pytest.raises(TypeError, match="unsupported dtype"):
        tensor.tensor("float128", ())


@pytest.mark.parametrize("var, text", [
    (lambda: tensor.fvector().type, "TensorType(float32, vector)"),
    (lambda: tensor.dmatrix().type, "TensorType(float64, matrix)"),
    (lambda: tensor.brow().type, "TensorType(int8, row)"),
    (lambda: tensor.lcol().type, "TensorType(int64, col)"),
    (lambda: tensor.iscalar().type, "TensorType(int32, scalar)"),
    (lambda: tensor.ftensor3().type, "TensorType(float32, tensor3)"),
    (lambda: tensor.tensor("float32", (True, True, False)).type,
     "TensorType(float32, (True, True, False))"),
    (lambda: tensor.exp(tensor.vector()).owner.op, "Elemwise{exp,no_inplace}"),
    (lambda: tensor.vector("x"), "x"),
    (lambda: tensor.exp(tensor.vector()), "Elemwise{exp,no_inplace}.0"),
])
def test_reprs(var, text):
    assert repr(var()) == text


# ------------------------------------------------------------------ constants
@pytest.mark.parametrize("value, dtype", [
    (1, "int8"), (1000, "int16"), (-40000, "int32"), (2**40, "int64"), (2**63, "uint64"),
    (True, "bool"), (1.5, "float32"), (1.1, "float64"), (1e300, "float64"), (float("nan"), "float32"),
    (1j, "complex128"), (np.float64(1.5), "float64"), (np.int16(3), "int16"),
    (np.arange(3, dtype="uint8"), "uint8"), ([1, 2], "int64"),
])
def test_constant_dtypes_under_default_floatx(value, dtype):
    assert constant(value).dtype == dtype


def test_python_floats_take_floatx_when_it_is_narrower():
    with config.change_flags(floatX="float32"):
        assert constant(1.1).dtype == "float32"
        assert constant(1e300).dtype == "float32"
        assert constant(np.float64(1.1)).dtype == "float64"
    with config.change_flags(floatX="float16"):
        assert constant(0.5).dtype == "float16"


def test_constant_types_and_errors():
    c = constant(np.ones((1, 3)), name="c")
    assert isinstance(c, TensorConstant) and c.broadcastable == (True, False) and str(c) == "c"
    assert constant(2, dtype="floatX").dtype == "float64"
    assert str(constant(2.5)) == "2.5"
    with pytest.raises(TypeError, match="constant"):
        constant(object())
    with pytest.raises(TypeError, match="dimensions"):
        constant([1, 2], ndim=2)


def test_as_tensor_variable():
    x = tensor.vector("x")
    assert as_tensor_variable(x) is x
    assert isinstance(as_tensor_variable(3), TensorConstant)
    with pytest.raises(ValueError, match="expected 0 dimensions"):  # Theano's class
        as_tensor_variable(x, ndim=0)


def test_fill_and_get_scalar_constant_value_methods():
    """Theano's TensorVariable.fill(value) and get_scalar_constant_value()."""
    from arignote.tensor import NotScalarConstantError, get_scalar_constant_value
    x = tensor.dmatrix("x")
    v = np.arange(6.0).reshape(2, 3)
    out = run([x], x.fill(7), v)
    np.testing.assert_array_equal(out, np.full((2, 3), 7.0))
    assert run([x], x.fill(tensor.constant(2, dtype="int8")), v).dtype == np.int8  # the value's (Theano)
    c = tensor.constant(3.0)
    assert c.get_scalar_constant_value() == 3.0
    assert get_scalar_constant_value(tensor.cast(c * 2 + 1, "float32")) == 7.0
    assert get_scalar_constant_value(tensor.cast(c * 2, "float32")).dtype == np.float32
    assert get_scalar_constant_value(tensor.constant(np.full((2, 2), 4))) == 4
    assert get_scalar_constant_value(5) == 5
    for bad in (x, x.sum(), tensor.constant(np.array([1, 2]))):
        with pytest.raises(NotScalarConstantError, match="does not fix one value"):
            get_scalar_constant_value(bad)
    with pytest.raises(NotScalarConstantError):
        get_scalar_constant_value(c + 1, only_process_constants=True)
    assert get_scalar_constant_value(c + 1, elemwise=True) == 4.0
    with pytest.raises(NotScalarConstantError):
        get_scalar_constant_value(c + 1, elemwise=False)
    row = tensor.TensorType("float64", (True, False))("row")
    assert get_scalar_constant_value(row.shape[0]) == 1


def test_tensor_constant_value_is_its_data():
    c = constant(np.arange(3.0))
    assert c.value is c.data


def test_values_eq_approx_is_static_with_theanos_nan_and_inf_rules():
    a = np.asarray([-np.inf, -1, 0, 1, np.inf, np.nan])
    eq = TensorType.values_eq_approx
    assert eq(a, a) and tensor.dvector().type.values_eq_approx(a, a)
    assert not eq(a, np.asarray([np.inf, -1, 0, 1, np.inf, np.nan]))
    assert not eq(a, np.asarray([-np.inf, -1, 0, 1, -np.inf, np.nan]))
    assert eq(a, np.asarray([-np.inf, -1, 0, 1, 5, np.nan]), allow_remove_inf=True)
    assert not eq(a, np.asarray([-np.inf, -1, 0, 1, 5, 6]), allow_remove_inf=True)
    assert eq(a, np.asarray([-np.inf, -1, 0, 1, np.inf, 6]), allow_remove_nan=True)
    assert not eq(a, np.asarray([-np.inf, -1, 0, 1, np.inf, 6]))
    # the narrower dtype's tolerances: float32's atol is 1e-5, float64's 1e-8
    assert eq(np.float32(0), np.float64(5e-6)) and not eq(0.0, 5e-6)
    assert eq(0.0, 5e-6, atol=1e-5) and not eq(np.zeros(2), np.zeros(3))
    assert eq(np.arange(3), np.arange(3)) and not eq(np.arange(3), np.arange(3) + 1)


def test_theanos_module_level_comparisons():
    from arignote.tensor import type as ttype
    a = np.asarray([1.0, np.inf, np.nan])
    assert ttype.values_eq_approx_remove_nan(a, np.asarray([1.0, np.inf, 7.0]))
    assert not ttype.values_eq_approx_remove_nan(a, np.asarray([1.0, 3.0, 7.0]))
    assert ttype.values_eq_approx_remove_inf(a, np.asarray([1.0, 3.0, np.nan]))
    assert not ttype.values_eq_approx_remove_inf(a, np.asarray([1.0, 3.0, 7.0]))
    assert ttype.values_eq_approx_remove_inf_nan(a, np.asarray([1.0, 3.0, 7.0]))
    assert not ttype.values_eq_approx_remove_inf_nan(a, np.asarray([2.0, 3.0, 7.0]))
    assert ttype.values_eq_approx_always_true(a, np.zeros(5))


class _PickOutput:
    """An op whose default_output is given: Theano's way of naming the output of a node."""

    def __new__(cls, index, n_outputs=1):
        from arignote.graph.basic import Apply, Op

        class Pick(Op):
            default_output = index

            def make_node(self, x):
                x = as_tensor_variable(x)
                return Apply(self, [x], [x.type() for _ in range(n_outputs)])

        return Pick()


def test_as_tensor_variable_of_an_apply_node_is_its_default_output():
    x = tensor.scalar("x")
    node = _PickOutput(1, 2).make_node(x)
    assert as_tensor_variable(node) is node.outputs[1]
    assert as_tensor_variable(_PickOutput(None).make_node(x)).owner.inputs[0] is x
    for bad in (-1, 2, [0, 1]):
        with pytest.raises(AttributeError, match="default_output"):
            as_tensor_variable(_PickOutput(bad, 2).make_node(x))
    with pytest.raises(ValueError, match="ambiguous"):
        as_tensor_variable(_PickOutput(None, 2).make_node(x))


def test_as_tensor_variable_ndim_drops_or_adds_broadcastable_dimensions():
    row = TensorType("float64", (True, False))("r")
    v = as_tensor_variable(row, ndim=1)
    assert v.ndim == 1 and v.owner.inputs[0] is row
    assert_matches(run([row], v, np.ones((1, 3))), np.ones(3))
    padded = as_tensor_variable(tensor.vector("v"), ndim=3)
    assert padded.broadcastable == (True, True, False)
    assert as_tensor_variable(5, ndim=1).broadcastable == (True,)
    with pytest.raises(ValueError, match="only leading broadcastable dimensions can be dropped"):
        as_tensor_variable(tensor.matrix("m"), ndim=1)


@pytest.mark.parametrize("floatx", ["float16", "float32", "float64"])
def test_an_empty_list_is_a_floatx_constant(floatx):
    with config.change_flags(floatX=floatx):
        assert as_tensor_variable([]).dtype == floatx and as_tensor_variable(()).dtype == floatx
        assert as_tensor_variable([[]]).shape.ndim == 1 and as_tensor_variable([[]]).ndim == 2
    assert as_tensor_variable(np.array([])).dtype == "float64"  # numpy's own dtype stands


def test_value_zeros_gives_an_ops_perform_a_zero_array_of_the_types_dtype():
    row = TensorType("float32", (True, False))
    zeros = row.value_zeros((1, 4))
    assert zeros.dtype == np.float32 and zeros.shape == (1, 4) and not zeros.any()
    with pytest.raises(ValueError, match="2 dimensions, got shape"):
        row.value_zeros((4,))
