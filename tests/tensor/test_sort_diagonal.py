"""sort/argsort and diagonal/diag/AllocDiag against numpy, their shapes and gradients."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.diagonal import AllocDiag, ExtractDiag
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


def test_sort_arguments():
    x = T.dmatrix("x")
    assert T.sort(x, T.constant(0)).owner.op.axis == 0  # Theano passed the axis as a tensor
    with pytest.raises(TypeError, match="fixed when the graph is built"):
        T.sort(x, T.iscalar("a"))
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
