"""SparseType, the variables and constants, and the constructors."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import arignote
from arignote import sparse as S
from tests.sparse.cases import FORMATS, random_sparse


@pytest.mark.parametrize("fmt", FORMATS)
def test_type_identity_and_pickling(fmt):
    t = S.SparseType(fmt, "float32")
    assert t == S.SparseType(fmt, "float32") and hash(t) == hash(S.SparseType(fmt, "float32"))
    assert t != S.SparseType(fmt, "float64") and t != S.SparseType("csr" if fmt == "csc" else "csc", "float32")
    assert pickle.loads(pickle.dumps(t)) == t
    assert str(t) == f"Sparse[float32, {fmt}]"
    x = t("x")
    assert (x.ndim, x.dtype, x.format, x.type) == (2, "float32", fmt, t)
    back = pickle.loads(pickle.dumps(x))
    assert back.type == t and back.name == "x"


def test_type_refuses_unknown_formats_and_dtypes():
    with pytest.raises(TypeError, match="'bsr'.*tocsr"):
        S.SparseType("bsr", "float64")
    with pytest.raises(TypeError, match="unsupported dtype 'float16'"):
        S.SparseType("csr", "float16")


def test_constructors():
    assert S.csr_matrix("a").type == S.SparseType("csr", arignote.config.floatX)
    assert S.csc_matrix(dtype="int32").type == S.SparseType("csc", "int32")
    assert S.matrix("csc", "m", "float32").type == S.csc_fmatrix
    assert S.sparse_formats == ["csc", "csr"]
    assert {"float32", "float64", "int64", "complex128"} <= S.all_dtypes


@pytest.mark.parametrize("fmt", FORMATS)
def test_filter(fmt):
    t = S.SparseType(fmt, "float64")
    m = random_sparse(fmt, "float64")
    assert t.filter(m) is m
    other = random_sparse("csr" if fmt == "csc" else "csc", "float32")
    converted = t.filter(other)  # another format, a lossless upcast
    assert converted.format == fmt and converted.dtype == np.float64
    np.testing.assert_array_equal(converted.toarray(), other.toarray())
    assert t.filter(np.eye(2)).format == fmt
    with pytest.raises(TypeError, match="strict=True converts nothing"):
        t.filter(other, strict=True)
    narrow = S.SparseType(fmt, "float32")
    with pytest.raises(TypeError, match="lose precision.*astype"):
        narrow.filter(m)
    assert narrow.filter(m, allow_downcast=True).dtype == np.float32
    with pytest.raises(TypeError, match="2-d array"):
        t.filter(np.ones(3))
    with pytest.raises(TypeError, match="symbolic variable"):
        t.filter(S.csr_matrix())


def test_values_eq_and_may_share_memory():
    t = S.SparseType("csr", "float64")
    a = random_sparse("csr", "float64")
    b = a.copy()
    b.data[0] += 1e-9
    assert t.values_eq(a, a.copy()) and not t.values_eq(a, b)
    assert t.values_eq_approx(a, b) and not t.values_eq_approx(a, sp.csr_matrix(a.shape))
    with_zero = a.copy()
    with_zero.data[0] = 0
    without = with_zero.copy()
    without.eliminate_zeros()
    assert t.values_eq(with_zero, without)  # a stored zero equals an absent one
    assert S.SparseType.may_share_memory(a, a.data) and S.SparseType.may_share_memory(a.indptr, a)
    assert not S.SparseType.may_share_memory(a, a.copy())


def test_as_sparse_variable_and_constants():
    m = random_sparse("csc", "float64")
    c = S.as_sparse_variable(m)
    assert isinstance(c, S.SparseConstant) and c.type == S.csc_dmatrix
    m.data[:] = 7  # the constant holds a copy
    assert not np.all(c.data.data == 7)
    x = S.csr_matrix()
    assert S.as_sparse(x) is x
    with pytest.raises(TypeError, match="csr_from_dense"):
        S.as_sparse_variable(arignote.tensor.matrix("d"))
    assert isinstance(S.as_sparse_or_tensor_variable(np.ones((2, 2))).type, arignote.tensor.TensorType)
    assert S.as_sparse_or_tensor_variable(m).type == S.csc_dmatrix
    # equal constants merge by value
    f = arignote.function([], [S.dense_from_sparse(S.as_sparse(m)), S.dense_from_sparse(S.as_sparse(m))])
    first, second = f()
    np.testing.assert_array_equal(first, m.toarray())
    np.testing.assert_array_equal(second, m.toarray())


def test_a_sparse_variable_is_never_densified_by_accident():
    x = S.csr_matrix("x")
    with pytest.raises(TypeError, match="sparse matrix 'x'.*dense_from_sparse"):
        arignote.tensor.exp(x)
    with pytest.raises(TypeError, match="len"):
        len(x)


def test_shape_and_size():
    x = S.csc_matrix("x")
    m = random_sparse("csc", "float64", (6, 3), explicit_zero=True)
    f = arignote.function([x], [x.shape, x.shape[0], x.size, x.T.shape])
    shape, rows, size, shape_t = f(m)
    assert tuple(shape) == (6, 3) and rows == 6 and shape.dtype == np.int64
    assert size == m.nnz  # stored values, the explicit zero included
    assert tuple(shape_t) == (3, 6)


def test_specify_shape_of_a_sparse_matrix():
    s = arignote.shared(random_sparse("csr", "float64", (5, 4)), name="s")
    checked = arignote.tensor.specify_shape(s, (5, None))
    assert checked.type == s.type
    f = arignote.function([], S.dense_from_sparse(checked))
    assert f().shape == (5, 4)
    s.set_value(random_sparse("csr", "float64", (2, 4)))
    with pytest.raises(ValueError, match="declared to have shape \\(5, None\\)"):
        f()
