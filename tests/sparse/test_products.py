"""structured_dot, dot, true_dot and sampling_dot against scipy's products."""
import numpy as np
import pytest
import scipy.sparse as sp

import arignote
from arignote import sparse as S
from arignote import tensor as T
from tests.sparse.cases import FLOATS, FORMATS, matrices, random_sparse, tol


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_structured_dot_sparse_dense(fmt, dtype):
    s, d = S.SparseType(fmt, dtype)("s"), T.TensorType(dtype, (False, False))("d")
    f = arignote.function([s, d], [S.structured_dot(s, d), arignote.dot(s, d)])
    w = np.random.RandomState(0).uniform(-1, 1, (4, 3)).astype(dtype)
    for m in matrices(fmt, dtype, (5, 4)):
        sd, also = f(m, w)
        assert sd.dtype == np.dtype(dtype) and sd.shape == (m.shape[0], 3)
        np.testing.assert_allclose(sd, m @ w, **tol(dtype))
        np.testing.assert_allclose(also, m @ w, **tol(dtype))


def test_structured_dot_dense_left_and_vector():
    s, d, v = S.csr_dmatrix("s"), T.dmatrix("d"), T.dvector("v")
    m = random_sparse("csr", "float64", (5, 4))
    left = np.random.RandomState(1).uniform(size=(3, 5))
    vec = np.arange(4.0)
    f = arignote.function([s, d, v], [S.structured_dot(d, s), S.structured_dot(s, v)])
    ds, sv = f(m, left, vec)
    np.testing.assert_allclose(ds, left @ m.toarray())
    np.testing.assert_allclose(sv, m @ vec)


@pytest.mark.parametrize("fa,fb", [("csr", "csr"), ("csr", "csc"), ("csc", "csr")])
def test_sparse_sparse_products(fa, fb):
    a, b = S.SparseType(fa, "float64")("a"), S.SparseType(fb, "float64")("b")
    ma, mb = random_sparse(fa, "float64", (5, 4)), random_sparse(fb, "float64", (4, 6), seed=3)
    sdot, dense, true = arignote.function([a, b], [S.structured_dot(a, b), S.dot(a, b), S.true_dot(a, b)])(ma, mb)
    want = (ma @ mb).toarray()
    assert sp.issparse(sdot) and sdot.format == fa and sp.issparse(true) and true.format == fa
    assert isinstance(dense, np.ndarray)
    for got in (sdot.toarray(), dense, true.toarray()):
        np.testing.assert_allclose(got, want)


def test_dot_mixed_and_true_dot_dense_left():
    s, d = S.csc_dmatrix("s"), T.dmatrix("d")
    m = random_sparse("csc", "float64", (4, 4))
    w = np.random.RandomState(2).uniform(size=(4, 4))
    sd, ds, tsd, tds = arignote.function([s, d], [S.dot(s, d), S.dot(d, s), S.true_dot(s, d),
                                                   S.true_dot(d, s)])(m, w)
    np.testing.assert_allclose(sd, m @ w)
    np.testing.assert_allclose(ds, w @ m.toarray())
    assert sp.issparse(tsd) and sp.issparse(tds)
    np.testing.assert_allclose(tsd.toarray(), m @ w)
    np.testing.assert_allclose(tds.toarray(), w @ m.toarray())
    with pytest.raises(TypeError, match="must be sparse"):
        S.dot(d, d)


def test_inner_length_mismatch_is_a_clear_error():
    s, d = S.csr_dmatrix("s"), T.dmatrix("w")
    f = arignote.function([s, d], S.structured_dot(s, d))
    with pytest.raises(ValueError, match="'s' has shape \\(5, 4\\) and 'w' \\(3, 2\\)"):
        f(random_sparse("csr", "float64", (5, 4)), np.ones((3, 2)))


def test_sampling_dot():
    x, y, p = T.dmatrix("x"), T.dmatrix("y"), S.csr_dmatrix("p")
    xv, yv = np.random.RandomState(0).uniform(size=(5, 3)), np.random.RandomState(1).uniform(size=(4, 3))
    pv = random_sparse("csr", "float64", (5, 4))
    got = arignote.function([x, y, p], S.sampling_dot(x, y, p))(xv, yv, pv)
    assert got.nnz == pv.nnz
    np.testing.assert_allclose(got.toarray(), pv.multiply(xv @ yv.T).toarray())
