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


def test_tile_takes_symbolic_repetitions():
    x, n = T.matrix("x"), T.iscalar("n")
    value = RNG.standard_normal((2, 3))
    np.testing.assert_array_equal(function([x, n], T.tile(x, [n, 2]))(value, 3), np.tile(value, (3, 2)))
    np.testing.assert_array_equal(function([x, n], T.tile(x, n))(value, 3), np.tile(value, 3))
    np.testing.assert_array_equal(function([x], T.tile(x, 2))(value), np.tile(value, 2))
    r = T.ivector("r")
    f = function([x, r], T.tile(x, r, ndim=3))
    for reps in ([2], [2, 3], [4, 2, 3]):
        np.testing.assert_array_equal(f(value, reps), np.tile(value[None], reps))
    with pytest.raises(AssertionError):
        f(value, [1, 2, 3, 4])
    verify_grad(lambda v: T.tile(v, np.array([2, 1, 3], "int32"), ndim=3), [value],
                rng=np.random.RandomState(0))


def test_tile_errors():
    x = T.matrix("x")
    with pytest.raises(ValueError, match="give the result's rank"):
        T.tile(x, T.ivector("r"))
    for bad in (2.5, T.fscalar("f"), T.fvector("v"), T.imatrix("m")):
        with pytest.raises(ValueError, match="reps must be an int"):
            T.tile(x, bad)
    with pytest.raises(ValueError, match="must be ints or int scalars"):
        T.tile(x, [2, T.fscalar("f")])
    with pytest.raises(ValueError, match="ndim=1 is less than"):
        T.tile(x, [2], ndim=1)
    with pytest.raises(ValueError, match=r"len\(reps\) \(3\) is more than ndim=2"):
        T.tile(x, [2, 3, 4], ndim=2)


def test_assert_op():
    x, n = T.vector("x"), T.lscalar("n")
    y = T.Assert("n must be positive")(x, T.gt(n, 0))
    f = function([x, n], y * 2)
    np.testing.assert_array_equal(f(np.ones(2), 1), [2.0, 2.0])
    with pytest.raises(AssertionError, match="n must be positive"):
        f(np.ones(2), 0)
    with pytest.raises(TypeError, match="each condition must be a scalar"):
        T.assert_op(x, x)
    verify_grad(lambda v: T.assert_op(v, T.constant(True)) ** 2, [np.array([1.0, -2.0])],
                rng=np.random.RandomState(0))


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


def test_mgrid_and_ogrid_are_numpys_with_symbolic_bounds():
    n = T.iscalar("n")
    got = function([n], [*T.mgrid[0:5, 1:n:2], *T.ogrid[0:5, 0:3], T.mgrid[2:n]])(7)
    want = [*np.mgrid[0:5, 1:7:2], *np.ogrid[0:5, 0:3], np.mgrid[2:7]]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(TypeError, match="complex"):
        T.mgrid[0:1:5j, 0:2]


def test_inc_subtensor_takes_theanos_keywords():
    x, y = T.vector("x"), T.vector("y")
    value = np.zeros(4)
    f = function([x, y], [T.inc_subtensor(x[1:3], y, inplace=True, tolerate_inplace_aliasing=True),
                          T.inc_subtensor(x[1:3], y, set_instead_of_inc=True),
                          T.set_subtensor(x[1:3], y, inplace=False, tolerate_inplace_aliasing=False)])
    added, written, set_ = f(value + 1, np.array([5.0, 6.0]))
    np.testing.assert_array_equal(added, [1, 6, 7, 1])
    np.testing.assert_array_equal(written, [1, 5, 6, 1])
    np.testing.assert_array_equal(set_, [1, 5, 6, 1])


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
def test_divmod_is_pythons(dtype):
    x, y = T.scalar("x", dtype=dtype), T.scalar("y", dtype=dtype)
    q, r = divmod(x, y)
    f = function([x, y], [q, r])
    for a, b in ((0, 1), (1, -1), (-1, 2), (1, -2), (5, 3), (-5, 3), (5, -3), (-5, -3)):
        got = f(a, b)
        assert (got[0], got[1]) == divmod(a, b)
        assert got[0].dtype == q.dtype == np.dtype(dtype)
    v = T.vector("v", dtype=dtype)
    q, r = divmod(7, v)
    np.testing.assert_array_equal(function([v], [q, r])(np.array([2, -3], dtype)),
                                  np.divmod(7, np.array([2, -3], dtype)))


@pytest.mark.parametrize("rowvar", [True, False])
@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128"])
def test_cov_is_numpys(rowvar, dtype):
    value = RNG.standard_normal((3, 5)) * 4
    value = (value + 1j * RNG.standard_normal((3, 5)) if dtype == "complex128" else value).astype(dtype)
    other = RNG.standard_normal((3, 5)).astype("float64")
    m, y = T.matrix("m", dtype=dtype), T.dmatrix("y")
    for kwargs in ({}, {"bias": True}, {"ddof": 2}, {"bias": True, "ddof": 0}):
        got = function([m], T.cov(m, rowvar=rowvar, **kwargs))(value)
        want = np.cov(value, rowvar=rowvar, **kwargs)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-10)
        got = function([m, y], T.cov(m, y, rowvar=rowvar, **kwargs))(value, other)
        np.testing.assert_allclose(got, np.cov(value, other, rowvar=rowvar, **kwargs), rtol=1e-10)
    v = T.dvector("v")
    single = T.cov(v)
    assert single.ndim == 0
    np.testing.assert_allclose(function([v], single)(value[0].real.astype("float64")),
                               np.cov(value[0].real.astype("float64")))
    if dtype == "float64":
        verify_grad(lambda a: T.cov(a, rowvar=rowvar), [value], rng=np.random.RandomState(0))
    with pytest.raises(NotImplementedError, match="fweights"):
        T.cov(m, fweights=[1, 2])
    with pytest.raises(ValueError, match="has 3 dimensions"):
        T.cov(T.tensor3("t"))


def test_is_flat_and_flatten_outdim():
    x = T.tensor4("x")
    assert T.is_flat(T.vector()) and not T.is_flat(T.tensor3())
    assert T.is_flat(T.tensor3(), ndim=3) and T.is_flat(x.reshape((10, 10, -1)), ndim=3)
    assert T.is_flat(x.reshape((T.iscalar(),)))
    assert T.is_flat(T.as_tensor_variable(np.zeros(10)))
    value = RNG.standard_normal((2, 3, 4))
    t = T.tensor3("t")
    with pytest.warns(DeprecationWarning, match="outdim"):
        y = T.flatten(t, outdim=2)
    np.testing.assert_array_equal(function([t], y)(value), value.reshape(2, 12))
    np.testing.assert_array_equal(function([t], T.flatten(t, ndim=2))(value), value.reshape(2, 12))
    with pytest.warns(DeprecationWarning):
        assert T.is_flat(y, outdim=2)
    with pytest.raises(ValueError, match="give ndim only"):
        T.flatten(t, ndim=2, outdim=2)


def test_numpy_methods_of_variables():
    """ptp, swapaxes, choose, conj and the real/imag properties, as numpy's arrays have them."""
    value = RNG.standard_normal((2, 3, 4))
    x = T.tensor3("x")
    for axis in (None, 0, -1):
        np.testing.assert_allclose(function([x], x.ptp(axis))(value), np.ptp(value, axis))
    np.testing.assert_array_equal(function([x], x.swapaxes(0, 2))(value), value.swapaxes(0, 2))
    z = T.zvector("z")
    zv = np.array([1 + 2j, -3 - 1j])
    f = function([z], [z.conj(), z.conjugate(), z.real, z.imag])
    for got, want in zip(f(zv), (zv.conj(), zv.conj(), zv.real, zv.imag)):
        np.testing.assert_array_equal(got, want)
    assert z.real.dtype == "float64" and T.fvector().real.dtype == "float32"
    index = T.lvector("i")
    choices = [T.dvector("a"), T.dvector("b")]
    iv, av, bv = np.array([0, 1, 1]), np.arange(3.0), -np.arange(3.0)
    np.testing.assert_array_equal(function([index] + choices, index.choose(choices))(iv, av, bv),
                                  iv.choose([av, bv]))
