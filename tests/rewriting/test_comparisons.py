"""Comparisons and logic the graph decides: self-comparisons, logic with constants, and
comparisons of lengths with constants."""
import numpy as np
import pytest

from arignote import function
from arignote import tensor as T
from arignote.tensor.checks import assert_op
from tests.rewriting.rewrite_utils import check_same_values, op_names, phase_mode

CANON = phase_mode("canonicalize")
x = T.dvector("x")
y = T.dvector("y")
i8 = T.bvector("i8")
flag = T.vector("flag", dtype="bool")
VALUES = {x: np.array([1.0, np.nan, -2]), y: np.arange(4.0), i8: np.array([0, 5, -3], dtype="int8"),
          flag: np.array([True, False, True])}


def _compiled(out, *inputs):
    return check_same_values(list(inputs), out, CANON, [VALUES[v] for v in inputs])


@pytest.mark.parametrize("build, var", [
    (lambda: T.lt(x, x), x), (lambda: T.gt(x, x), x), (lambda: T.eq(i8, i8), i8), (lambda: T.le(i8, i8), i8),
    (lambda: T.neq(i8, i8), i8), (lambda: T.xor(i8, i8), i8), (lambda: T.and_(i8, 0), i8), (lambda: T.and_(0, i8), i8),
    (lambda: T.or_(flag, True), flag), (lambda: T.and_(flag, True), flag), (lambda: T.or_(i8, 0), i8),
    (lambda: T.maximum(x, x), x),
], ids=["x<x", "x>x", "i==i", "i<=i", "i!=i", "xor", "and0", "0and", "flag|1", "flag&1", "or0", "max(x,x)"])
def test_decided_comparisons_and_logic_leave_no_op(build, var):
    f = _compiled(build(), var)
    assert not [n for n in op_names(f) if n not in ("Shape_i", "Alloc", "DeepCopyOp")]


@pytest.mark.parametrize("build, var", [
    (lambda: T.eq(x, x), x), (lambda: T.le(x, x), x), (lambda: T.or_(i8, 1), i8), (lambda: T.and_(i8, 1), i8),
], ids=["x==x (NaN)", "x<=x (NaN)", "int or 1 is bitwise", "int and 1 is bitwise"])
def test_comparisons_a_value_could_change_stay(build, var):
    f = _compiled(build(), var)
    assert len(op_names(f)) == 1


@pytest.mark.parametrize("build, expected", [
    (lambda: T.lt(x.shape[0], 0), False), (lambda: T.ge(x.shape[0] + y.shape[0], 0), True),
    (lambda: T.eq(x.shape[0], -1), False), (lambda: T.neq(-1, x.shape[0] * y.shape[0]), True),
    (lambda: T.gt(x.shape[0], -1), True), (lambda: T.le(0, x.shape[0]), True),
], ids=["n<0", "n+m>=0", "n==-1", "-1!=n*m", "n>-1", "0<=n"])
def test_comparisons_of_lengths_with_constants_are_decided(build, expected):
    f = _compiled(build(), x, y)
    assert op_names(f) == ["DeepCopyOp"]  # a constant output is copied
    assert bool(f(VALUES[x], VALUES[y])) is expected


def test_a_comparison_a_length_could_go_either_way_stays():
    f = _compiled(T.gt(x.shape[0], 2), x, y)
    assert "gt" in op_names(f)
    f = _compiled(T.lt(x.shape[0] - y.shape[0], 0), x, y)  # a difference of lengths may be negative
    assert "lt" in op_names(f)


def test_a_length_check_that_always_holds_is_removed():
    f = _compiled(assert_op(x * 2, T.ge(x.shape[0], 0)), x)
    assert "Assert" not in op_names(f)
    f = _compiled(T.maximum(x.shape[0], 0) + 1, x)
    assert "maximum" not in op_names(f)


def test_an_assert_keeps_the_conditions_not_decided():
    n = T.lscalar("n")
    f = check_same_values([x, n], assert_op(x, T.ge(x.shape[0], 0), T.gt(n, 0)), CANON, [VALUES[x], 3])
    (node,) = [v for v in f.maker.fgraph.toposort() if type(v.op).__name__ == "Assert"]
    assert len(node.inputs) == 2
    with pytest.raises(AssertionError):
        f(VALUES[x], 0)
    f = function([x], assert_op(x, T.lt(x.shape[0], 0)), mode=CANON)  # decided false: still fails
    with pytest.raises(AssertionError):
        f(VALUES[x])


def test_removing_every_assert_is_opt_in():
    n = T.lscalar("n")
    out = assert_op(x * 2, T.gt(n, 0))
    with pytest.raises(AssertionError):
        function([x, n], out)(VALUES[x], 0)
    f = function([x, n], out, mode=CANON.including("local_remove_all_assert"))
    assert "Assert" not in op_names(f)
    np.testing.assert_array_equal(f(VALUES[x], 0), VALUES[x] * 2)
