"""sort/argsort, topk/argtopk and diagonal/diag/AllocDiag against numpy, their shapes and
gradients."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from arignote import function, tensor as T
from arignote.gradient import grad, verify_grad
from arignote.graph.basic import Constant
from arignote.tensor.diagonal import AllocDiag, ExtractDiag
from arignote.tensor.sort import SortOp, argtopk, topk, topk_and_argtopk
from tests.utils import assert_matches, check_infer_shape, run, value, var_for

RNG = np.random.RandomState(11)


@settings(max_examples=30)
@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), st.data(),
       st.sampled_from(["int16", "float32", "float64"]))
def test_sort_and_argsort(shape, data, dtype):
    v = value(shape, dtype)
    x = var_for(v)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    y = T.sort(x, axis)
    assert_matches(run([x], y, v), np.sort(v, axis=axis))
    idx = T.argsort(x, axis, kind="stable")
    assert_matches(run([x], idx, v), np.argsort(v, axis=axis, kind="stable").astype("int64"))
    check_infer_shape([x], [y, idx], [v])


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sort_gradient(axis):
    # Distinct values, so the order (and the gradient) is well defined.
    pt = RNG.permutation(12).reshape(3, 4) + RNG.uniform(0, 0.5, (3, 4))
    verify_grad(lambda x: T.sort(x, axis), [pt], rng=RNG)
    verify_grad(lambda x: x.sort(axis=axis) * x.sort(axis=axis), [pt[:2]], rng=RNG)


@pytest.mark.parametrize("axis_type", [T.lscalar, T.iscalar, T.dscalar])  # Theano took float axes too
def test_symbolic_axis(axis_type):
    x, axis = T.dtensor3("x"), axis_type("axis")
    v = np.random.default_rng(3).random((2, 3, 4))
    sort_f = function([x, axis], T.sort(x, axis))
    argsort_f = function([x, axis], T.argsort(x, axis, kind="stable"))
    weights = np.random.default_rng(4).random((2, 3, 4))
    grad_f = function([x, axis], grad((T.sort(x, axis) * weights).sum(), x))
    for a in (0, 1, 2, -1):
        assert_matches(sort_f(v, a), np.sort(v, axis=a))
        assert_matches(argsort_f(v, a), np.argsort(v, axis=a, kind="stable").astype("int64"))
        fixed = function([x], grad((T.sort(x, a) * weights).sum(), x))
        assert_matches(grad_f(v, a), fixed(v))
    with pytest.raises(ValueError, match="not an integer in"):
        sort_f(v, 3)
    if axis_type is T.dscalar:
        with pytest.raises(ValueError, match="not an integer in"):
            sort_f(v, 0.5)
    check_infer_shape([x, axis], T.sort(x, axis), [v, 1])


def test_sort_arguments():
    x = T.dmatrix("x")
    node = T.sort(x, T.constant(-1)).owner  # Theano passed the axis as a tensor
    assert isinstance(node.inputs[1], Constant) and int(node.inputs[1].data) == 1
    assert SortOp("mergesort", []) == SortOp("mergesort") != SortOp("quicksort", [])  # Theano's (kind, order)
    with pytest.raises(np.exceptions.AxisError, match="out of range"):
        T.sort(x, 2)
    with pytest.raises(TypeError, match="integer"):
        T.sort(x, 0.5)
    with pytest.raises(ValueError, match="kind must be"):
        T.sort(x, kind="bogo")
    with pytest.raises(ValueError, match="structured"):
        T.sort(x, order="field")
    with pytest.raises(np.exceptions.AxisError, match="axis=None"):
        T.sort(T.dscalar("s"))


@pytest.mark.parametrize("shape, offset, axes", [((4, 4), 0, (0, 1)), ((3, 5), 2, (0, 1)),
                                                 ((5, 3), -2, (0, 1)), ((3, 5), -1, (1, 0)),
                                                 ((2, 3, 4), 1, (2, 0)), ((2, 3, 4), 0, (1, 2)),
                                                 ((3, 2), 5, (0, 1))])
def test_diagonal(shape, offset, axes):
    v = value(shape)
    x = var_for(v)
    y = T.diagonal(x, offset, *axes)
    assert_matches(run([x], y, v), np.diagonal(v, offset, *axes))
    check_infer_shape([x], y, [v])
    verify_grad(lambda x: T.diagonal(x, offset, *axes), [v], rng=RNG)
    assert_matches(run([x], x.diagonal(offset, *axes), v), np.diagonal(v, offset, *axes))


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_diag_and_alloc_diag(k):
    vec = value((3,))
    v = T.dvector("v")
    y = T.diag(v, k)
    assert_matches(run([v], y, vec), np.diag(vec, k))
    check_infer_shape([v], y, [vec])
    verify_grad(lambda v: T.diag(v, k), [vec], rng=RNG)
    m = value((4, 5))
    assert_matches(run([v], T.diag(T.constant(m), k), vec), np.diag(m, k))
    batch = value((2, 3))
    b = var_for(batch, "b")
    z = AllocDiag(k, 2, 0)(b)
    got = run([b], z, batch)
    for i in range(2):
        np.testing.assert_array_equal(np.diagonal(got, k, 0, 2)[i], batch[i])
    check_infer_shape([b], z, [batch])
    verify_grad(lambda b: AllocDiag(k, 2, 0)(b), [batch], rng=RNG)
    with pytest.raises(ValueError, match="scalar"):
        T.diag(T.dscalar())


def test_extract_diag_view():
    x = T.dmatrix("x")
    assert ExtractDiag(view=True).view_map == {0: [0]}
    v = value((3, 3))
    assert_matches(run([x], ExtractDiag(view=True)(x), v), np.diag(v))
    with pytest.raises(ValueError, match="must differ"):
        ExtractDiag(0, 1, 1)


def _topk_reference(a, k, axis):
    ordered = np.flip(np.sort(a, axis=axis), axis=axis) if k > 0 else np.sort(a, axis=axis)
    return np.take(ordered, np.arange(abs(k)), axis=axis)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
@pytest.mark.parametrize("shape, axis, k", [((7,), -1, 3), ((7,), 0, -7), ((3, 6), 1, -2),
                                            ((3, 6), 0, 1), ((4, 3, 5), 1, 3), ((4, 3, 5), -1, -5)])
def test_topk_against_numpy(dtype, shape, axis, k):
    rng = np.random.default_rng(abs(k) + len(shape))
    a = rng.permutation(np.prod(shape)).reshape(shape).astype(dtype)  # distinct values: no ties
    x = T.tensor(dtype, (False,) * len(shape), name="x")
    values, positions = topk_and_argtopk(x, k, axis=axis, idx_dtype="int32")
    got_v, got_i = run([x], [values, positions], a)
    assert got_v.dtype == a.dtype and got_i.dtype == np.int32
    np.testing.assert_array_equal(got_v, _topk_reference(a, k, axis))
    np.testing.assert_array_equal(np.take_along_axis(a, got_i, axis=axis), got_v)
    unsorted = run([x], topk(x, k, axis=axis, sorted=False), a)
    np.testing.assert_array_equal(np.sort(unsorted, axis=axis), np.sort(got_v, axis=axis))
    np.testing.assert_array_equal(run([x], argtopk(x, k, axis=axis), a), got_i)
    check_infer_shape([x], values, [a])


def test_topk_gradient_and_flattened_axis():
    rng = np.random.RandomState(4)
    a = rng.rand(3, 5)
    for axis, k in [(1, 2), (0, -2)]:
        verify_grad(lambda v, k=k, axis=axis: topk(v, k, axis=axis), [a], rng=rng)
        verify_grad(lambda v, k=k, axis=axis: topk_and_argtopk(v, k, axis=axis)[0] * 3, [a], rng=rng)
    x = T.dmatrix("x")
    np.testing.assert_array_equal(run([x], topk(x, 4, axis=None), a), -np.sort(-a.ravel())[:4])


def test_topk_refusals():
    x = T.dvector("x")
    k = T.lscalar("k")
    f = function([x, k], topk(x, k))
    with pytest.raises(ValueError, match=r"kth=0, but axis 0 has 3 entries"):
        f(np.ones(3), 0)
    with pytest.raises(ValueError, match=r"kth=-4"):
        f(np.ones(3), -4)
    with pytest.raises(np.exceptions.AxisError):
        topk(x, 1, axis=1)
    with pytest.raises(ValueError, match="scalar"):
        topk(T.dscalar("s"), 1)
    with pytest.raises(TypeError, match="kth must be an integer scalar"):
        topk(x, 1.5)
    with pytest.raises(TypeError, match="idx_dtype"):
        argtopk(x, 1, idx_dtype="float32")
