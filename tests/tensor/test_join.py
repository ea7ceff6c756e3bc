"""join/concatenate/stack/split/repeat/roll against numpy, with views, dtypes and errors."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from arignote import tensor as T
from arignote.compile import function
from arignote.gradient import verify_grad
from arignote.tensor.join import Join, Split
from tests.utils import assert_matches, check_infer_shape, run, value, var_for

DTYPES = ["bool", "int8", "uint16", "int64", "float32", "float64", "complex64"]


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), st.data(),
       st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_join_and_concatenate(shp, data, da, db):
    axis = data.draw(st.integers(-len(shp), len(shp) - 1))
    other = list(shp)
    other[axis] = data.draw(st.integers(0, 3))
    va, vb = value(shp, da), value(tuple(other), db)
    a, b = var_for(va, "a"), var_for(vb, "b")
    expected = np.concatenate([va, vb, va], axis=axis)
    y = T.join(axis, a, b, a)
    assert_matches(run([a, b], y, va, vb), expected)
    assert_matches(run([a, b], T.concatenate([a, b, a], axis=axis), va, vb), expected)
    check_infer_shape([a, b], y, [va, vb])


def test_join_types():
    r, m = T.row("r"), T.matrix("m")
    y = T.join(0, r, m)
    assert y.broadcastable == (False, False)
    assert T.join(1, r, r).broadcastable == (True, False)
    assert T.join(0, m) is m
    assert isinstance(y.owner.op, Join)
    assert T.join(0, T.bvector("b"), T.fvector("f")).dtype == "float32"


@given(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3), st.data(),
       st.sampled_from(DTYPES))
def test_stack(shp, data, dtype):
    axis = data.draw(st.integers(-len(shp) - 1, len(shp)))
    va, vb = value(shp, dtype), value(shp, "float32")
    a, b = var_for(va, "a"), var_for(vb, "b")
    y = T.stack([a, b], axis=axis)
    assert_matches(run([a, b], y, va, vb), np.stack([va, vb], axis=axis))
    check_infer_shape([a, b], y, [va, vb])
    single = T.stack([a], axis=axis)
    assert single.broadcastable[axis]
    assert_matches(run([a], single, va), np.stack([va], axis=axis))


def test_join_errors():
    m, v = T.matrix("m"), T.vector("v")
    with pytest.raises(TypeError, match="'m' has 2 and 'v' has 1"):
        T.join(0, m, v)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of range"):
        T.concatenate([m, m], axis=2)
    with pytest.raises(np.exceptions.AxisError, match="use stack"):
        Join(0)(T.scalar("s"), T.scalar("t"))
    with pytest.raises(TypeError, match="list of tensors"):
        T.stack(m, m)
    with pytest.raises(ValueError, match="at least one"):
        T.stack([])
    with pytest.raises(TypeError, match="axis must be a Python int"):
        T.join(T.iscalar("ax"), m, m)
    with pytest.raises(ValueError, match=r"the shapes differ outside that axis \('m': \(2, 3\), "
                                         r"'n': \(2, 4\)\)"):
        n = T.matrix("n")
        run([m, n], T.join(0, m, n), np.ones((2, 3)), np.ones((2, 4)))


# ------------------------------------------------------------------- split
@pytest.mark.parametrize("dtype", ["int8", "float64"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_split_pieces_are_views(dtype, axis):
    v = value((4, 5), dtype)
    x = var_for(v)
    n = v.shape[axis]
    sizes = [1, 0, n - 1]
    pieces = T.split(x, sizes, 3, axis=axis)
    assert len(pieces) == 3
    expected = np.split(v, np.cumsum(sizes[:-1]), axis=axis)
    for got, want in zip(run([x], pieces, v), expected):
        assert_matches(got, want)
    node = pieces[0].owner
    assert node.op.view_map == {0: [0], 1: [0], 2: [0]}
    cells = [[None] for _ in range(3)]
    node.op.perform(node, [v, np.array(sizes)], cells)
    assert all(np.shares_memory(c[0], v) for c in cells if c[0].size)
    check_infer_shape([x], pieces, [v])


def test_split_with_symbolic_sizes():
    x, sizes = T.vector("x"), T.lvector("sizes")
    a, b = T.split(x, sizes, 2)
    out = run([x, sizes], [a, b], np.arange(5.0), [2, 3])
    assert_matches(out[0], np.arange(2.0))
    assert_matches(out[1], np.arange(2.0, 5.0))
    check_infer_shape([x, sizes], [a, b], [np.arange(5.0), np.array([2, 3])])
    k = T.lscalar("k")
    c, d = T.split(x, [k, 2], 2)
    assert_matches(run([x, k], d, np.arange(5.0), 3), np.arange(3.0, 5.0))
    check_infer_shape([x, k], [c, d], [np.arange(5.0), 3])


def test_split_errors():
    x = T.matrix("x")
    with pytest.raises(ValueError, match="3 sizes given for n_splits=2"):
        T.split(x, [1, 1, 1], 2)
    with pytest.raises(ValueError, match="must be >= 0"):
        T.split(x, [-1, 3], 2)
    with pytest.raises(np.exceptions.AxisError):
        T.split(x, [1, 1], 2, axis=2)
    with pytest.raises(ValueError, match="add up to 2"):
        T.split(T.row("r"), [1, 1], 2)
    with pytest.raises(ValueError, match=r"split of 'x' \(shape \(3, 2\)\) along axis 0: the sizes "
                                         r"\(1, 1\) must be 2 non-negative lengths adding up to 3"):
        run([x], T.split(x, [1, 1], 2), np.ones((3, 2)))
    assert isinstance(T.split(x, [1, 1], 2)[0].owner.op, Split)


# ------------------------------------------------------------------ repeat
@pytest.mark.parametrize("shp", [(), (3,), (2, 3), (2, 1, 2)])
@pytest.mark.parametrize("dtype", ["bool", "int32", "float32"])
def test_repeat(shp, dtype):
    v = value(shp, dtype)
    x = var_for(v)
    r = T.lscalar("r")
    for axis in [None] + list(range(-len(shp), len(shp))):
        y = x.repeat(2, axis=axis)
        assert_matches(run([x], y, v), np.repeat(v, 2, axis=axis))
        check_infer_shape([x], y, [v])
        z = T.repeat(x, r, axis=axis)
        assert_matches(run([x, r], z, v, 3), np.repeat(v, 3, axis=axis))
        check_infer_shape([x, r], z, [v, 3])
    if shp:
        counts = np.arange(shp[-1])
        y = T.repeat(x, counts, axis=-1)
        assert_matches(run([x], y, v), np.repeat(v, counts, axis=-1))
        check_infer_shape([x], y, [v])
        rv = T.lvector("rv")
        z = T.repeat(x, rv, axis=-1)
        assert_matches(run([x, rv], z, v, counts), np.repeat(v, counts, axis=-1))
        check_infer_shape([x, rv], z, [v, counts])


@pytest.mark.parametrize("ndim", [0, 1, 2])
def test_repeat_op_axes_and_gradient(ndim):
    """Theano's RepeatOp(axis) takes axes counted from the end, and its gradient sums copies."""
    rng = np.random.RandomState(3)
    v = np.asarray(rng.rand(*(4,) * ndim))
    for axis in [None] + list(range(-ndim, ndim)):
        x = var_for(v)
        for counts in (3, np.arange(1, 5) if axis is not None else 3):
            y = T.Repeat(axis)(x, counts)
            assert_matches(run([x], y, v), np.repeat(v, counts, axis=axis))
            check_infer_shape([x], y, [v])
            verify_grad(lambda a, c=counts, ax=axis: T.Repeat(ax)(a, c), [v], rng=rng)
        verify_grad(lambda a, ax=axis: T.repeat(a, 2, axis=ax), [v], rng=rng)


def test_repeat_broadcastable():
    """Repeating a broadcastable dimension once keeps it broadcastable (Theano's rule)."""
    x = T.TensorType("float64", (False, True, False))("x")
    assert T.Repeat(1)(x, 2).broadcastable == (False, False, False)
    assert T.Repeat(1)(x, 1).broadcastable == (False, True, False)
    assert T.Repeat(-2)(x, 1).broadcastable == (False, True, False)
    assert T.Repeat(0)(x, 2).broadcastable == (False, True, False)
    assert T.Repeat(1)(x, T.lscalar("r")).broadcastable == (False, False, False)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "uint32", "int64"])
def test_repeat_one_count_is_a_broadcast(dtype):
    """A scalar count (or a length-1 broadcastable vector) needs no host Repeat op."""
    v = np.arange(12.0).reshape(3, 4)
    x = var_for(v)
    for r_var, r in ((T.scalar("r", dtype=dtype), np.asarray(3, dtype)),
                     (T.TensorType(dtype, (True,))("r"), np.array([2], dtype))):
        for axis in (None, 0, 1, -1):
            y = T.repeat(x, r_var, axis=axis)
            f = function([x, r_var], y)
            assert not any(isinstance(n.op, T.Repeat) for n in f.maker.fgraph.toposort())
            assert_matches(f(v, r), np.repeat(v, r.reshape(()), axis=axis))
            assert tuple(function([x, r_var], y.shape)(v, r)) == np.repeat(v, r.reshape(()), axis).shape
    assert_matches(run([x], T.repeat(x, [2], axis=0), v), np.repeat(v, 2, axis=0))


def test_repeat_refuses_uint64_counts():
    x = T.matrix("x")
    for r in (T.scalar("r", dtype="uint64"), T.vector("r", dtype="uint64")):
        with pytest.raises(TypeError, match="'r' is uint64.*cast it to int64"):
            T.repeat(x, r, axis=0)
    with pytest.raises(np.exceptions.AxisError, match="-2 <= axis < 2"):
        T.Repeat(-3)(x, 2)


def test_repeat_errors():
    x = T.matrix("x")
    with pytest.raises(TypeError, match="repeats must be an int"):
        T.repeat(x, 1.5)
    with pytest.raises(ValueError, match="must be >= 0"):
        T.repeat(x, -1)
    with pytest.raises(np.exceptions.AxisError):
        T.repeat(x, 2, axis=2)
    rv = T.lvector("rv")
    with pytest.raises(ValueError, match=r"repeat of 'x' \(shape \(2, 3\)\) along axis 1"):
        run([x, rv], T.repeat(x, rv, axis=1), np.ones((2, 3)), [1, 2])


# -------------------------------------------------------------------- roll
@pytest.mark.parametrize("shift", [0, 1, -2, 7])
def test_roll(shift):
    v = value((3, 4), "int64")
    x = var_for(v)
    for axis in (None, 0, -1):
        y = T.roll(x, shift, axis)
        assert_matches(run([x], y, v), np.roll(v, shift, axis))
        check_infer_shape([x], y, [v])
    s = T.iscalar("s")
    assert_matches(run([x, s], T.roll(x, s, 1), v, shift), np.roll(v, shift, 1))
    with pytest.raises(TypeError, match="shift must be an int scalar"):
        T.roll(x, 1.0)
