"""tensor.extra_ops against numpy: cumsum/cumprod, diff, bincount, searchsorted, fill_diagonal(_offset),
to_one_hot, unravel_index/ravel_multi_index, bartlett, Unique; their shapes and gradients."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from arignote import config, tensor as T
from arignote.gradient import NullTypeGradError, grad, verify_grad
from arignote.tensor import extra_ops as E
from tests.utils import assert_matches, check_infer_shape, run, value, var_for

RNG = np.random.RandomState(7)


@settings(max_examples=30)
@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), st.data(),
       st.sampled_from(["int8", "int64", "float32", "float64"]), st.sampled_from(["add", "mul"]))
def test_cumsum_cumprod(shape, data, dtype, mode):
    v = (value(shape) / 4).astype(dtype)
    x = var_for(v)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    fn, ref = (E.cumsum, np.cumsum) if mode == "add" else (E.cumprod, np.cumprod)
    y = fn(x, axis)
    assert_matches(run([x], y, v), ref(v, axis=axis, dtype=dtype))
    check_infer_shape([x], y, [v])


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("fn", [E.cumsum, E.cumprod])
def test_cum_gradients(fn, axis):
    verify_grad(lambda x: fn(x, axis), [RNG.uniform(0.5, 1.5, (3, 4))], rng=RNG)


@settings(max_examples=30)
@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5), st.data())
def test_diff(shape, data):
    v = value(shape)
    x = var_for(v)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(0, 3))
    y = E.diff(x, n, axis)
    assert_matches(run([x], y, v), np.diff(v, n=n, axis=axis))
    check_infer_shape([x], y, [v])


@pytest.mark.parametrize("n, axis", [(1, -1), (2, 0), (3, 1)])
def test_diff_gradient_any_axis(n, axis):
    verify_grad(lambda x: E.diff(x, n, axis), [RNG.randn(5, 6)], rng=RNG)


def test_bincount():
    x, w = T.lvector("x"), T.dvector("w")
    xv, wv = np.array([0, 3, 3, 1, 0, 3]), RNG.randn(6)
    assert_matches(run([x], E.bincount(x), xv), np.bincount(xv))
    assert_matches(run([x, w], E.bincount(x, w), xv, wv), np.bincount(xv, wv))
    assert_matches(run([x], E.bincount(x, minlength=7), xv), np.bincount(xv, minlength=7))
    m = T.lscalar("m")
    assert_matches(run([x, m], E.bincount(x, minlength=m), xv, 9), np.bincount(xv, minlength=9))
    b = T.bvector("b")
    assert run([b], E.bincount(b), np.array([1, 2], "int8")).dtype == np.int8  # x's dtype
    with pytest.raises(ValueError, match="'x'.*>= 0, got -1"):
        run([x], E.bincount(x), np.array([1, -1]))
    with pytest.raises(TypeError, match="integer vector"):
        E.bincount(T.dvector("f"))
    verify_grad(lambda w: E.bincount(T.constant(xv), w), [wv], rng=RNG)


def test_bincount_assert_nonneg_raises_an_assertion_error():
    """Theano checked negative values with an Assert (AssertionError) under assert_nonneg."""
    x = T.bvector("x")
    checked = E.bincount(x, assert_nonneg=True)
    with pytest.raises(AssertionError, match="'x'.*>= 0, got -2"):
        run([x], checked, np.array([1, -2, 0], "int8"))
    with pytest.raises(ValueError):  # still the ValueError it was
        run([x], checked, np.array([-1], "int8"))
    assert_matches(run([x], checked, np.array([2, 0, 2], "int8")), np.bincount([2, 0, 2]).astype("int8"))
    with pytest.raises(ValueError) as plain:
        run([x], E.bincount(x), np.array([-1], "int8"))
    assert not isinstance(plain.value, AssertionError)


def test_searchsorted():
    x, v = T.dvector("x"), T.dmatrix("v")
    xv, vv = np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([[-10.0, 10.0], [2.0, 3.0]])
    for side in ("left", "right"):
        y = E.searchsorted(x, v, side)
        assert_matches(run([x, v], y, xv, vv), np.searchsorted(xv, vv, side=side).astype("int64"))
        check_infer_shape([x, v], y, [xv, vv])
    perm = np.array([4, 0, 3, 1, 2])
    unsorted, sorter = xv[perm], np.argsort(xv[perm])
    s = T.lvector("s")
    assert_matches(run([x, v, s], x.searchsorted(v, sorter=s), unsorted, vv, sorter),
                   np.searchsorted(unsorted, vv, sorter=sorter))
    assert run([], E.searchsorted([1, 2, 3, 4, 5], 3, side="right")) == 3
    with pytest.raises(ValueError, match="side must be"):
        E.searchsorted(x, v, side="middle")
    # Integer-valued: a cost through it is connected but flat.
    g = grad(T.cast(E.searchsorted(x, v), "float64").sum(), v)
    assert_matches(run([x, v], g, xv, vv), np.zeros_like(vv))


def test_searchsorted_wrong_ranks_and_verify_grad():
    """Theano raised ValueError for a non-vector x or sorter; the error is also a TypeError."""
    v = T.tensor3("v")
    for bad in ({"x": T.dmatrix("no_1d")}, {"x": T.dvector("x"), "sorter": T.lmatrix("no_1d")}):
        with pytest.raises(ValueError, match="'no_1d'"):
            E.searchsorted(bad["x"], v, sorter=bad.get("sorter"))
        with pytest.raises(TypeError, match="vector"):
            E.searchsorted(bad["x"], v, sorter=bad.get("sorter"))
    with pytest.raises(TypeError, match="integer vector"):
        E.searchsorted(T.dvector("x"), v, sorter=T.fvector("s"))
    # An integer output is checked as Theano did: its gradient is zero, like finite differences.
    a = np.sort(RNG.rand(10))
    verify_grad(E.SearchsortedOp(), [a, RNG.rand(2, 3, 4)], rng=RNG)
    verify_grad(lambda x, w: E.searchsorted(x, w, side="right"), [a, RNG.rand(3)], rng=RNG)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_cpu_contiguous(dtype):
    x, i = T.matrix("x", dtype=dtype), T.iscalar("i")
    xv = np.arange(20).reshape(4, 5).astype(dtype)
    y = E.cpu_contiguous(x.reshape((5, 4))[::i])
    assert isinstance(y.owner.op, E.CpuContiguous)
    for step in (1, 2, 3):
        out = run([x, i], y, xv, step)
        assert out.flags["C_CONTIGUOUS"]
        assert_matches(out, xv.reshape(5, 4)[::step])
    check_infer_shape([x, i], y, [xv, 2])


def test_cpu_contiguous_gradient_passes_through():
    verify_grad(E.cpu_contiguous, [RNG.rand(5, 7, 2)], rng=RNG)
    verify_grad(lambda x: E.cpu_contiguous(x.T[::2]), [RNG.rand(4, 6)], rng=RNG)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (3, 3, 3)])
def test_fill_diagonal(shape):
    v = value(shape)
    a, val = var_for(v), T.dscalar("val")
    expected = v.copy()
    if len(shape) == 2:
        k = np.arange(min(shape))
        expected[k, k] = 7.5
    else:
        np.fill_diagonal(expected, 7.5)
    assert_matches(run([a, val], E.fill_diagonal(a, val), v, 7.5), expected)
    verify_grad(E.fill_diagonal, [v, np.asarray(2.0)], rng=RNG)


def test_fill_diagonal_errors():
    with pytest.raises(TypeError, match="at least 2 dimensions"):
        E.fill_diagonal(T.dvector(), 1.0)
    with pytest.raises(TypeError, match="cannot hold"):
        E.fill_diagonal(T.imatrix(), T.dscalar())
    a = T.dtensor3("a")
    with pytest.raises(ValueError, match="same length"):
        run([a], E.fill_diagonal(a, 1.0), np.zeros((2, 3, 3)))


@pytest.mark.parametrize("shape", [(4, 4), (3, 6), (6, 3)])
@pytest.mark.parametrize("offset", [-4, -1, 0, 2, 7])
def test_fill_diagonal_offset(shape, offset):
    v = value(shape)
    a, val, k = var_for(v), T.dscalar("val"), T.iscalar("k")
    expected = v.copy()
    rows, cols = np.nonzero(np.eye(*shape, k=offset))
    expected[rows, cols] = -3.0
    assert_matches(run([a, val, k], E.fill_diagonal_offset(a, val, k), v, -3.0, offset), expected)
    verify_grad(lambda a, val: E.fill_diagonal_offset(a, val, offset), [v, np.asarray(2.0)], rng=RNG)
    with pytest.raises(NullTypeGradError, match="offset"):
        grad(E.fill_diagonal_offset(a, val, k).sum(), k)


def test_to_one_hot():
    y = T.lvector("y")
    yv = np.array([2, 0, 1, 2])
    out = run([y], E.to_one_hot(y, 3), yv)
    assert_matches(out, np.eye(3, dtype=out.dtype)[yv])
    assert out.dtype == config.floatX
    assert run([y], E.to_one_hot(y, 4, dtype="int32"), yv).dtype == np.int32


def test_unravel_and_ravel_multi_index():
    i = T.lvector("i")
    dims = (3, 4, 5)
    iv = np.array([0, 7, 59, 22])
    for order in ("C", "F"):
        coords = E.unravel_index(i, dims, order=order)
        assert len(coords) == 3
        for got, want in zip(run([i], list(coords), iv), np.unravel_index(iv, dims, order=order)):
            assert_matches(got, want.astype("int64"))
        flat = E.ravel_multi_index(coords, dims, order=order)
        assert_matches(run([i], flat, iv), iv)
    (single,) = E.unravel_index(i, (60,))
    assert_matches(run([i], single, iv), iv)
    d = T.lvector("d")
    with pytest.raises(ValueError, match="pass ndim="):
        E.unravel_index(i, d)
    a, b = T.lvector("a"), T.lvector("b")
    assert_matches(run([a, b], E.ravel_multi_index([a, b], (3, 4), mode="clip"), np.array([5, 1]),
                       np.array([1, -2])), np.ravel_multi_index(([5, 1], [1, -2]), (3, 4), mode="clip"))
    with pytest.raises(TypeError, match="hold integers"):
        E.unravel_index(T.dvector(), dims)


@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("flags", [(False, True, False), (True, True, False), (True, True, True),
                                   (True, False, True), (False, False, True)])
def test_unique_infer_shape(flags, axis):
    """Inverse indices are as long as the input (along axis); the rest as the values found."""
    m = T.matrix("m")
    mv = np.array([[2.0, 1.0, 1.0], [3.0, 2.0, 2.0], [2.0, 1.0, 1.0], [0.0, 0.0, 0.0]], config.floatX)
    outs = E.Unique(*flags, axis=axis)(m)
    expected = np.unique(mv, *flags, axis=axis)
    for k, out in enumerate(outs):
        assert_matches(run([m], out, mv), np.reshape(expected[k], -1) if k else expected[0])
        check_infer_shape([m], out, [mv])
    inverse = outs[1 + flags[0]] if flags[1] else None
    if inverse is not None:  # its shape needs no Unique at run time
        from arignote.compile import function
        f = function([m], inverse.shape)
        assert not any(isinstance(n.op, E.Unique) for n in f.maker.fgraph.toposort())
        assert tuple(f(mv)) == ((mv.size,) if axis is None else (mv.shape[axis],))


def test_bartlett_and_unique():
    m = T.lscalar("m")
    for n in (0, 1, 5):
        assert_matches(run([m], E.bartlett(m), n), np.bartlett(n))
    x = T.dvector("x")
    xv = np.array([3.0, 1.0, 2.0, 3.0, 1.0])
    got = run([x], E.Unique(True, True, True)(x), xv)
    for g, w in zip(got, np.unique(xv, return_index=True, return_inverse=True, return_counts=True)):
        np.testing.assert_array_equal(g, np.reshape(w, -1))
    assert_matches(run([x], E.Unique()(x), xv), np.unique(xv))


def test_squeeze_and_repeat_are_here():
    assert E.squeeze is T.squeeze and E.repeat is T.repeat
    assert E.RepeatOp is type(T.repeat(T.dvector(), T.lvector()).owner.op)


def test_take_along_axis_and_permute_row_elements():
    a = value((3, 4, 5))
    idx = np.argsort(RNG.rand(3, 4, 5), axis=1)
    x, i = var_for(a, "x"), T.ltensor3("i")
    for axis in (0, 1, 2):
        index = np.argsort(RNG.rand(3, 4, 5), axis=axis)
        assert_matches(run([x, i], E.take_along_axis(x, i, axis), a, index),
                       np.take_along_axis(a, index, axis))
    verify_grad(lambda x: E.take_along_axis(x, T.constant(idx), 1), [a], rng=RNG)
    m, p = T.dmatrix("m"), T.lmatrix("p")
    mv, pv = value((2, 4)), np.array([[3, 0, 2, 1], [1, 2, 3, 0]])
    assert_matches(run([m, p], E.permute_row_elements(m, p), mv, pv), np.take_along_axis(mv, pv, 1))
    back = E.permute_row_elements(E.permute_row_elements(m, p), p, inverse=True)
    assert_matches(run([m, p], back, mv, pv), mv)
    row = T.lvector("row")
    assert_matches(run([m, row], E.permute_row_elements(m, row), mv, pv[0]), mv[:, pv[0]])
    with pytest.raises(TypeError, match="integer permutations"):
        E.permute_row_elements(m, T.dvector())


def test_permute_row_elements_broadcasts_leading_axes():
    """Theano's broadcasting: a vector takes every permutation of a matrix; an input of shape
    (4, 1, 5) and permutations (3, 5) give (4, 3, 5), the 1 stretched."""
    v, p = T.dvector("v"), T.imatrix("p")
    vv = RNG.rand(5)
    pv = np.asarray([RNG.permutation(5) for _ in range(3)], "int32")
    assert_matches(run([v, p], E.permute_row_elements(v, p), vv, pv), vv[pv])
    verify_grad(lambda a: E.permute_row_elements(a, pv), [vv], rng=RNG)
    x = T.TensorType("float64", (False, True, False))("x")
    xv = RNG.rand(4, 1, 5)
    want = np.asarray([[row[0, q] for q in pv] for row in xv])
    assert_matches(run([x, p], E.permute_row_elements(x, p), xv, pv), want)
    t = T.dtensor3("t")
    assert_matches(run([t, p], E.permute_row_elements(t, p), xv, pv), want)
    verify_grad(lambda a: E.permute_row_elements(a, pv), [xv], rng=RNG)
    back = E.permute_row_elements(E.permute_row_elements(v, p), p, inverse=True)
    assert_matches(run([v, p], back, vv, pv), np.tile(vv, (3, 1)))


def test_nonzero_flatnonzero_nonzero_values():
    m = T.dmatrix("m")
    mv = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    rows, cols = E.nonzero(m)
    got = run([m], [rows, cols], mv)
    for g, w in zip(got, np.nonzero(mv)):
        assert_matches(g, w.astype("int64"))
    assert_matches(run([m], E.nonzero(m, return_matrix=True), mv), np.array(np.nonzero(mv)))
    assert_matches(run([m], E.flatnonzero(m), mv), np.flatnonzero(mv).astype("int64"))
    assert_matches(run([m], E.nonzero_values(m), mv), mv[mv != 0])
    assert_matches(run([m], E.flatnonzero(m), np.zeros((2, 2))), np.zeros(0, "int64"))
    with pytest.raises(ValueError, match="scalar"):
        E.nonzero(T.dscalar())


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_compress_is_numpys(axis):
    m, c = T.dmatrix("m"), T.bvector("c")
    mv = np.arange(12.0).reshape(3, 4)
    for cv in (np.array([1, 0, 1], "int8"), np.array([0, 1], "int8")):  # shorter: the first slices
        assert_matches(run([m, c], E.compress(c, m, axis), mv, cv), np.compress(cv, mv, axis=axis))
    verify_grad(lambda v: E.compress(np.array([1, 0, 1]), v, axis), [mv], rng=np.random.RandomState(0))
