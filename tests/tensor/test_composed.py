"""Theano's numpy-style functions made of other ops (tensor/composed.py) and the TensorVariable
methods that reach them, against numpy, with finite-difference gradients."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T, verify_grad
from tests.utils import NUMPY_FP_WARNINGS_ONLY

pytestmark = NUMPY_FP_WARNINGS_ONLY  # isclose of infinities subtracts them (numpy.isclose hides that)

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("shape, reps", [((3,), [2]), ((2, 3), [2, 1]), ((2, 3), [3]),
                                         ((3,), [2, 2]), ((2, 1, 3), [1, 2, 2]), ((2, 3), [0, 2]),
                                         ((), [3])])
def test_tile_is_numpys(shape, reps):
    value = RNG.standard_normal(shape)
    x = T.tensor(dtype="float64", broadcastable=(False,) * len(shape))
    got = function([x], T.tile(x, reps))(value)
    np.testing.assert_array_equal(got, np.tile(value, reps))
    if value.size and all(reps):
        verify_grad(lambda v: T.tile(v, reps), [value], rng=np.random.RandomState(0))


def test_tile_takes_symbolic_repetitions_and_refuses_a_vector_of_them():
    x, n = T.matrix("x"), T.iscalar("n")
    value = RNG.standard_normal((2, 3))
    np.testing.assert_array_equal(function([x, n], T.tile(x, [n, 2]))(value, 3), np.tile(value, (3, 2)))
    with pytest.raises(TypeError, match="reps must be a list or tuple"):
        T.tile(x, T.ivector("r"))
    with pytest.raises(ValueError, match="ndim=1 is less than"):
        T.tile(x, [2], ndim=1)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_is_numpys(axis, mode):
    value = RNG.standard_normal((3, 4))
    indices = np.array([[0, -1], [2, 1]]) if mode == "raise" else np.array([5, -7, 1, 13])
    a, i = T.matrix("a"), T.lmatrix("i") if indices.ndim == 2 else T.lvector("i")
    got = function([a, i], [T.take(a, i, axis, mode), a.take(i, axis=axis, mode=mode)])(value, indices)
    want = np.take(value, indices, axis=axis, mode=mode)
    for g in got:
        np.testing.assert_array_equal(g, want)
    verify_grad(lambda v: T.take(v, indices, axis, mode), [value], rng=np.random.RandomState(0))


def test_take_refuses_a_bad_mode_an_axis_out_of_range_and_an_index_out_of_range():
    a = T.matrix("a")
    with pytest.raises(ValueError, match="mode='nope'"):
        T.take(a, [0], mode="nope")
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        T.take(a, [0], axis=2)
    with pytest.raises(IndexError):
        function([a], T.take(a, [7], axis=0))(np.ones((3, 2)))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_ptp_is_numpys(axis):
    value = RNG.standard_normal((3, 4))
    a = T.matrix("a")
    np.testing.assert_allclose(function([a], T.ptp(a, axis))(value), np.ptp(value, axis=axis))
    verify_grad(lambda v: T.ptp(v, axis), [value], rng=np.random.RandomState(0))


@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_and_allclose_are_numpys_with_infinities_and_nan(equal_nan):
    inf, nan = np.inf, np.nan
    a_val = np.array([1.0, 1.0 + 1e-9, 1.0 + 1e-3, inf, inf, -inf, nan, nan, 0.0, 1e-9])
    b_val = np.array([1.0, 1.0, 1.0, inf, -inf, -inf, nan, 1.0, 1e-9, 0.0])
    a, b = T.vector("a"), T.vector("b")
    f = function([a, b], [T.isclose(a, b, equal_nan=equal_nan), T.allclose(a, b, equal_nan=equal_nan),
                          T.isclose(a, b, rtol=1e-2, atol=0.0)])
    close, every, loose = f(a_val, b_val)
    np.testing.assert_array_equal(close, np.isclose(a_val, b_val, equal_nan=equal_nan))
    assert bool(every) is bool(np.allclose(a_val, b_val, equal_nan=equal_nan))
    np.testing.assert_array_equal(loose, np.isclose(a_val, b_val, rtol=1e-2, atol=0.0))
    same = function([a], T.allclose(a, a + 1e-12))(np.array([1.0, 2.0]))
    assert bool(same)
    i, j = T.ivector("i"), T.ivector("j")
    got = function([i, j], T.isclose(i, j, atol=1))(np.array([1, 5, -3], "int32"), np.array([2, 7, -3], "int32"))
    np.testing.assert_array_equal(got, np.isclose([1, 5, -3], [2, 7, -3], atol=1))


def test_iround_casts_the_rounding_to_int64():
    x = T.vector("x")
    value = np.array([-2.5, -0.5, 0.5, 1.5, 2.4])
    away, even = function([x], [T.iround(x), T.iround(x, "half_to_even")])(value)
    assert away.dtype == even.dtype == np.int64
    np.testing.assert_array_equal(away, [-3, -1, 1, 2, 2])  # the documented default
    np.testing.assert_array_equal(even, np.round(value))


def test_stacklists_and_the_rank_6_and_7_constructors():
    a, b, c, d = T.scalars("abcd")
    m = T.stacklists([[a, b], [c, d]])
    np.testing.assert_array_equal(function([a, b, c, d], m)(1, 2, 3, 4), [[1, 2], [3, 4]])
    x, y = T.vectors("x", "y")
    np.testing.assert_array_equal(function([x, y], T.stacklists([x, y]))([1, 2], [3, 4]), [[1, 2], [3, 4]])
    assert T.tensor6("s").ndim == 6 and T.ftensor7("t").type == T.TensorType("float32", (False,) * 7)
    assert [v.ndim for v in T.tensor6s("pq")] == [6, 6]


def test_variable_copy_ravel_and_nonzero_methods():
    x = T.matrix("x")
    value = np.array([[0.0, 1.5], [-2.0, 0.0]])
    c = x.copy(name="c")
    assert c.name == "c" and c.owner is not None
    copied, flat, (rows, cols), values = function([x], [c, x.ravel(), x.nonzero(), x.nonzero_values()])(value)
    np.testing.assert_array_equal(copied, value)
    np.testing.assert_array_equal(flat, value.ravel())
    np.testing.assert_array_equal(rows, np.nonzero(value)[0])
    np.testing.assert_array_equal(cols, np.nonzero(value)[1])
    np.testing.assert_array_equal(values, value[np.nonzero(value)])
