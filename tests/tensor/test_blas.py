"""The dot family against numpy: dot, matmul, tensordot, outer, batched_dot,
batched_tensordot, over ranks 0..3, dtypes, broadcastable dims and bad shapes."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arignote import tensor as T
from arignote.tensor.blas import BatchedTensordot, Dot, MatMul
from tests.utils import assert_matches, check_infer_shape, run, value, var_for

DTYPES = ["int8", "int64", "float32", "float64", "complex128"]


def dot_shapes(a_ndim, b_ndim, n, k, m):
    a = (2, n, k)[3 - a_ndim:] if a_ndim else ()
    if b_ndim == 1:
        b = (k,)
    else:
        b = (3, k, m)[3 - b_ndim:] if b_ndim else ()
    return a, b


@given(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(1, 3),
       st.integers(0, 3), st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_dot_matches_numpy(a_ndim, b_ndim, n, k, m, da, db):
    sa, sb = dot_shapes(a_ndim, b_ndim, n, k, m)
    va, vb = value(sa, da), value(sb, db)
    a, b = var_for(va, "a"), var_for(vb, "b")
    y = T.dot(a, b)
    expected = np.dot(va, vb)
    assert y.dtype == expected.dtype.name
    assert_matches(run([a, b], y, va, vb), expected, 1e-4)
    assert_matches(run([a, b], a.dot(b), va, vb), expected, 1e-4)
    if isinstance(y.owner.op, Dot):
        check_infer_shape([a, b], y, [va, vb])


@given(st.integers(1, 4), st.integers(1, 4), st.sampled_from(DTYPES), st.sampled_from(DTYPES),
       st.lists(st.sampled_from([1, 2]), min_size=2, max_size=2))
def test_matmul_matches_numpy(a_ndim, b_ndim, da, db, batch):
    a_batch = tuple(batch[:max(a_ndim - 2, 0)])
    b_batch = tuple(reversed(batch))[:max(b_ndim - 2, 0)]
    sa = a_batch + (3, 4)[2 - min(a_ndim, 2):]
    sb = b_batch + (4, 2)[:min(b_ndim, 2)] if b_ndim > 1 else (4,)
    va, vb = value(sa, da), value(sb, db)
    a, b = var_for(va, "a"), var_for(vb, "b")
    y = a @ b
    expected = np.matmul(va, vb)
    assert_matches(run([a, b], y, va, vb), expected, 1e-4)
    assert y.broadcastable == tuple(n == 1 for n in expected.shape)
    check_infer_shape([a, b], y, [va, vb])
    assert_matches(run([a, b], vb.T @ a.T if b_ndim == 2 and a_ndim == 2 else y, va, vb),
                   vb.T @ va.T if b_ndim == 2 and a_ndim == 2 else expected, 1e-4)


def test_matmul_broadcasts_non_broadcastable_batches_at_run_time():
    a, b = T.tensor3("a"), T.tensor3("b")
    va, vb = value((1, 2, 3), "float64"), value((4, 3, 5), "float64")
    y = T.matmul(a, b)
    assert_matches(run([a, b], y, va, vb), va @ vb)
    check_infer_shape([a, b], y, [va, vb])


@pytest.mark.parametrize("sa, sb, axes", [
    ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 2), 1), ((2, 3), (4,), 0), ((3,), (3,), 1),
    ((2, 3, 4), (4, 2, 5), [[0, 2], [1, 0]]), ((2, 3, 4), (5, 3), ([-2], [-1])), ((), (), 0),
    ((2, 3, 4), (4, 2, 5), np.array([[0, 2], [1, 0]])), ((2, 3), (3, 4), np.int64(1))])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_tensordot(sa, sb, axes, dtype):
    va, vb = value(sa, dtype), value(sb, "float64")
    a, b = var_for(va, "a"), var_for(vb, "b")
    y = T.tensordot(a, b, axes)
    assert_matches(run([a, b], y, va, vb), np.tensordot(va, vb, axes))
    check_infer_shape([a, b], y, [va, vb])


def test_outer():
    x, y = T.vector("x"), T.lmatrix("y")
    vx, vy = value((3,), "float64"), value((2, 2), "int64")
    assert_matches(run([x, y], T.outer(x, y), vx, vy), np.outer(vx, vy))


@pytest.mark.parametrize("sa, sb", [
    ((4, 2, 3), (4, 3, 5)), ((4, 3), (4, 3)), ((4, 2, 3), (4, 3)), ((4, 3), (4, 3, 2)),
    ((4, 2, 2, 3), (4, 3, 5)), ((4,), (4, 2, 3)), ((4, 2, 3), (4,)), ((0, 2, 3), (0, 3, 1))])
def test_batched_dot(sa, sb):
    va, vb = value(sa, "float32"), value(sb, "float64")
    a, b = var_for(va, "a"), var_for(vb, "b")
    y = T.batched_dot(a, b)
    parts = [np.dot(va[i], vb[i]) for i in range(sa[0])]
    expected = np.stack(parts) if parts else np.zeros((0, 2, 1))
    assert_matches(run([a, b], y, va, vb), expected.astype("float64"))
    check_infer_shape([a, b], y, [va, vb])


def test_tensordot_bad_axes():
    m, n, v = T.matrix("m"), T.matrix("n"), T.vector("v")
    with pytest.raises(ValueError, match=r"axes \(0, 1, 2\) has 3 entries"):
        T.tensordot(m, n, (0, 1, 2))
    with pytest.raises(ValueError, match="name 2 axes of the first input but 1"):
        T.tensordot(m, n, ((0, 1), 0))
    for axes in (((0, 1, 2), (0, 1, 2)), (0, 1)):
        with pytest.raises(ValueError, match="is not an axis"):
            T.tensordot(m, v, axes)
    with pytest.raises(ValueError, match="cannot sum over 2 axes"):
        T.tensordot(m, v, 2)
    with pytest.raises(TypeError, match="axes must be an int or a pair"):
        T.tensordot(m, n, "0")


def test_batched_tensordot():
    va, vb = value((3, 2, 4, 5), "float64"), value((3, 5, 4, 2), "float64")
    a, b = var_for(va, "a"), var_for(vb, "b")
    y = T.batched_tensordot(a, b, [[2, 3], [2, 1]])
    expected = np.stack([np.tensordot(va[i], vb[i], [[1, 2], [1, 0]]) for i in range(3)])
    assert_matches(run([a, b], y, va, vb), expected)
    check_infer_shape([a, b], y, [va, vb])
    z = T.batched_tensordot(T.tensor3("c"), T.tensor3("d"), 1)
    assert z.owner.op.axes == ((2,), (1,))


def test_build_time_errors():
    m = T.matrix("m")
    with pytest.raises(ValueError, match="does not take scalars"):
        T.matmul(m, T.scalar("s"))
    with pytest.raises(ValueError, match=r"axis 1 of 'c' has length 1 but axis 0 of"):
        T.dot(T.col("c"), T.constant(np.ones((3, 2))))
    with pytest.raises(ValueError, match="summed axes must match"):
        T.dot(T.constant(np.ones((2, 3))), T.constant(np.ones((2, 3))))
    with pytest.raises(ValueError, match="batch dimension -3"):
        T.matmul(T.constant(np.ones((2, 1, 3))), T.constant(np.ones((3, 3, 1))))
    with pytest.raises(np.exceptions.AxisError, match="'m'"):
        T.tensordot(m, m, [[2], [0]])
    with pytest.raises(ValueError, match="name 2 axes of the first input but 1"):
        T.tensordot(m, m, [[0, 1], [0]])
    with pytest.raises(ValueError, match="cannot sum over 3 axes"):
        T.tensordot(m, m, 3)
    with pytest.raises(np.exceptions.AxisError, match="other than the batch axis"):
        T.batched_tensordot(T.tensor3("a"), T.tensor3("b"), [[0], [1]])
    with pytest.raises(TypeError, match="batch axis"):
        T.batched_dot(m, T.scalar("s"))
    assert isinstance(T.matmul(m, m).owner.op, MatMul)
    assert isinstance(T.batched_dot(T.tensor3("a"), T.tensor3("b")).owner.op, BatchedTensordot)


def test_run_time_shape_errors_name_both_inputs():
    a, b = T.matrix("a"), T.matrix("b")
    with pytest.raises(ValueError, match=r"dot: 'a' has shape \(2, 3\) and 'b' has shape \(2, 3\)"):
        run([a, b], T.dot(a, b), np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="matmul: 'a'"):
        run([a, b], a @ b, np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="tensordot: 'a'"):
        run([a, b], T.tensordot(a, b, 1), np.ones((2, 3)), np.ones((2, 3)))
    c, d = T.tensor3("c"), T.tensor3("d")
    with pytest.raises(ValueError, match="batched_tensordot: 'c'"):
        run([c, d], T.batched_dot(c, d), np.ones((2, 2, 3)), np.ones((3, 3, 2)))
