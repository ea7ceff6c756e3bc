"""Shape ops against numpy: shape, reshape, flatten, transpose, squeeze, padding,
specify_shape and the broadcast-pattern changes, with their errors and infer_shape."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from arignote import tensor as T
from arignote.tensor.shape import Rebroadcast, Reshape, shape_i
from arignote.tensor.variable import as_tensor_variable
from tests.utils import assert_matches, check_infer_shape, run, value, var_for

DTYPES = ["bool", "int8", "uint16", "int64", "float32", "float64", "complex64"]


# ------------------------------------------------------------------ shape
@pytest.mark.parametrize("shp", [(), (0,), (3,), (1, 4), (2, 1, 3)])
def test_shape_and_shape_i(shp):
    x = T.tensor("float64", (False,) * len(shp), name="x")
    v = np.zeros(shp)
    assert_matches(run([x], T.shape(x), v), np.array(shp, dtype="int64"))
    assert_matches(run([x], x.shape, v), np.array(shp, dtype="int64"))
    for i in range(-len(shp), len(shp)):
        assert_matches(run([x], shape_i(x, i), v), np.array(shp[i], dtype="int64"))
    check_infer_shape([x], T.shape(x), [v])


_X, _T3, _V = T.matrix("X"), T.tensor3("t3"), T.vector("v")
_A, _B = T.dscalar("a"), T.dscalar("b")


# The lengths real Theano 1.0.5 gives (checked), and two it does not know that the graph fixes.
@pytest.mark.parametrize("make, length", [
    (lambda: _X.shape, 2), (lambda: T.shape(_T3), 3), (lambda: T.stack([_A, _B, _A]), 3),
    (lambda: _T3.shape[:2], 2), (lambda: _T3.shape[1:], 2), (lambda: _T3.shape[-2:], 2),
    (lambda: _T3.shape[::2], 2), (lambda: _T3.shape[:5], 3), (lambda: _V.shape[:1], 1),
    (lambda: T.constant(np.arange(4.0)), 4), (lambda: T.as_tensor_variable([_A, _B]), 2),
    (lambda: _A.dimshuffle("x"), 1), (lambda: T.TensorType("float64", (True,))(), 1),
    (lambda: T.stack([_A, _B, _A])[1:], 2), (lambda: _T3.shape[::-1], 3),
])
def test_get_vector_length_where_the_graph_fixes_it(make, length):
    assert T.get_vector_length(make()) == length


@pytest.mark.parametrize("make", [
    lambda: _V, lambda: _V[:2], lambda: _X.shape + 1, lambda: _X[0],
    lambda: T.concatenate([_X.shape, _X.shape]), lambda: _X.shape[0:T.iscalar("n")],
])
def test_get_vector_length_unknown_raises_value_error(make):
    with pytest.raises(ValueError, match="is not known until the function runs"):
        T.get_vector_length(make())


def test_get_vector_length_of_a_non_vector_raises_type_error():
    with pytest.raises(TypeError, match="'X' has 2 dimensions; it takes a vector"):
        T.get_vector_length(_X)


def test_shape_slice_entries_compute():
    """Entries of a constant slice of a shape compute the lengths numpy gives."""
    shp = (5, 6, 7)
    cases = [(_T3.shape[:2], slice(None, 2)), (_T3.shape[-2:], slice(-2, None)),
             (_T3.shape[::2], slice(None, None, 2)), (_T3.shape[::-1], slice(None, None, -1))]
    outs = run([_T3], [e for vec, _ in cases for e in vec], np.zeros(shp))
    assert [int(o) for o in outs] == [n for _, sl in cases for n in shp[sl]]


def test_shape_i_of_broadcastable_dim_is_constant_and_bad_axis_fails():
    x = T.row("x")
    assert isinstance(shape_i(x, 0), T.TensorConstant)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of range for 'x'"):
        shape_i(x, 2)


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
@pytest.mark.parametrize("build, expected", [
    (lambda v: v.dimshuffle("x", "x", 0).shape[1], 1),
    (lambda v: v.dimshuffle("x", "x", 0).shape[-3], 1),
    (lambda v: T.shape_padright(v).shape[1], 1),
    (lambda v: T.shape(v.dimshuffle(0, "x"))[1] * 2, 2),
])
def test_shape_entry_of_broadcastable_dim_keeps_the_input_used(build, expected, mode):
    """``v.dimshuffle('x', 'x', 0).shape[1]`` is 1 but still reads ``v``, as in Theano: the
    function takes ``v`` without an UnusedInputError (the default 'raise') and returns 1,
    which FAST_RUN's rewrites fold to a constant."""
    from arignote.compile.function import function
    v = T.vector("v")
    f = function([v], build(v), mode=mode)
    result = f(np.arange(3.0))
    assert result.dtype == np.int64 and int(result) == expected
    if mode == "FAST_RUN":
        assert [type(n.op).__name__ for n in f.maker.fgraph.toposort()] == ["DeepCopyOp"]


@pytest.mark.parametrize("build, expected", [
    (lambda c: T.zeros(c.shape), np.zeros((1, 1))),
    (lambda c: T.ones(T.shape(c), "int32"), np.ones((1, 1), "int32")),
    (lambda c: T.alloc(np.float64(0), c.shape[0], c.shape[1]), np.zeros((1, 1))),
    (lambda c: T.eye(c.shape[0]), np.eye(1)),
    (lambda c: T.isnan(T.cast(c, "int32")), np.zeros((1, 1), bool)),
])
def test_values_made_from_a_broadcastable_shape_keep_the_input_used(build, expected):
    """Theano built these from ``x.shape[i]``, so the function takes ``c`` (no UnusedInputError);
    the result is still known broadcastable where ``c`` is."""
    from arignote.compile.function import function
    c = T.TensorType("float64", (True, True))("c")
    out = build(c)
    assert out.broadcastable == (True, True)
    assert_matches(function([c], out)(np.full((1, 1), 2.0)), expected)


# ---------------------------------------------------------------- reshape
@st.composite
def shapes_and_targets(draw):
    shp = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    size = int(np.prod(shp))
    targets = [(size,), tuple(reversed(shp)), (1, size), (size, 1, 1)]
    target = list(draw(st.sampled_from(targets)))
    if target and size and draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return shp, tuple(target), draw(st.sampled_from(DTYPES))


@given(shapes_and_targets())
def test_reshape_matches_numpy(case):
    shp, target, dtype = case
    v = value(shp, dtype)
    x = var_for(v)
    y = T.reshape(x, target)
    assert_matches(run([x], y, v), v.reshape(target))
    assert y.broadcastable == tuple(t == 1 for t in target)
    check_infer_shape([x], y, [v])


def test_reshape_with_symbolic_entries_and_vectors():
    x = T.matrix("x")
    n = T.lscalar("n")
    v = np.arange(12.0).reshape(3, 4)
    y = x.reshape((n, -1))
    assert_matches(run([x, n], y, v, 2), v.reshape(2, -1))
    check_infer_shape([x, n], y, [v, 6])
    z = T.reshape(x, (n, 2, 3))
    check_infer_shape([x, n], z, [v, 2])
    other = T.tensor3("other")
    w = x.reshape(other.shape)
    assert w.ndim == 3
    assert_matches(run([x, other], w, v, np.zeros((2, 3, 2))), v.reshape(2, 3, 2))
    check_infer_shape([x, other], w, [v, np.zeros((2, 3, 2))])
    shp = T.lvector("shp")
    u = T.reshape(x, shp, ndim=2)
    assert_matches(run([x, shp], u, v, np.array([6, 2])), v.reshape(6, 2))
    assert_matches(run([x, shp], u, v, np.array([-1, 2])), v.reshape(-1, 2))


def test_reshape_gives_a_view_when_numpy_does():
    x = T.matrix("x")
    y = x.reshape((-1,))
    assert y.owner.op.view_map == {0: [0]}
    v = np.arange(6.0).reshape(2, 3)
    cell = [None]
    y.owner.op.perform(y.owner, [v, np.array([-1])], [cell])
    assert np.shares_memory(cell[0], v)


def test_reshape_errors():
    x = T.matrix("x")
    with pytest.raises(ValueError, match="at most one -1"):
        x.reshape((-1, -1))
    with pytest.raises(ValueError, match="must be >= 0"):
        x.reshape((2, -3))
    with pytest.raises(ValueError, match="pass ndim="):
        x.reshape(T.lvector("s"))
    with pytest.raises(TypeError, match="shape entry 2.5"):
        x.reshape((2.5, 2))
    with pytest.raises(TypeError, match="int vector"):
        x.reshape(T.vector("fs"), ndim=1)
    with pytest.raises(ValueError, match="6 elements"):
        T.reshape(T.constant(np.zeros((2, 3))), (4, 2))
    with pytest.raises(ValueError, match=r"cannot reshape 'x' of shape \(2, 3\) \(6 elements\) "
                                         r"to \(4, -1\)"):
        run([x], x.reshape((4, -1)), np.zeros((2, 3)))
    s = T.lvector("s")
    with pytest.raises(ValueError, match="was built for 2"):
        run([x, s], Reshape(2)(x, s), np.zeros((2, 3)), [6])


# ---------------------------------------------------------------- flatten
@pytest.mark.parametrize("shp, ndim", [(shp, ndim) for shp in [(), (4,), (2, 3), (2, 0, 3), (2, 1, 3, 2)]
                                       for ndim in range(1, max(len(shp), 1) + 1)])
def test_flatten(shp, ndim):
    v = value(shp, "float32")
    x = var_for(v)
    y = T.flatten(x, ndim)
    expected = v.reshape(v.shape[:ndim - 1] + (int(np.prod(v.shape[ndim - 1:])),))
    assert_matches(run([x], y, v), expected)
    assert y.broadcastable == x.broadcastable[:ndim - 1] + (all(x.broadcastable[ndim - 1:]),)
    check_infer_shape([x], y, [v])


def test_flatten_bad_ndim():
    with pytest.raises(ValueError, match="ndim must be between 1 and 2"):
        T.matrix("m").flatten(3)


# -------------------------------------------------- transpose, squeeze, pads
@pytest.mark.parametrize("axes", [None, (1, 0, 2), (-1, 0, 1), [2, 1, 0]])
def test_transpose(axes):
    v = value((2, 3, 4), "int64")
    x = var_for(v)
    assert_matches(run([x], T.transpose(x, axes), v), np.transpose(v, axes))
    assert_matches(run([x], x.T, v), v.T)


def test_full_transpose_is_named_after_its_input():
    x = T.tensor3("x1")
    assert x.T.name == "x1.T" and T.transpose(x).name == "x1.T" and x.transpose().name == "x1.T"
    assert x.transpose(2, 1, 0).name == "x1.T"
    assert x.transpose(1, 0, 2).name is None and T.tensor3().T.name is None


def test_transpose_bad_axes():
    with pytest.raises(ValueError, match="not a permutation"):
        T.transpose(T.matrix("m"), (0, 0))
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of range"):
        T.transpose(T.matrix("m"), (2, 0))


def test_squeeze():
    x = T.tensor("float64", (True, False, True), name="x")
    v = np.zeros((1, 3, 1))
    assert_matches(run([x], T.squeeze(x), v), v.squeeze())
    assert_matches(run([x], x.squeeze(-1), v), v.squeeze(-1))
    m = T.matrix("m")
    y = T.squeeze(m, 0)
    assert y.ndim == 1
    assert_matches(run([m], y, np.ones((1, 4))), np.ones(4))
    with pytest.raises(ValueError, match="declared broadcastable"):
        run([m], y, np.ones((2, 4)))


def test_padding():
    v = value((2, 3), "float64")
    x = var_for(v)
    assert_matches(run([x], T.shape_padleft(x, 2), v), v[None, None])
    assert_matches(run([x], T.shape_padright(x), v), v[..., None])
    for axis in (0, 1, 2, -1, -3):
        y = T.shape_padaxis(x, axis)
        assert_matches(run([x], y, v), np.expand_dims(v, axis))
        assert y.broadcastable[axis]
    with pytest.raises(np.exceptions.AxisError, match="axis 3 is out of range"):
        T.shape_padaxis(x, 3)


# --------------------------------------------------------- run-time checks
def test_specify_shape():
    x = T.matrix("x")
    y = T.specify_shape(x, (2, None))
    v = np.zeros((2, 5))
    assert_matches(run([x], y, v), v)
    check_infer_shape([x], y, [v])
    with pytest.raises(ValueError, match=r"'x' was declared to have shape \(2, None\), but its "
                                         r"value has shape \(3, 5\)"):
        run([x], y, np.zeros((3, 5)))
    n = T.lscalar("n")
    z = T.specify_shape(x, (n, 1))
    assert z.broadcastable == (False, True)
    assert_matches(run([x, n], z, np.zeros((4, 1)), 4), np.zeros((4, 1)))
    with pytest.raises(AssertionError, match="declared"):  # Theano's class, and a ValueError
        run([x, n], z, np.zeros((4, 1)), 3)
    with pytest.raises(ValueError, match="has 2 dimensions, but the shape given has 3"):
        T.specify_shape(x, (1, 2, 3))
    with pytest.raises(AssertionError, match="the shape given has 0 entries"):  # Theano's class
        T.specify_shape(x, [])
    with pytest.raises(ValueError, match="broadcastable"):
        T.specify_shape(T.row("r"), (3, 4))


def test_broadcast_patterns():
    x = T.matrix("x")
    y = T.addbroadcast(x, 0)
    assert y.broadcastable == (True, False)
    assert T.unbroadcast(y, 0).broadcastable == (False, False)
    assert T.addbroadcast(T.row("r"), 0).owner is None
    p = T.patternbroadcast(x, (False, True))
    assert isinstance(p.owner.op, Rebroadcast)
    v = np.zeros((1, 3))
    assert_matches(run([x], y, v), v)
    check_infer_shape([x], y, [v])
    with pytest.raises(ValueError, match=r"dimension 0 of 'x' was declared broadcastable \(length "
                                         r"1\), but the value has shape \(2, 3\)"):
        run([x], y, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="at most one flag per dimension"):
        T.patternbroadcast(x, (True, True, True))
    with pytest.raises(np.exceptions.AxisError):
        T.addbroadcast(x, 2)


def test_short_broadcast_patterns_and_rebroadcast_merging():
    """Theano's rules: a shorter pattern sets the leading flags; Rebroadcasts of Rebroadcasts
    merge into one node, or none when the flags come back to the original's."""
    x, s = T.matrix("x"), T.scalar("s")
    assert T.patternbroadcast(x, s.broadcastable) is x
    assert T.patternbroadcast(x, (True,)).broadcastable == (True, False)
    assert T.unbroadcast(T.addbroadcast(x, 1), 1) is x
    assert T.addbroadcast(T.unbroadcast(x, 1), 1) is not x
    both = T.addbroadcast(T.addbroadcast(x, 0), 1)
    assert both.broadcastable == (True, True) and both.owner.inputs[0] is x
    b = T.TensorType("float64", (True, True))("b")
    assert T.unbroadcast(T.unbroadcast(b, 1), 0).owner.inputs[0] is b
    assert T.addbroadcast(T.unbroadcast(b, 0), 0) is b
    mixed = T.addbroadcast(T.unbroadcast(b, 1), 0)
    assert mixed.owner.inputs[0] is b and mixed.broadcastable == (True, False)
    v = np.zeros((1, 1))
    assert_matches(run([x], both, v), v)
    with pytest.raises(ValueError, match="declared broadcastable"):
        run([x], both, np.zeros((1, 2)))


def test_list_of_variables_becomes_a_stacked_tensor():
    a, b = T.scalar("a"), T.scalar("b")
    v = as_tensor_variable([a, b, 3.0])
    assert v.ndim == 1
    assert_matches(run([a, b], v, 1.0, 2.0), np.array([1.0, 2.0, 3.0]))
    m = as_tensor_variable([[a, b], [b, a]])
    assert_matches(run([a, b], m, 1.0, 2.0), np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_get_scalar_constant_value_sees_through_vectors_shapes_fills_and_asserts():
    value = T.get_scalar_constant_value
    b = T.iscalar("b")
    v = T.stack([b, 2, 3])
    assert value(v[1]) == 2 and value(v[-1]) == 3 and value(T.stack([1, 2, 3])[0]) == 1
    with pytest.raises(T.NotScalarConstantError):
        value(v[0])
    assert value(T.row().shape[0]) == 1
    floats = T.constant(np.array([0.25, 0.5, 0.75]))
    assert value(floats[1]) == 0.5 and value(floats[-1]) == 0.75
    c = T.constant(np.arange(12.0).reshape(3, 4))
    assert value(T.Shape_i(0)(c)) == 3 and value(T.Shape_i(1)(c)) == 4 and value(c[1, 2]) == 6
    two = T.constant(2)
    assert value(T.Assert()(two, T.gt(two, 1))) == 2
    for unproven in (T.Assert()(two, T.gt(two, 2)), T.Assert()(two, T.gt(two, T.scalar()))):
        with pytest.raises(T.NotScalarConstantError):
            value(unproven)
    assert value(T.second(T.vector("shape_model"), T.constant(0.5))) == 0.5
    assert value(T.addbroadcast(T.constant(np.ones((1, 1))), 0)) == 1
    assert value(T.alloc(T.constant(2.5), T.lscalar("n"), 3)) == 2.5
    assert value(T.constant(4).dimshuffle("x", "x")) == 4
    x = T.matrix("x")
    assert value(T.grad(T.argmax(x, axis=0).sum(), x)) == 0
    with pytest.raises(T.EmptyConstantError):
        value(np.array([]))
    with pytest.raises(T.NotScalarConstantError):
        value(np.array([0, 1]))
    assert value(np.array(3)) == 3


def test_get_scalar_constant_value_sees_through_the_scalar_conversions():
    from arignote import shared
    from arignote.tensor.scalar_conversion import scalar_from_tensor, tensor_from_scalar
    value = T.get_scalar_constant_value
    d = shared(np.ones((1, 1)), broadcastable=(True, True))
    assert value(scalar_from_tensor(T.Shape_i(0)(d))) == 1
    assert value(tensor_from_scalar(scalar_from_tensor(T.constant(5)))) == 5
    with pytest.raises(T.NotScalarConstantError):
        value(scalar_from_tensor(T.lscalar("n")))


def test_static_value_looks_at_a_shared_subexpression_once():
    """Shape graphs share subexpressions (each step of a recurrent layer reuses the last):
    walking every path was exponential in their depth (2**40 paths here)."""
    from arignote.tensor.shape import static_value
    m = T.constant(np.int64(1))
    for _ in range(40):
        m = m + m
    assert static_value(m) == 2 ** 40
    n = T.matrix("x").shape[0]
    for _ in range(40):
        n = n + n
    assert static_value(n) is None
