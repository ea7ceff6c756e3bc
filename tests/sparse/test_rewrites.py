"""The sparse round-trip rewrites, and the products from a matrix's parts (``sd_csc``, ``sd_csr``)."""
import numpy as np
import pytest
import scipy.sparse as sp

import arignote
from arignote import sparse as S
from arignote import tensor as T
from arignote.sparse.products import sd_csc, sd_csr
from tests.sparse.cases import FLOATS, FORMATS, random_sparse, tol


def ops(f):
    return [type(n.op) for n in f.maker.fgraph.toposort()]


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_parts_of_a_matrix_built_from_parts_are_those_parts(fmt):
    data, indices, indptr, shape = T.dvector(), T.ivector(), T.ivector(), T.ivector()
    built = S.CSM(fmt)(data, indices, indptr, shape)
    f = arignote.function([data, indices, indptr, shape], S.csm_properties(built))
    assert not {S.CSM, S.CSMProperties} & set(ops(f))
    m = random_sparse(fmt, "float64", (6, 5))
    got = f(m.data, m.indices, m.indptr, np.array(m.shape, "int32"))
    for value, want in zip(got, (m.data, m.indices, m.indptr, m.shape)):
        np.testing.assert_array_equal(value, want)
    # the rewrite is a specialization: without it the matrix is built and taken apart
    kept = arignote.function([data, indices, indptr, shape], S.csm_properties(built),
                             mode=arignote.compile.mode.get_default_mode().excluding("local_csm_properties_csm"))
    assert S.CSMProperties in ops(kept)


@pytest.mark.parametrize("to_sparse", [S.csr_from_dense, S.csc_from_dense])
def test_a_dense_matrix_through_sparse_and_back_is_itself(to_sparse):
    m = T.dmatrix("m")
    f = arignote.function([m], S.dense_from_sparse(to_sparse(m)) * 2)
    assert not {S.SparseFromDense, S.DenseFromSparse} & set(ops(f))
    value = np.array([[1.0, 0.0], [0.0, 4.0]])
    np.testing.assert_array_equal(f(value), 2 * value)
    v = T.dvector("v")  # a vector becomes a row: that round trip keeps its ops
    g = arignote.function([v], S.dense_from_sparse(to_sparse(v)))
    np.testing.assert_array_equal(g(np.array([1.0, 0.0])), [[1.0, 0.0]])


@pytest.mark.parametrize("dtype", FLOATS)
def test_sd_csc_and_sd_csr_are_the_products_of_the_parts(dtype):
    rng = np.random.RandomState(3)
    b = rng.uniform(-1, 1, (5, 3)).astype(dtype)
    csc = sp.random(4, 5, density=0.6, format="csc", dtype=dtype, random_state=rng)
    csr = csc.tocsr()
    got_csc = sd_csc(csc.data, csc.indices, csc.indptr, np.int32(4), b).eval()
    got_csr = sd_csr(csr.data, csr.indices, csr.indptr, b).eval()
    for got in (got_csc, got_csr):
        assert got.dtype == np.dtype(dtype) and got.shape == (4, 3)
        np.testing.assert_allclose(got, csc @ b, **tol(dtype))


def test_sd_csc_errors_name_the_part():
    b = T.dmatrix("b")
    with pytest.raises(TypeError, match="a_val .* must be a vector"):
        sd_csc(T.dmatrix(), T.ivector(), T.ivector(), np.int32(2), b)
    with pytest.raises(TypeError, match="a_nrows must be an int scalar"):
        sd_csc(T.dvector(), T.ivector(), T.ivector(), T.dscalar(), b)
    with pytest.raises(TypeError, match="b .* must be a dense matrix"):
        sd_csr(T.dvector(), T.ivector(), T.ivector(), T.dvector("b"))
    # a csc matrix of two columns (three index pointers) times a b of three rows
    f = arignote.function([b], sd_csc(np.ones(2), np.array([0, 1], "int32"), np.array([0, 1, 2], "int32"),
                                      np.int32(2), b))
    np.testing.assert_allclose(f(np.ones((2, 2))), np.ones((2, 2)))
    with pytest.raises(ValueError, match="inner lengths"):
        f(np.ones((3, 2)))


@pytest.mark.parametrize("fmt", FORMATS)
def test_csm_grad_c_reads_a_sparse_gradient_at_the_matrix_positions(fmt):
    a = random_sparse(fmt, "float64", (6, 5), seed=2)
    b = random_sparse(fmt, "float64", (6, 5), seed=3) + a  # shares a's positions, and more
    b.data[:2] = 0  # explicit zeros read as 0
    parts = [T.dvector(), T.ivector(), T.ivector(), T.ivector(), T.dvector(), T.ivector(), T.ivector(), T.ivector()]
    f = arignote.function(parts, S.CSMGradC()(*parts))
    shape = np.array(a.shape, "int32")
    got = f(a.data, a.indices, a.indptr, shape, b.data, b.indices, b.indptr, shape)
    major = np.repeat(np.arange(len(a.indptr) - 1), np.diff(a.indptr))
    rows, cols = (major, a.indices) if fmt == "csr" else (a.indices, major)
    np.testing.assert_allclose(got, b.toarray()[rows, cols])
    # b storing nothing: zeros at every position of a
    empty = getattr(sp, f"{fmt}_matrix")(a.shape)
    np.testing.assert_array_equal(f(a.data, a.indices, a.indptr, shape, empty.data, empty.indices.astype("int32"),
                                    empty.indptr.astype("int32"), shape), np.zeros(a.nnz))


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_gradient_of_csm_data_through_a_sparse_cost_uses_csm_grad_c(fmt):
    m = random_sparse(fmt, "float64", (5, 4), seed=4)
    indices, indptr, shape = (T.constant(v.astype("int32")) for v in (m.indices, m.indptr, np.array(m.shape)))

    def cost(data):
        y = S.CSM(fmt)(data * 2, indices, indptr, shape)
        return S.sp_sum(S.mul(y, y), sparse_grad=True)

    data = T.dvector("data")
    g = arignote.grad(cost(data), data)
    f = arignote.function([data], g)
    assert S.CSMGradC in ops(f) and S.CSMGrad not in ops(f)
    np.testing.assert_allclose(f(m.data), 8 * m.data)
    arignote.verify_grad(cost, [m.data], rng=np.random.RandomState(0))
    kept = arignote.function([data], g, mode=arignote.compile.mode.get_default_mode().excluding("local_csm_grad_c"))
    assert S.CSMGrad in ops(kept)
    np.testing.assert_allclose(kept(m.data), 8 * m.data)
