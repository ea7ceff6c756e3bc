"""Functions undone by the next one: elementwise inverses and casts through a wider dtype."""
import numpy as np
import pytest

from arignote import function
from arignote import tensor as T
from tests.rewriting.rewrite_utils import check_same_values, op_names, phase_mode

CANON = phase_mode("canonicalize")
x = T.dvector("x")
VALUES = np.array([-30.0, -2, -0.5, 0, 0.25, 3, 30])


@pytest.mark.parametrize("build", [
    lambda: T.rad2deg(T.deg2rad(x)), lambda: T.deg2rad(T.rad2deg(x)), lambda: T.arcsinh(T.sinh(x)),
    lambda: T.sinh(T.arcsinh(x)), lambda: T.arctanh(T.tanh(x)), lambda: T.conj(T.conj(x)),
], ids=["rad2deg(deg2rad)", "deg2rad(rad2deg)", "arcsinh(sinh)", "sinh(arcsinh)", "arctanh(tanh)", "conj2"])
def test_a_function_and_its_inverse_cancel(build):
    f = function([x], build(), mode=CANON)
    assert op_names(f) == ["DeepCopyOp"]  # the output is x, copied
    np.testing.assert_array_equal(f(VALUES), VALUES)  # exact, even where tanh(30) rounds to 1


@pytest.mark.parametrize("build", [lambda: T.arccosh(T.cosh(x)), lambda: T.tanh(T.arctanh(x))],
                         ids=["arccosh(cosh) = |x|", "tanh(arctanh) NaN outside (-1, 1)"])
def test_pairs_inverse_on_part_of_the_line_stay(build):
    f = check_same_values([x], build(), CANON, [VALUES])
    assert len(op_names(f)) == 2


@pytest.mark.parametrize("src, mid, dst, casts", [
    ("float32", "float64", "float32", 0), ("int8", "int64", "float64", 1), ("float32", "complex64", "complex128", 1),
    ("float64", "float32", "float64", 2), ("int64", "int8", "int64", 2),
], ids=["f32-f64-f32", "i8-i64-f64", "f32-c64-c128", "f64-f32-f64 rounds", "i64-i8-i64 wraps"])
def test_a_cast_through_a_wider_dtype_is_one_cast(src, mid, dst, casts):
    v = T.vector("v", dtype=src)
    f = check_same_values([v], T.cast(T.cast(v, mid), dst), CANON, [np.array([1.5, -3, 300.25]).astype(src)])
    names = op_names(f)
    assert (names == ["DeepCopyOp"]) if casts == 0 else (len(names) == casts)  # no cast: v, copied
