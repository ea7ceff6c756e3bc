"""The functions of arignote.tensor.math: one per scalar-table entry, cast, round,
clip, switch/where, and Theano's other spellings of them."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import tensor
from arignote.scalar.ops import TABLE
from arignote.tensor import math as tmath
from arignote.tensor.type import TensorType
from tests.tensor.test_elemwise import ALL, BOOL, COMPLEX, FLOATS, INTS, make_values
from tests.utils import NUMPY_FP_WARNINGS_ONLY, assert_matches, run

pytestmark = NUMPY_FP_WARNINGS_ONLY


def test_every_table_entry_is_a_tensor_function():
    for name in TABLE:
        assert name in tmath.__all__
        assert getattr(tensor, name) is getattr(tmath, name)
        assert getattr(tensor, name).__name__ == name


@pytest.mark.parametrize("source", ALL)
def test_cast_to_every_dtype(source, rng):
    values = make_values(rng, (2, 3), source)
    if source in FLOATS + COMPLEX:
        values = np.abs(values)  # casting negatives to unsigned is undefined behaviour in C
    x = TensorType(source, (False, False))("x")
    for target in ALL:
        if source in COMPLEX and target not in COMPLEX:
            with pytest.raises(TypeError, match="real"):
                tensor.cast(x, target)
            continue
        out = tensor.cast(x, target)
        assert out.dtype == target
        assert_matches(run([x], out, values), values.astype(target))


def test_cast_to_the_same_dtype_adds_no_node_and_floatx_is_resolved():
    x = tensor.fvector("x")
    assert tensor.cast(x, "float32") is x
    assert tensor.cast(x, "floatX").dtype == "float64"
    assert x.astype("int16").dtype == "int16"
    assert str(tensor.cast(x, "int8").owner.op) == "Elemwise{convert_to_int8,no_inplace}"


def test_round_modes():
    x = tensor.dvector("x")
    values = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999999999999994, -0.49999999999999994])
    away = run([x], tensor.round(x), values)
    assert_matches(away, np.array([-3, -2, -1, 1, 2, 3, 0, 0], "float64"))
    assert_matches(run([x], x.round("half_to_even"), values), np.rint(values))
    assert_matches(run([x], x.round("half_away_from_zero"), values), away)
    with pytest.raises(ValueError, match="half_to_even"):
        tensor.round(x, "up")


def test_round_of_integers_is_float():
    x = tensor.bvector("x")
    assert tensor.round(x).dtype == "float32"


def test_clip_and_its_method():
    x = tensor.fmatrix("x")
    values = np.linspace(-2, 2, 12, dtype="float32").reshape(3, 4)
    assert_matches(run([x], x.clip(-1, 0.5), values), np.clip(values, -1, 0.5))
    lo = tensor.fvector("lo")
    assert_matches(run([x, lo], tensor.clip(x, lo, 1.0), values, np.array([0, -1, 1, 0], "f")),
                   np.clip(values, np.array([0, -1, 1, 0], "f"), 1.0))


@pytest.mark.parametrize("size", [12, 50_000], ids=["numpy", "native kernel"])
def test_clip_with_lo_above_hi_gives_lo_below_it_and_hi_elsewhere(size):
    # Theano's clip; numpy's gives hi everywhere.
    x = tensor.dvector("x")
    values = np.linspace(-3, 3, size)
    expected = np.select([values < 1, values > -1], [1.0, -1.0], values)
    assert_matches(run([x], tensor.clip(x, 1, -1), values), expected)
    assert set(np.unique(expected)) == {-1.0, 1.0}


def test_clip_gradient_where_the_bounds_are_the_input():
    from arignote.gradient import verify_grad
    rng = np.random.default_rng(3)
    point = rng.uniform(0.1, 1, (3, 7)) * rng.choice([-1, 1], (3, 7))  # away from 0
    for build in (lambda x: tensor.clip(x, 0, x), lambda x: tensor.clip(x, x, 0),
                  lambda x: tensor.clip(0, x, x), lambda x: tensor.clip(x, x, x)):
        verify_grad(build, [point], rng=rng)


def test_op_grad_of_an_associative_op_takes_any_number_of_inputs():
    # Theano's Op.grad(inputs, output_grads) of T.add / T.mul with three inputs.
    x, y, z, g = (tensor.dvector(n) for n in "xyzg")
    gx, gy, gz = tensor.mul.grad([x, y, z], [g])
    values = [np.array([2.0, 1.0]), np.array([3.0, -1.0]), np.array([5.0, 4.0]), np.array([1.0, 2.0])]
    got = run([x, y, z, g], [gx, gy, gz], *values)
    x_, y_, z_, g_ = values
    for actual, expected in zip(got, [g_ * y_ * z_, g_ * x_ * z_, g_ * x_ * y_]):
        assert_matches(actual, expected)
    sums = run([x, y, z, g], tensor.add.grad([x, y, z], [g]), *values)
    for actual in sums:
        assert_matches(actual, g_)


def test_switch_and_where_with_broadcasting():
    c, a, b = tensor.bcol("c"), tensor.fmatrix("a"), tensor.dscalar("b")
    assert tensor.where is tensor.switch
    cond = np.array([[1], [0]], "int8")
    av = np.arange(6, dtype="float32").reshape(2, 3)
    out = run([c, a, b], tensor.switch(c, a, b), cond, av, np.float64(-1))
    assert_matches(out, np.where(cond, av, np.float64(-1)))
    assert tensor.switch(c, a, 2).dtype == "float32"


def test_associative_functions_take_many_inputs():
    xs = [tensor.dvector(f"x{i}") for i in range(4)]
    values = [np.full(2, float(i + 1)) for i in range(4)]
    assert_matches(run(xs, tensor.add(*xs), *values), np.full(2, 10.0))
    assert_matches(run(xs, tensor.maximum(*xs), *values), np.full(2, 4.0))
    assert_matches(run(xs[:1], tensor.mul(xs[0]), values[0]), values[0])  # Theano's one-term product
    with pytest.raises(TypeError, match="at least 1"):
        tensor.mul()


def test_theano_aliases():
    for alias, name in [("abs_", "abs"), ("true_divide", "true_div"), ("floor_div", "int_div"),
                        ("tensor_copy", "identity"), ("bitwise_and", "and_"), ("bitwise_not", "invert"),
                        ("power", "pow"), ("sign", "sgn"), ("reciprocal", "inv")]:
        assert getattr(tensor, alias) is getattr(tensor, name)




@pytest.mark.parametrize("name", ["isnan", "isinf"])
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(), (3,), (2, 0), (2, 3)])
def test_isnan_isinf_of_integers_allocate_false_and_the_underscore_ops_test(name, dtype, shape, rng):
    from arignote.tensor.alloc import Alloc
    from arignote.tensor.elemwise import Elemwise
    x = TensorType(dtype, (False,) * len(shape))("x")
    values = make_values(rng, shape, dtype)
    if dtype in FLOATS + COMPLEX and values.size:
        values.flat[0] = np.nan if name == "isnan" else np.inf
    expected = getattr(np, name)(values)
    y, raw = getattr(tensor, name)(x), getattr(tensor, name + "_")(x)
    assert y.dtype == raw.dtype == "bool"
    assert isinstance(raw.owner.op, Elemwise) and raw.owner.op == getattr(tensor, name)
    if dtype in BOOL + INTS:
        assert isinstance(y.owner.op, Alloc)  # known without reading x
    else:
        assert y.owner.op == getattr(tensor, name)
    assert_matches(np.asarray(run([x], y, values)), expected)
    assert_matches(np.asarray(run([x], raw, values)), expected)
