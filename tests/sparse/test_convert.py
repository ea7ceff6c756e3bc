"""Conversions between sparse and dense, and between a matrix and its (data, indices,
indptr, shape)."""
import numpy as np
import pytest
import scipy.sparse as sp

import arignote
from arignote import sparse as S
from arignote import tensor as T
from tests.sparse.cases import FLOATS, FORMATS, matrices, random_sparse


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", FLOATS + ("int32", "complex128"))
def test_dense_round_trip(fmt, dtype):
    d = T.TensorType(dtype, (False, False))("d")
    to_sparse = getattr(S, f"{fmt}_from_dense")
    f = arignote.function([d], to_sparse(d))
    s = S.SparseType(fmt, dtype)("s")
    g = arignote.function([s], [S.dense_from_sparse(s), s.toarray()])
    for m in matrices(fmt, dtype):
        back, also = g(m)
        assert back.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(back, m.toarray())
        np.testing.assert_array_equal(also, m.toarray())
        made = f(m.toarray())
        assert made.format == fmt and made.dtype == np.dtype(dtype)
        assert made.nnz == np.count_nonzero(m.toarray())  # zeros are not stored
        np.testing.assert_array_equal(made.toarray(), m.toarray())


def test_vectors_and_scalars_become_rows():
    v = T.dvector("v")
    f = arignote.function([v], S.csr_from_dense(v))
    assert f(np.array([0.0, 2.0])).shape == (1, 2)
    with pytest.raises(TypeError, match="has 3 dimensions"):
        S.csc_from_dense(T.dtensor3())


@pytest.mark.parametrize("fmt", FORMATS)
def test_csm_properties_and_csm(fmt):
    s = S.SparseType(fmt, "float64")("s")
    m = random_sparse(fmt, "float64", explicit_zero=True)
    data, indices, indptr, shape = arignote.function([s], list(S.csm_properties(s)))(m)
    np.testing.assert_array_equal(data, m.data)
    np.testing.assert_array_equal(indices, m.indices)
    np.testing.assert_array_equal(indptr, m.indptr)
    assert tuple(shape) == m.shape and shape.dtype == np.int32 and indices.dtype == np.int32
    parts = arignote.function([s], [S.csm_data(s), S.csm_indices(s), S.csm_indptr(s), S.csm_shape(s)])(m)
    for a, b in zip(parts, (data, indices, indptr, shape)):
        np.testing.assert_array_equal(a, b)
    d, i, p, sh = T.dvector("d"), T.ivector("i"), T.ivector("p"), T.ivector("sh")
    build = arignote.function([d, i, p, sh], S.CSM(fmt)(d, i, p, sh))
    made = build(m.data, m.indices, m.indptr, np.array(m.shape, dtype="int32"))
    assert made.format == fmt and made.nnz == m.nnz
    np.testing.assert_array_equal(made.toarray(), m.toarray())
    assert S.CSR is S.CSR and S.CSR == S.CSM("csr") and S.CSC == S.CSM("csc")
    with pytest.raises(ValueError, match="2 values but indices has 3"):
        build(np.ones(2), np.zeros(3, "int32"), np.array([0, 3], "int32"), np.array([1, 3], "int32"))
    with pytest.raises(ValueError, match="format must be 'csr' or 'csc'"):
        S.CSM("bsr")


def test_sp_zeros_like_of_an_empty_and_a_wide_matrix():
    s = S.csr_dmatrix("s")
    f = arignote.function([s], S.sp_zeros_like(s))
    for m in (sp.csr_matrix((0, 3)), sp.csr_matrix((3, 0)), random_sparse("csr", "float64", (2, 9))):
        z = f(m)
        assert z.shape == m.shape and z.nnz == 0
