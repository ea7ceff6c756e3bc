"""Indexing sparse matrices, stacking them, their diagonals, and sparse_grad."""
import numpy as np
import pytest
import scipy.sparse as sp

import arignote
from arignote import sparse as S
from arignote import tensor as T
from tests.sparse.cases import FORMATS, random_sparse


@pytest.mark.parametrize("fmt", FORMATS)
def test_indexing(fmt):
    x = S.SparseType(fmt, "float64")("x")
    a, b, i, j = T.iscalar("a"), T.iscalar("b"), T.iscalar("i"), T.iscalar("j")
    m = random_sparse(fmt, "float64", (6, 5))
    f = arignote.function([x, a, b, i, j], [x[a:b, 1:4], x[::2], x[i, j], x[[4, 0, 4]],
                                            x[[0, 5], [1, 4]]])
    block, every_other, entry, rows, pairs = f(m, 1, 5, 2, 3)
    dense = m.toarray()
    assert sp.issparse(block) and block.format == fmt
    np.testing.assert_array_equal(block.toarray(), dense[1:5, 1:4])
    np.testing.assert_array_equal(every_other.toarray(), dense[::2])
    assert entry.shape == () and entry == dense[2, 3]
    np.testing.assert_array_equal(rows.toarray(), dense[[4, 0, 4]])
    np.testing.assert_array_equal(pairs, dense[[0, 5], [1, 4]])
    with pytest.raises(NotImplementedError, match="sparse vector"):
        x[a:b, 2]
    with pytest.raises(IndexError, match="at most two"):
        x[1, 2, 3]


def test_hstack_vstack():
    a, b = S.csr_dmatrix("a"), S.csc_fmatrix("b")
    ma, mb = random_sparse("csr", "float64", (3, 2)), random_sparse("csc", "float32", (3, 4), seed=2)
    h = arignote.function([a, b], S.hstack([a, b]))(ma, mb)
    assert h.format == "csc" and h.dtype == np.float64
    np.testing.assert_array_equal(h.toarray(), np.hstack([ma.toarray(), mb.toarray()]))
    c = S.csr_dmatrix("c")
    mc = random_sparse("csr", "float64", (2, 2), seed=3)
    v = arignote.function([a, c], S.vstack([a, c], format="csc", dtype="float32"))(ma, mc)
    assert v.format == "csc" and v.dtype == np.float32
    np.testing.assert_allclose(v.toarray(), np.vstack([ma.toarray(), mc.toarray()]), rtol=1e-6)
    with pytest.raises(ValueError, match="do not join"):
        arignote.function([a, c], S.hstack([a, c]))(ma, mc)


def test_diag_and_square_diagonal():
    x, d = S.csc_dmatrix("x"), T.dvector("d")
    m = random_sparse("csc", "float64", (4, 4))
    got, square = arignote.function([x, d], [S.diag(x), S.square_diagonal(d)])(m, np.array([1.0, 0.0, 3.0]))
    np.testing.assert_array_equal(got, m.diagonal())
    np.testing.assert_array_equal(square.toarray(), np.diag([1.0, 0.0, 3.0]))


def test_sparse_grad_of_rows_of_a_matrix():
    w = arignote.shared(np.arange(12.0).reshape(4, 3), name="W")
    idx = T.ivector("idx")
    picked = S.sparse_grad(w[idx])
    g = arignote.grad((picked ** 2).sum(), w)
    assert isinstance(g.type, S.SparseType) and isinstance(g.owner.op, S.ConstructSparseFromList)
    dense_g = arignote.grad((w[idx] ** 2).sum(), w)
    f = arignote.function([idx], [picked, g, dense_g])
    value, sparse_g, want = f(np.array([3, 1, 3], dtype="int32"))
    np.testing.assert_array_equal(value, w.get_value()[[3, 1, 3]])
    assert sp.issparse(sparse_g) and sparse_g.nnz == 6  # two rows, the repeated one summed
    np.testing.assert_array_equal(sparse_g.toarray(), want)
    # an SGD step on a dense W with the sparse gradient
    step = arignote.function([idx], [], updates=[(w, w - 0.1 * g)])
    before = w.get_value()
    step(np.array([0], dtype="int32"))
    np.testing.assert_allclose(w.get_value()[0], before[0] * 0.8)
    np.testing.assert_array_equal(w.get_value()[1:], before[1:])
    with pytest.raises(TypeError, match="rows of a matrix"):
        S.sparse_grad(T.dvector()[idx])
