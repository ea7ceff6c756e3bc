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
    with pytest.raises(TypeError, match="use stack"):
        Join()(0, T.scalar("s"), T.scalar("t"))
    with pytest.raises(TypeError, match="use stack"):
        T.join(0, T.scalar("s"), T.scalar("t"))
    with pytest.raises(TypeError, match="the axis must be an int scalar, got 'f'"):
        Join()(T.fscalar("f"), m, m)
    with pytest.raises(TypeError, match="list of tensors"):
        T.stack(axis=0)
    with pytest.raises(ValueError, match="at least one"):
        T.stack([])
    with pytest.raises(ValueError, match="view must be -1 or the position"):
        Join(view=2)(0, m, m)
    with pytest.raises(ValueError, match=r"the shapes differ outside that axis \('m': \(2, 3\), "
                                         r"'n': \(2, 4\)\)"):
        n = T.matrix("n")
        run([m, n], T.join(0, m, n), np.ones((2, 3)), np.ones((2, 4)))


@pytest.mark.parametrize("dtype", ["int8", "float32", "float64"])
def test_join_symbolic_axis(dtype):
    """Theano's Join takes the axis as an input: an int scalar chosen when the function runs."""
    va, vb = value((2, 3), dtype), value((2, 3), "float64")
    a, b, ax = var_for(va, "a"), var_for(vb, "b"), T.lscalar("ax")
    y = T.join(ax, a, b)
    assert isinstance(y.owner.op, Join) and y.owner.inputs[0] is ax
    assert y.broadcastable == (False, False)
    f = function([a, b, ax], y)
    for axis in (0, 1, -1, -2):
        assert_matches(f(va, vb, axis), np.concatenate([va, vb], axis=axis))
        check_infer_shape([a, b, ax], y, [va, vb, axis])
    with pytest.raises(IndexError):
        f(va, vb, 2)
    with pytest.raises(IndexError):
        f(va, vb, -3)
    if dtype != "int8":
        for axis in (0, 1, -1):
            verify_grad(lambda p, q, k=axis: Join()(T.constant(k), p, q), [va, vb],
                        rng=np.random.RandomState(0))


def test_join_symbolic_axis_gradient():
    """The gradient of a join along a runtime axis cuts the output gradient along that axis."""
    va, vb = np.arange(6.0).reshape(2, 3), np.arange(4.0).reshape(2, 2)
    a, b, ax = T.matrix("a"), T.matrix("b"), T.lscalar("ax")
    weights = T.matrix("w")
    cost = (T.join(ax, a, b) * weights).sum()
    ga, gb = T.grad(cost, [a, b])
    w = np.arange(10.0).reshape(2, 5)
    got_a, got_b = function([a, b, ax, weights], [ga, gb])(va, vb, 1, w)
    assert_matches(got_a, w[:, :3])
    assert_matches(got_b, w[:, 3:])


def test_join_broadcastable_rules():
    """A constant axis: every other dimension broadcastable in any input is broadcastable
    in the output, the join axis never is (unless one input alone); a variable axis: none."""
    a = T.TensorType("float64", (True, False, True, False, False, False))("a")
    b = T.TensorType("float64", (True, True, True, False, False, False))("b")
    c = T.TensorType("float64", (True, False, False, False, False, False))("c")
    assert Join()(0, a, b, c).broadcastable == (False, True, True, False, False, False)
    assert Join()(1, a, b, c).broadcastable == (True, False, True, False, False, False)
    assert Join()(T.constant(-1), a, b).broadcastable == (True, True, True, False, False, False)
    assert Join()(T.cast(T.constant(1), "int32"), a, b).broadcastable[0]
    assert Join()(0, a).broadcastable == a.broadcastable
    assert Join()(T.lscalar(), a, b).broadcastable == (False,) * 6
    with pytest.raises(IndexError):
        Join()(6, a, b)


def test_join_view_of_the_only_nonempty_input():
    """Join(view=k) returns input k itself when the others are empty along the axis."""
    x, n = T.vector("x"), T.lscalar("n")
    z = T.zeros((n,))
    y = Join(view=0)(0, x, z, z)
    assert y.owner.op.view_map == {0: [1]}
    node = y.owner
    data = np.array([3.0, 4.0, 5.0])
    cell = [[None]]
    node.op.perform(node, [np.asarray(0), data, np.zeros(0), np.zeros(0)], cell)
    assert cell[0][0] is data
    node.op.perform(node, [np.asarray(0), data, np.ones(1), np.zeros(0)], cell)
    assert_matches(cell[0][0], np.array([3.0, 4.0, 5.0, 1.0]))
    assert_matches(run([x, n], y, data, 0), data)
    assert_matches(run([x, n], y, data, 2), np.array([3.0, 4.0, 5.0, 0, 0, 0, 0]))


@pytest.mark.parametrize("dtypes, expected", [
    (("float32", "float32"), "float32"), (("int32", "int64"), "int64"),
    (("int8", "float64"), "float64"), (("bool", "uint8"), "uint8")])
def test_stack_of_scalars_is_a_make_vector(dtypes, expected):
    a, b = T.scalar("a", dtype=dtypes[0]), T.scalar("b", dtype=dtypes[1])
    y = T.stack([a, b, a])
    assert isinstance(y.owner.op, T.MakeVector) and y.dtype == expected
    f = function([a, b], y)
    assert not any(isinstance(n.op, Join) for n in f.maker.fgraph.toposort())
    assert_matches(f(1, 0), np.array([1, 0, 1], dtype=expected))
    assert T.get_vector_length(y) == 3
    assert T.stack([a]).broadcastable == (True,)
    np.testing.assert_array_equal(run([], T.stack([10, np.int8(3), 2.5])), [10, 3, 2.5])


def test_make_vector():
    a, b = T.iscalar("a"), T.lscalar("b")
    y = T.MakeVector("int64")(a, b)
    assert y.dtype == "int64" and y.owner.inputs[0].dtype == "int64"
    assert_matches(run([a, b], y, 2, 5), np.array([2, 5]))
    check_infer_shape([a, b], y, [2, 5])
    assert_matches(run([], T.MakeVector("float32")()), np.zeros(0, "float32"))
    with pytest.raises(TypeError, match="'b' is int64, which int32 cannot hold"):
        T.MakeVector("int32")(a, b)
    with pytest.raises(TypeError, match="MakeVector takes scalars"):
        T.MakeVector()(T.lvector("v"))
    x, w = T.dscalar("x"), T.dscalar("w")
    verify_grad(lambda p, q: T.make_vector(p, q) * [2.0, 3.0], [np.asarray(1.5), np.asarray(-2.0)],
                rng=np.random.RandomState(1))
    gx, = T.grad((T.stack([x, w, x]) * [1.0, 2.0, 4.0]).sum(), [x])
    assert_matches(run([x, w], gx, 1.0, 1.0), np.asarray(5.0))


def test_stack_call_forms():
    """stack(tensors, axis) and its keywords; Theano's old stack(a, b) warns but works."""
    a, b = T.imatrix("a"), T.imatrix("b")
    va, vb = np.array([[1, 2]], "int32"), np.array([[3, 4]], "int32")
    want = np.stack([va, vb], axis=1)
    for y in (T.stack([a, b], 1), T.stack([a, b], axis=1), T.stack(tensors=[a, b], axis=1)):
        assert_matches(run([a, b], y, va, vb), want)
    with pytest.warns(DeprecationWarning, match="stack"):
        old = T.stack(a, b)
    assert_matches(run([a, b], old, va, vb), np.stack([va, vb]))
    with pytest.raises(IndexError):
        T.stack([a, b], 4)
    with pytest.raises(IndexError):
        T.stack([a, b], -4)


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
    node.op.perform(node, [v, np.asarray(axis), np.array(sizes)], cells)
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
    with pytest.raises(ValueError, match="3 sizes given for len_splits=2"):
        T.split(x, [1, 1, 1], 2)
    with pytest.raises(np.exceptions.AxisError):
        T.split(x, [1, 1], 2, axis=2)
    with pytest.raises(ValueError, match="add up to 2"):
        T.split(T.row("r"), [1, 1], 2)
    with pytest.raises(ValueError, match=r"split of 'x' \(shape \(3, 2\)\) along axis 0: the sizes "
                                         r"\(1, 1\) must be 2 non-negative lengths adding up to 3"):
        run([x], T.split(x, [1, 1], 2), np.ones((3, 2)))
    assert isinstance(T.split(x, [1, 1], 2)[0].owner.op, Split)
    with pytest.raises(TypeError, match="the axis must be an int scalar"):
        Split(2)(x, 0.5, [1, 1])


def test_split_theano_signature_and_symbolic_axis():
    """Split(len_splits)(x, axis, sizes), the axis an int scalar that may be a variable."""
    v = np.arange(24.0).reshape(4, 6)
    x, ax = T.matrix("x"), T.lscalar("ax")
    first, second = Split(2)(x, 0, [4, 0])
    assert_matches(run([x], first, v), v)
    assert run([x], second, v).shape == (0, 6)
    pieces = Split(2)(x, ax, [1, 3])
    f = function([x, ax], pieces)
    for axis in (0, -2):
        for got, want in zip(f(v, axis), np.split(v, [1], axis=0)):
            assert_matches(got, want)
    check_infer_shape([x, ax], pieces, [v, 0])
    with pytest.raises(ValueError, match="adding up to 6"):
        f(v, 1)
    with pytest.raises(ValueError, match="non-negative"):
        run([x], Split(2)(x, 0, T.as_tensor_variable(np.array([5, -1])))[0], v)
    gx, = T.grad((pieces[0] * 2.0).sum() + pieces[1].sum(), [x])
    want = np.ones_like(v)
    want[:1] = 2.0
    assert_matches(run([x, ax], gx, v, 0), want)


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


def test_join_of_one_tensor_is_rewritten_away():
    a = T.TensorType("float64", (True, False, True))("a")
    y = Join()(0, a)
    assert y.broadcastable == a.broadcastable
    f = function([a], y)
    assert not any(isinstance(n.op, Join) for n in f.maker.fgraph.toposort())
    v = np.ones((1, 4, 1))
    assert_matches(f(v), v)
