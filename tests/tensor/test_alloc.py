"""Allocation ops against numpy: alloc, fill/second, zeros/ones/full(_like), arange, eye,
their dtypes, infer_shape, and their errors."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from arignote import config
from arignote import tensor as T
from arignote.tensor.alloc import Alloc, ARange, Eye
from tests.utils import assert_matches, check_infer_shape, run, value, var_for

DTYPES = ["bool", "int8", "uint16", "int64", "float32", "float64", "complex64"]


# ------------------------------------------------------------------ alloc
@given(st.data())
def test_alloc_broadcasts_like_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    v_shape = data.draw(hnp.broadcastable_shapes(shape, max_dims=len(shape), min_side=0))
    if np.broadcast_shapes(v_shape, shape) != shape:
        return
    dtype = data.draw(st.sampled_from(DTYPES))
    v = value(v_shape, dtype)
    val = var_for(v, "v")
    dims = [T.lscalar(f"n{i}") for i in range(len(shape))]
    out = T.alloc(val, *dims)
    assert isinstance(out.owner.op, Alloc) and out.dtype == dtype
    assert_matches(run([val] + dims, out, v, *shape), np.broadcast_to(v, shape))
    check_infer_shape([val] + dims, out, [v] + list(shape))
    assert_matches(run([val], T.alloc(val, *shape), v), np.broadcast_to(v, shape))


def test_alloc_result_is_fresh_and_typed():
    v = np.arange(3.0)
    x = var_for(v)
    out = T.alloc(x, 1, 3)
    assert out.broadcastable == (True, False)
    result = run([x], out, v)
    assert not np.shares_memory(result, v)
    assert T.alloc(1.5, 2).broadcastable == (False,)


def test_alloc_errors():
    x = T.matrix("x")
    with pytest.raises(TypeError, match="alloc: the value 'x' has 2 dimensions but the shape"):
        T.alloc(x, 3)
    with pytest.raises(TypeError, match=r"alloc shape\[0\] must be an integer scalar, got 'f'"):
        T.alloc(0.0, T.dscalar("f"))
    with pytest.raises(TypeError, match=r"alloc shape\[1\] must be an int"):
        T.alloc(0.0, 2, 2.5)
    with pytest.raises(ValueError, match=r"alloc shape\[0\] is negative"):
        T.alloc(0.0, -1)
    v = T.vector("v")
    n = T.lscalar("n")
    with pytest.raises(ValueError, match=r"the value 'v' of shape \(3,\) does not broadcast to the shape \(2, 4\)"):
        run([v, n], T.alloc(v, n, 4), np.zeros(3), 2)
    with pytest.raises(ValueError, match="negative length"):
        run([v, n], T.alloc(v, n, 3), np.zeros(3), -2)


# ------------------------------------------------------- zeros, ones, full
@pytest.mark.parametrize("dtype", [None, "int8", "float32", "complex64", "bool"])
def test_zeros_ones_full(dtype):
    x = T.matrix("x")
    v = np.zeros((2, 3))
    n = T.lscalar("n")
    expected_dtype = dtype or config.floatX
    for shape_arg in [(2, 3), [n, 3], x.shape]:
        zeros = run([x, n], T.zeros(shape_arg, dtype=dtype), v, 2)
        assert_matches(zeros, np.zeros((2, 3), expected_dtype))
        assert_matches(run([x, n], T.ones(shape_arg, dtype=dtype), v, 2), np.ones((2, 3), expected_dtype))
    assert_matches(run([], T.zeros(4, dtype=dtype)), np.zeros(4, expected_dtype))
    assert_matches(run([], T.zeros((), dtype=dtype)), np.zeros((), expected_dtype))
    assert_matches(run([x], T.full(x.shape, 7, dtype="int16"), v), np.full((2, 3), 7, "int16"))
    assert_matches(run([], T.full((2,), np.float32(1.5))), np.full(2, 1.5, "float32"))


def test_zeros_follows_floatx():
    with config.change_flags(floatX="float32"):
        assert T.zeros((2, 2)).dtype == "float32"
        assert T.eye(2).dtype == "float32"


def test_zeros_with_unknown_length_vector_fails_clearly():
    with pytest.raises(TypeError, match="the length of the shape vector 'v' is not known"):
        T.zeros(T.lvector("v"))
    with pytest.raises(TypeError, match="a shape must be an integer vector"):
        T.zeros(T.dvector("v"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (1, 4), (2, 1, 3)])
def test_like_functions(dtype, shape):
    v = value(shape, dtype)
    x = var_for(v)
    assert_matches(run([x], T.zeros_like(x), v), np.zeros_like(v))
    assert_matches(run([x], T.ones_like(x), v), np.ones_like(v))
    assert_matches(run([x], T.ones_like(x, dtype="float32"), v), np.ones(shape, "float32"))
    assert_matches(run([x], T.full_like(x, 3, dtype="int8"), v), np.full(shape, 3, "int8"))
    out = T.zeros_like(x)
    assert out.broadcastable == x.broadcastable
    check_infer_shape([x], out, [v])


def test_fill_broadcasts_value_over_model():
    m = T.matrix("m")
    s = T.fvector("s")
    out = T.fill(m, s)
    assert out.dtype == "float32" and T.second is T.fill
    mv, sv = np.zeros((2, 3)), np.arange(3, dtype="float32")
    result = run([m, s], out, mv, sv)
    assert_matches(result, np.broadcast_to(sv, (2, 3)))
    assert not np.shares_memory(result, sv)
    check_infer_shape([m, s], out, [mv, sv])
    c = T.zmatrix("c")
    assert_matches(run([c], T.fill(c, 2), np.ones((1, 2), "complex128")), np.full((1, 2), 2, "int8"))


# ----------------------------------------------------------------- arange
@pytest.mark.parametrize("args", [(5,), (2, 9), (9, 2, -2), (0,), (3, 3), (5, 0), (-3, 4, 3),
                                  (0.5, 3.0, 0.7), (3.0, -1.5, -0.25), (np.int16(4),),
                                  (np.float32(0.5), 2), (10, 0, 1)])
def test_arange_numeric_and_symbolic(args):
    expected_dtype = T.arange(*args).dtype
    scalars = [T.constant(a).type(f"a{i}") for i, a in enumerate(args)]
    out = T.arange(*scalars)
    assert out.dtype == expected_dtype
    expected = np.arange(*[np.asarray(a, dtype=expected_dtype).item() for a in args], dtype=expected_dtype)
    assert_matches(run(scalars, out, *args), expected)
    assert_matches(run([], T.arange(*args)), expected)
    check_infer_shape(scalars, out, list(args))
    check_infer_shape([], T.arange(*args), [])


def test_arange_dtype_rule_is_theanos_upcast():
    # Theano's rule: integer arguments give int64 (uint64 if unsigned), whatever their width.
    assert T.arange(10).dtype == "int64" and T.arange(T.iscalar("n")).dtype == "int64"
    assert T.arange(np.uint8(0), np.uint8(3), np.uint8(1)).dtype == "uint64"
    assert T.arange(np.uint8(3)).dtype == "int64"  # with int8 constants 0 and 1
    assert T.arange(T.iscalar("a"), T.fscalar("b")).dtype == "float64"
    assert T.arange(T.iscalar("a"), 3, 2.0, dtype="int64").owner.op is T.arange(5).owner.op
    assert T.arange(T.lscalar("n")).dtype == "int64"
    assert T.arange(T.iscalar("n"), dtype="float32").dtype == "float32"
    assert T.arange(0.5, 3).dtype == T.constant(0.5).dtype
    assert T.arange(0.1, 3).dtype == "float64"
    assert T.arange(T.fscalar("a"), 3).dtype == "float32"
    assert isinstance(T.arange(3).owner.op, ARange)


def test_arange_errors():
    with pytest.raises(ValueError, match="step is 0"):
        T.arange(0, 3, 0)
    step = T.lscalar("step")
    with pytest.raises(ValueError, match="the step 'step' is 0"):
        run([step], T.arange(0, 5, step), 0)
    with pytest.raises(TypeError, match="arange stop must be a real number"):
        T.arange(T.lvector("v"))
    with pytest.raises(TypeError, match="arange start must be a real number"):
        T.arange(1j, 3)


# -------------------------------------------------------------------- eye
@pytest.mark.parametrize("n, m, k", [(3, None, 0), (3, 4, 1), (4, 2, -1), (0, 3, 0), (2, 2, 5),
                                     (1, 1, 0), (3, 3, -3)])
@pytest.mark.parametrize("dtype", [None, "int32", "bool", "float32"])
def test_eye(n, m, k, dtype):
    expected = np.eye(n, m, k, dtype=dtype or config.floatX)
    assert_matches(run([], T.eye(n, m, k, dtype=dtype)), expected)
    ns = [T.lscalar("n"), T.lscalar("m"), T.lscalar("k")]
    out = T.eye(ns[0], ns[1], ns[2], dtype=dtype)
    assert isinstance(out.owner.op, Eye)
    assert_matches(run(ns, out, n, n if m is None else m, k), expected)
    check_infer_shape(ns, out, [n, n if m is None else m, k])


def test_identity_like_and_eye_errors():
    x = T.imatrix("x")
    assert_matches(run([x], T.identity_like(x), np.zeros((2, 3), "int32")), np.eye(2, 3, dtype="int32"))
    with pytest.raises(TypeError, match="identity_like expects a matrix, got 'v'"):
        T.identity_like(T.vector("v"))
    with pytest.raises(TypeError, match="eye k must be an integer scalar"):
        T.eye(3, 3, T.dscalar("k"))
    with pytest.raises(ValueError, match="eye n is negative"):
        T.eye(-1)
    n = T.lscalar("n")
    with pytest.raises(ValueError, match="negative size"):
        run([n], T.eye(n), -2)


@pytest.mark.parametrize("dtype", ["float32", "int8", "complex128", "bool"])
def test_alloc_empty(dtype):
    n = T.lscalar("n")
    y = T.AllocEmpty(dtype)(2, n)
    assert y.dtype == dtype and y.broadcastable == (False, False)
    assert T.AllocEmpty(dtype)(1, 3).broadcastable == (True, False)
    from arignote import function
    f = function([n], y)
    out = f(3)
    assert out.shape == (2, 3) and out.dtype == np.dtype(dtype)
    check_infer_shape([n], y, [3])
    g = function([], T.AllocEmpty(dtype)(2, 3))
    assert any(isinstance(node.op, T.AllocEmpty) for node in g.maker.fgraph.toposort())  # not folded
    with pytest.raises(ValueError, match="negative length"):
        f(-1)
    x = T.dscalar("x")
    assert T.grad((T.AllocEmpty("float64")(2) * 0 + x).sum(), x) is not None


def test_eye_and_tri_default_to_floatx():
    assert Eye().dtype == config.floatX and T.Tri().dtype == config.floatX
    assert_matches(run([], Eye()(2, 3, 1)), np.eye(2, 3, 1, dtype=config.floatX))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_fill_is_the_elemwise_op_and_the_zero_gradients_are_fills(dtype):
    """As Theano's ``fill``/``second``: the Elemwise op itself, so ``node.op == T.fill`` tells a
    fill; ``zeros_like`` and a disconnected input's zero gradient are fills of it."""
    import pickle

    from arignote.tensor.elemwise import Elemwise
    x = T.TensorType(dtype, (False, False))("x")
    y = T.fill(x, np.asarray(3, dtype=dtype))
    assert isinstance(T.fill, Elemwise) and T.fill is T.second and y.owner.op == T.fill
    assert T.zeros_like(x).owner.op == T.fill and T.ones_like(x, "float32").owner.op == T.fill
    v = np.zeros((2, 3), dtype=dtype)
    assert_matches(run([x], y, v), np.full((2, 3), 3, dtype=dtype))
    assert pickle.loads(pickle.dumps(T.fill)) == T.fill
    if dtype.startswith("float"):
        w = T.TensorType(dtype, (False,))("w")
        g = T.grad(T.sum(w), x, disconnected_inputs="ignore")
        assert g.owner.op == T.fill and g.dtype == dtype
        assert_matches(run([x, w], g, v, np.ones(3, dtype=dtype)), np.zeros((2, 3), dtype=dtype))
