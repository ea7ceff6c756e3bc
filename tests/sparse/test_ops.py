"""Elementwise sparse ops against scipy/numpy, over formats, dtypes, explicit zeros and empty
matrices; one table of (name, function building the graph, reference)."""
import numpy as np
import pytest
import scipy.sparse as sp

import arignote
from arignote import sparse as S
from arignote import tensor as T
from tests.sparse.cases import FLOATS, FORMATS, matrices, random_sparse, tol


def _dense(v):
    return v.toarray() if sp.issparse(v) else np.asarray(v)


def _run(build, values, types):
    inputs = [t() for t in types]
    f = arignote.function(inputs, build(*inputs), on_unused_input="ignore")
    return f(*values)


def _check(got, want, dtype, sparse_out):
    assert sp.issparse(got) == sparse_out, type(got)
    np.testing.assert_allclose(_dense(got), _dense(want), **tol(dtype))


# name -> (graph of (x, y), reference of (x, y), sparse result?): x sparse, y sparse of x's
# shape ("ss") or dense of x's shape ("sd").
BINARY = {
    "add_ss": ("ss", lambda x, y: x + y, lambda x, y: x + y, True),
    "sub_ss": ("ss", lambda x, y: x - y, lambda x, y: x - y, True),
    "mul_ss": ("ss", lambda x, y: x * y, lambda x, y: x.multiply(y), True),
    "add_sd": ("sd", lambda x, y: x + y, lambda x, y: x.toarray() + y, False),
    "add_ds": ("sd", lambda x, y: y + x, lambda x, y: x.toarray() + y, False),
    "sub_sd": ("sd", lambda x, y: x - y, lambda x, y: x.toarray() - y, False),
    "sub_ds": ("sd", lambda x, y: y - x, lambda x, y: y - x.toarray(), False),
    "mul_sd": ("sd", lambda x, y: x * y, lambda x, y: x.multiply(y), True),
    "mul_ds": ("sd", lambda x, y: y * x, lambda x, y: x.multiply(y), True),
    "mul_scalar": ("sd", lambda x, y: x * 2.5, lambda x, y: x * 2.5, True),
    "mul_row": ("sd", lambda x, y: x * y[0], lambda x, y: x.multiply(y[0][None, :]), True),
    "col_scale": ("sd", lambda x, y: S.col_scale(x, y[0]), lambda x, y: x.multiply(y[0][None, :]), True),
    "row_scale": ("sd", lambda x, y: S.row_scale(x, y[:, 0]), lambda x, y: x.multiply(y[:, :1]), True),
    "structured_add_s_v": ("sd", lambda x, y: S.structured_add_s_v(x, y[0]),
                           lambda x, y: _on_pattern(x, lambda d, r, c: d + y[0][c]), True),
}


def _on_pattern(x, fn):
    """x with each stored value d at (r, c) replaced by fn(d, r, c)."""
    out = x.copy().tocoo()
    out.data = fn(out.data, out.row, out.col)
    return out


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_binary(name, fmt, dtype):
    kind, build, ref, sparse_out = BINARY[name]
    stype = S.SparseType(fmt, dtype)
    for k, x in enumerate(matrices(fmt, dtype)):
        if name in ("mul_row", "col_scale", "structured_add_s_v") and x.shape[0] == 0:
            continue  # the vector is y's first row
        y = random_sparse(fmt, dtype, x.shape, seed=7 + k) if kind == "ss" else \
            np.random.RandomState(k).uniform(-1, 1, x.shape).astype(dtype)
        ytype = stype if kind == "ss" else T.TensorType(dtype, (False, False))
        _check(_run(build, [x, y], [stype, ytype]), ref(x, y), dtype, sparse_out)


def test_sparse_times_dense_keeps_exactly_the_sparse_pattern():
    x = random_sparse("csr", "float64", explicit_zero=True)
    y = np.zeros(x.shape)
    got = _run(lambda a, b: a * b, [x, y], [S.csr_dmatrix, T.dmatrix])
    assert got.nnz == x.nnz and np.array_equal(got.indices, x.indices)


def test_mixed_formats_and_dtypes_upcast():
    x, y = random_sparse("csr", "float32"), random_sparse("csc", "float64", seed=2)
    got = _run(lambda a, b: a + b, [x, y], [S.csr_fmatrix, S.csc_dmatrix])
    assert got.format == "csr" and got.dtype == np.float64
    np.testing.assert_allclose(got.toarray(), (x + y).toarray())


def test_shape_mismatch_is_a_clear_error():
    a, b = S.csr_dmatrix("a"), S.csr_dmatrix("b")
    f = arignote.function([a, b], a + b)
    with pytest.raises(ValueError, match="'a' has shape \\(5, 4\\) but 'b' has \\(2, 2\\)"):
        f(random_sparse("csr", "float64"), random_sparse("csr", "float64", (2, 2)))
    with pytest.raises(TypeError, match="must be sparse"):
        S.add(T.dmatrix(), T.dmatrix())


UNARY_REFS = {"sqr": np.square, "abs_": np.abs, "rint": np.rint, "sgn": np.sign, "conj": np.conj}


@pytest.mark.parametrize("name", S.UNARY)
@pytest.mark.parametrize("fmt", FORMATS)
def test_unary_on_stored_values(name, fmt):
    fn = getattr(S, name)
    ref = UNARY_REFS.get(name, getattr(np, name, None))
    for x in matrices(fmt, "float64"):
        x = x * 0.5  # inside every op's domain (arctanh, arcsin)
        x = x.asformat(fmt)
        got = _run(fn, [x], [S.SparseType(fmt, "float64")])
        assert got.format == fmt and got.nnz == x.nnz  # structured: the pattern is kept
        want = x.copy()
        want.data = ref(want.data)
        _check(got, want, "float64", True)


STRUCTURED = {
    "structured_sigmoid": (S.structured_sigmoid, lambda d: 1 / (1 + np.exp(-d))),
    "structured_exp": (S.structured_exp, np.exp),
    "structured_log": (S.structured_log, np.log),
    "structured_pow": (lambda x: S.structured_pow(x, 3), lambda d: d ** 3),
    "structured_minimum": (lambda x: S.structured_minimum(x, 0.8), lambda d: np.minimum(d, 0.8)),
    "structured_maximum": (lambda x: S.structured_maximum(x, 0.8), lambda d: np.maximum(d, 0.8)),
    "structured_add": (lambda x: S.structured_add(x, 2.0), lambda d: d + 2.0),
}


@pytest.mark.parametrize("name", sorted(STRUCTURED))
@pytest.mark.parametrize("dtype", FLOATS)
def test_structured_ops_touch_only_stored_values(name, dtype):
    build, ref = STRUCTURED[name]
    x = random_sparse("csc", dtype)
    got = _run(build, [x], [S.SparseType("csc", dtype)])
    assert got.nnz == x.nnz and np.array_equal(got.indices, x.indices)
    np.testing.assert_allclose(got.data, ref(x.data.astype("float64")), rtol=1e-5 if dtype == "float32" else 1e-12)


COMPARISONS = {"eq": np.equal, "neq": np.not_equal, "lt": np.less, "gt": np.greater, "le": np.less_equal,
               "ge": np.greater_equal}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
@pytest.mark.parametrize("fmt", FORMATS)
def test_comparisons(name, fmt):
    fn, ref = getattr(S, name), COMPARISONS[name]
    x = random_sparse(fmt, "float64")
    y = random_sparse(fmt, "float64", seed=4)
    d = np.random.RandomState(0).uniform(0, 1.5, x.shape)
    ss = _run(fn, [x, y], [S.SparseType(fmt, "float64")] * 2)
    assert sp.issparse(ss) and ss.dtype == np.uint8
    np.testing.assert_array_equal(ss.toarray(), ref(x.toarray(), y.toarray()))
    sd = _run(fn, [x, d], [S.SparseType(fmt, "float64"), T.dmatrix])
    ds = _run(lambda a, b: fn(b, a), [x, d], [S.SparseType(fmt, "float64"), T.dmatrix])
    assert not sp.issparse(sd) and sd.dtype == np.uint8
    np.testing.assert_array_equal(sd, ref(x.toarray(), d))
    np.testing.assert_array_equal(ds, ref(d, x.toarray()))


def test_comparison_operators():
    x, d = S.csr_dmatrix("x"), T.dmatrix("d")
    xv = random_sparse("csr", "float64")
    dv = np.full(xv.shape, 0.9)
    f = arignote.function([x, d], [x < d, d < x, x >= d])
    lt, gt, ge = f(xv, dv)
    np.testing.assert_array_equal(lt, xv.toarray() < dv)
    np.testing.assert_array_equal(gt, dv < xv.toarray())
    np.testing.assert_array_equal(ge, xv.toarray() >= dv)


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", FLOATS + ("int64",))
def test_sp_sum(axis, fmt, dtype):
    for x in matrices(fmt, dtype):
        got = _run(lambda v: S.sp_sum(v, axis), [x], [S.SparseType(fmt, dtype)])
        want = np.asarray(x.toarray().sum(axis), dtype=dtype)
        assert got.dtype == np.dtype(dtype) and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("fmt", FORMATS)
def test_transpose_neg_and_representation_ops(fmt):
    x = random_sparse(fmt, "float64", (5, 3), explicit_zero=True)
    t = S.SparseType(fmt, "float64")
    xt = _run(lambda v: v.T, [x], [t])
    assert xt.format == ("csc" if fmt == "csr" else "csr") and xt.shape == (3, 5)
    np.testing.assert_array_equal(xt.toarray(), x.toarray().T)
    np.testing.assert_array_equal(_run(lambda v: -v, [x], [t]).toarray(), -x.toarray())
    removed = _run(S.remove0, [x], [t])
    assert removed.nnz == x.nnz - 1 and x.nnz == np.count_nonzero(x.data) + 1
    unsorted = x.copy()
    unsorted.indices[:2] = unsorted.indices[:2][::-1] if unsorted.indptr[1] >= 2 else unsorted.indices[:2]
    assert _run(S.ensure_sorted_indices, [x], [t]).has_sorted_indices
    cleaned = _run(S.clean, [x], [t])
    assert cleaned.nnz == x.nnz - 1 and cleaned.has_sorted_indices
    ones = _run(S.sp_ones_like, [x], [t])
    assert ones.nnz == x.nnz and np.all(ones.data == 1)
    zeros = _run(S.sp_zeros_like, [x], [t])
    assert zeros.nnz == 0 and zeros.shape == x.shape and zeros.format == fmt


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "complex128"])
def test_cast(dtype):
    x = random_sparse("csr", "float64")
    got = _run(lambda v: S.cast(v, dtype), [x], [S.csr_dmatrix])
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.toarray(), x.toarray().astype(dtype))
    v = S.csr_dmatrix()
    assert S.cast(v, "float64") is v and S.fcast(v).dtype == "float32" and v.astype("int8").dtype == "int8"
    with pytest.raises(TypeError, match="'float16' is not a sparse dtype"):
        S.cast(v, "float16")
