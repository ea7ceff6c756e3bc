"""The ops on a sparse matrix's parts (mul_s_d_csr/_csc, mul_s_v_csr, structured_add_s_v_csr,
sampling_dot_csr), the specialize rewrites making mul_s_d, mul_s_v and structured_add_s_v
into them, and MulSV."""
import numpy as np
import pytest

import arignote
from arignote import sparse as S
from arignote import tensor as T
from arignote.sparse.parts import (mul_s_d_csc, mul_s_d_csr, mul_s_v_csr, sampling_dot_csr,
                                   structured_add_s_v_csr)
from tests.sparse.cases import FLOATS, FORMATS, matrices, random_sparse

RNG = np.random.RandomState(4)


def op_types(f):
    return [type(n.op) for n in f.maker.fgraph.toposort()]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float32"), ("float32", "float64"),
                                    ("int16", "float32")])
def test_mul_s_d_of_a_matrix_computes_only_the_values(fmt, dtypes):
    x, d = S.SparseType(fmt, dtypes[0])("x"), T.TensorType(dtypes[1], (False, False))("d")
    f = arignote.function([x, d], S.mul_s_d(x, d))
    assert S.MulSD not in op_types(f)
    assert type(mul_s_d_csr if fmt == "csr" else mul_s_d_csc) in op_types(f)
    for m in matrices(fmt, dtypes[0], (5, 4)):
        dv = RNG.uniform(-2, 2, m.shape).astype(dtypes[1])
        got = f(m, dv)
        assert got.format == fmt and got.dtype == np.result_type(*dtypes) and got.nnz == m.nnz
        np.testing.assert_allclose(got.toarray(), m.multiply(dv).toarray(), rtol=1e-6)
        np.testing.assert_array_equal(got.indices, m.indices)


@pytest.mark.parametrize("dtype", FLOATS)
def test_mul_s_v_and_structured_add_s_v_of_a_csr_matrix_compute_only_the_values(dtype):
    x, v = S.SparseType("csr", dtype)("x"), T.TensorType(dtype, (False,))("v")
    f = arignote.function([x, v], [S.mul_s_v(x, v), S.structured_add_s_v(x, v)])
    assert not {S.MulSD, S.MulSV, S.StructuredAddSV} & set(op_types(f))
    assert {type(mul_s_v_csr), type(structured_add_s_v_csr)} <= set(op_types(f))
    for m in matrices("csr", dtype, (5, 4)):
        vv = RNG.uniform(-2, 2, 4).astype(dtype)
        scaled, shifted = f(m, vv)
        np.testing.assert_allclose(scaled.toarray(), m.toarray() * vv[None, :], rtol=1e-6)
        want = np.zeros(m.shape, dtype)
        want[np.repeat(np.arange(m.shape[0]), np.diff(m.indptr)), m.indices] = m.data + vv[m.indices]
        np.testing.assert_allclose(shifted.toarray(), want, rtol=1e-6)
        assert shifted.nnz == m.nnz


def test_csc_and_broadcast_operands_keep_the_general_ops():
    x, v, row = S.csc_dmatrix("x"), T.dvector("v"), T.drow("row")
    f = arignote.function([x, v, row], [S.mul_s_v(x, v), S.structured_add_s_v(x, v), S.mul_s_d(x, row)])
    assert {S.MulSV, S.StructuredAddSV, S.MulSD} <= set(op_types(f))
    m, vv = random_sparse("csc", "float64", (5, 4)), RNG.rand(4)
    scaled, _, by_row = f(m, vv, vv[None, :])
    np.testing.assert_allclose(scaled.toarray(), m.toarray() * vv)
    np.testing.assert_allclose(by_row.toarray(), m.toarray() * vv)


def test_a_structured_op_after_mul_reads_the_input_pattern_without_building_the_product():
    x, d = S.csr_dmatrix("x"), T.dmatrix("d")
    f = arignote.function([x, d], S.structured_exp(S.mul_s_d(x, d)))
    # one CSM (the result), csm_properties only of the input
    types = op_types(f)
    assert types.count(S.CSM) == 1 and types.count(S.CSMProperties) == 1
    m, dv = random_sparse("csr", "float64", (5, 4)), RNG.rand(5, 4)
    want = m.multiply(dv).tocsr()
    want.data = np.exp(want.data)
    np.testing.assert_allclose(f(m, dv).toarray(), want.toarray())


def test_mul_s_v_is_an_op_of_its_own_with_the_structured_gradients():
    x, v = S.csr_dmatrix("x"), T.dvector("v")
    assert isinstance(S.mul_s_v(x, v).owner.op, S.MulSV)
    with pytest.raises(TypeError, match="mul_s_v: 'm' must be a vector"):
        S.mul_s_v(x, T.dmatrix("m"))
    for fmt in FORMATS:
        S.verify_grad_sparse(S.mul_s_v, [random_sparse(fmt, "float64", (5, 4)), RNG.uniform(0.5, 1.5, 4)],
                             structured=True)


def test_the_parts_ops_directly_and_their_errors():
    m = random_sparse("csr", "float64", (5, 4))
    data, ind, ptr = T.dvector("data"), T.ivector("ind"), T.ivector("ptr")
    dv, vv = RNG.rand(5, 4), RNG.rand(4)
    f = arignote.function([data, ind, ptr, d := T.dmatrix("d"), v := T.dvector("v")],
                          [mul_s_d_csr(data, ind, ptr, d), mul_s_v_csr(data, ind, ptr, v),
                           structured_add_s_v_csr(data, ind, ptr, v)])
    prod, scaled, shifted = f(m.data, m.indices, m.indptr, dv, vv)
    rows = np.repeat(np.arange(5), np.diff(m.indptr))
    np.testing.assert_allclose(prod, m.data * dv[rows, m.indices])
    np.testing.assert_allclose(scaled, m.data * vv[m.indices])
    np.testing.assert_allclose(shifted, m.data + vv[m.indices])
    with pytest.raises(ValueError, match="'v' of shape \\(2,\\) is smaller than the sparse matrix"):
        f(m.data, m.indices, m.indptr, dv, vv[:2])
    with pytest.raises(TypeError, match="a_indices 'fi' must hold int32 or int64"):
        mul_s_v_csr(data, T.fvector("fi"), ptr, v)
    with pytest.raises(TypeError, match="b 'v' must be a dense matrix"):
        mul_s_d_csc(data, ind, ptr, v)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sampling_dot_csr_is_sampling_dot_on_the_parts(dtype):
    x, y = T.TensorType(dtype, (False, False))("x"), T.TensorType(dtype, (False, False))("y")
    data, ind, ptr, ncols = T.TensorType(dtype, (False,))("data"), T.ivector("ind"), T.ivector("ptr"), T.iscalar("n")
    f = arignote.function([x, y, data, ind, ptr, ncols], sampling_dot_csr(x, y, data, ind, ptr, ncols))
    p = random_sparse("csr", dtype, (5, 6))
    xv, yv = RNG.rand(5, 3).astype(dtype), RNG.rand(6, 3).astype(dtype)
    values, indices, indptr = f(xv, yv, p.data, p.indices, p.indptr, 6)
    want = p.multiply(xv @ yv.T).tocsr()
    got = type(p)((values, indices, indptr), shape=p.shape)
    np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-5)
    assert values.dtype == dtype
    with pytest.raises(ValueError, match="do not fit"):
        f(xv, yv, p.data, p.indices, p.indptr, 5)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float32"), ("float32", "float64")])
def test_the_gradient_of_structured_dot_is_computed_on_the_parts(fmt, dtypes):
    a, b = S.SparseType(fmt, dtypes[0])("a"), T.TensorType(dtypes[1], (False, False))("b")
    ga = arignote.grad(S.sp_sum(S.csr_from_dense(S.structured_dot(a, b) ** 2)), a)
    f = arignote.function([a, b], ga)
    assert S.StructuredDotGrad not in op_types(f)
    assert (S.StructuredDotGradCSR if fmt == "csr" else S.StructuredDotGradCSC) in op_types(f)
    m = random_sparse(fmt, dtypes[0], (5, 4), explicit_zero=True)
    bv = RNG.uniform(-1, 1, (4, 3)).astype(dtypes[1])
    got = f(m, bv)
    assert got.format == fmt and got.dtype == ga.dtype == dtypes[0] and got.nnz == m.nnz
    full = 2 * (m @ bv) @ bv.T  # the dense gradient, kept on a's positions
    pattern = m.copy()
    pattern.data[:] = 1
    np.testing.assert_allclose(got.toarray(), pattern.multiply(full).toarray(), rtol=1e-5)
    S.verify_grad_sparse(S.structured_dot, [random_sparse(fmt, "float64", (5, 4)), RNG.rand(4, 3)],
                         structured=True)


def test_structured_dot_grad_parts_directly():
    m = random_sparse("csc", "float64", (5, 4))
    ind, ptr, b, g = T.ivector("ind"), T.ivector("ptr"), T.dmatrix("b"), T.dmatrix("g")
    bv, gv = RNG.rand(4, 3), RNG.rand(5, 3)
    values = arignote.function([ind, ptr, b, g], S.sdg_csc(ind, ptr, b, g))(m.indices, m.indptr, bv, gv)
    rows, cols = m.indices, np.repeat(np.arange(4), np.diff(m.indptr))
    np.testing.assert_allclose(values, (gv @ bv.T)[rows, cols])
    with pytest.raises(TypeError, match="b 't' must be a vector or a matrix"):
        S.sdg_csr(ind, ptr, T.dtensor3("t"), g)
