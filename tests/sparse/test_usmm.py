"""usmm (``alpha * dot(x, y) + z`` with a sparse operand), its rewrites, and the sparse ops
the in-place phase lets overwrite an input (UsmmCscDense, AddSD_ccode, Remove0,
EnsureSortedIndices)."""
import numpy as np
import pytest
import scipy.sparse as sp

import arignote
from arignote import In
from arignote import sparse as S
from arignote import tensor as T
from arignote.sparse.usmm import UsmmCscDense, usmm_csc_dense, usmm_csc_dense_inplace
from tests.sparse.cases import FORMATS, random_sparse

RNG = np.random.RandomState(0)


def ops(f):
    return [n.op for n in f.maker.fgraph.toposort()]


def operand(kind, dtype, shape, seed):
    """A sparse matrix of format ``kind``, or a dense one for ``kind == 'dense'``."""
    if kind == "dense":
        return np.random.RandomState(seed).uniform(-1, 1, shape).astype(dtype)
    return random_sparse(kind, dtype, shape, seed=seed)


def variable(kind, dtype, name):
    return T.TensorType(dtype, (False, False))(name) if kind == "dense" else S.SparseType(kind, dtype)(name)


def reference(alpha, x, y, z):
    product = x @ y
    product = product.toarray() if sp.issparse(product) else np.asarray(product)
    return z + alpha * product


KINDS = [("csr", "dense"), ("csc", "dense"), ("dense", "csr"), ("dense", "csc"), ("csr", "csc"), ("csc", "csc")]


@pytest.mark.parametrize("kx,ky", KINDS)
@pytest.mark.parametrize("dtypes", [("float64",) * 4, ("float32",) * 4, ("float32", "float64", "int16", "float32"),
                                    ("complex64", "float32", "float32", "float64")])
def test_usmm_is_alpha_times_the_product_plus_z(kx, ky, dtypes):
    da, dx, dy, dz = dtypes
    a, z = T.TensorType(da, ())("a"), T.TensorType(dz, (False, False))("z")
    x, y = variable(kx, dx, "x"), variable(ky, dy, "y")
    out = S.usmm(a, x, y, z)
    assert out.dtype == np.result_type(*(np.dtype(d) for d in dtypes)).name
    f = arignote.function([a, x, y, z], out)
    xv, yv = operand(kx, dx, (5, 4), 1), operand(ky, dy, (4, 3), 2)
    zv = RNG.uniform(-1, 1, (5, 3)).astype(dz)
    got = f(np.asarray(-1.5 if da != "int16" else 3, dtype=da), xv, yv, zv)
    assert got.dtype == out.dtype and got.shape == (5, 3)
    alpha = -1.5 if da != "int16" else 3
    np.testing.assert_allclose(got, reference(alpha, xv, yv, zv), rtol=1e-5, atol=1e-5)


def test_usmm_takes_a_one_by_one_alpha_and_infers_its_shape_without_computing():
    a, x, y, z = T.TensorType("float64", (True, True))("a"), S.csr_dmatrix("x"), T.dmatrix("y"), T.dmatrix("z")
    out = S.usmm(a, x, y, z)
    xv, yv, zv = random_sparse("csr", "float64", (6, 4)), RNG.rand(4, 2), RNG.rand(6, 2)
    np.testing.assert_allclose(arignote.function([a, x, y, z], out)(np.full((1, 1), 2.0), xv, yv, zv),
                               reference(2.0, xv, yv, zv))
    shape = arignote.function([x, y, z], out.shape, givens=[(a, T.constant(np.ones((1, 1))))])
    assert not any(isinstance(op, S.Usmm) for op in ops(shape))
    assert tuple(shape(xv, yv, zv)) == (6, 2)


def test_usmm_refuses_what_it_cannot_compute():
    a, d, z = T.dscalar("a"), T.dmatrix("d"), T.dmatrix("z")
    with pytest.raises(TypeError, match="one of 'd' and 'd' must be sparse"):
        S.usmm(a, d, d, z)
    with pytest.raises(TypeError, match="alpha 'a2' .* must be a scalar"):
        S.usmm(T.dvector("a2"), S.csr_dmatrix("x"), d, z)
    with pytest.raises(TypeError, match="z 'zv' must be a dense matrix"):
        S.usmm(a, S.csr_dmatrix("x"), d, T.dvector("zv"))
    f = arignote.function([a, x := S.csr_dmatrix("x"), d, z], S.usmm(a, x, d, z))
    with pytest.raises(ValueError, match="inner lengths 4 and 3 differ"):
        f(1.0, random_sparse("csr", "float64", (5, 4)), RNG.rand(3, 2), RNG.rand(5, 2))


@pytest.mark.parametrize("kx,ky", KINDS)
def test_z_minus_a_times_a_sparse_dot_becomes_one_usmm(kx, ky):
    a, z = T.dscalar("a"), T.dmatrix("z")
    x, y = variable(kx, "float64", "x"), variable(ky, "float64", "y")
    f = arignote.function([a, x, y, z], z - a * S.dot(x, y))
    fused = [op for op in ops(f) if isinstance(op, (S.Usmm, UsmmCscDense))]
    assert len(fused) == 1 and not any(isinstance(op, S.Dot) for op in ops(f))
    # a csc matrix times a dense one takes the parts form (which can write into z)
    assert isinstance(fused[0], UsmmCscDense) == (kx == "csc" and ky == "dense")
    xv, yv, zv = operand(kx, "float64", (5, 4), 1), operand(ky, "float64", (4, 3), 2), RNG.rand(5, 3)
    np.testing.assert_allclose(f(0.5, xv, yv, zv), reference(-0.5, xv, yv, zv))


def test_the_plus_form_in_either_order_and_several_scalar_factors():
    a, b, x, y, z = T.dscalar("a"), T.dscalar("b"), S.csr_dmatrix("x"), T.dmatrix("y"), T.dmatrix("z")
    xv, yv, zv = random_sparse("csr", "float64", (5, 4)), RNG.rand(4, 3), RNG.rand(5, 3)
    for expr in (z + S.dot(x, y) * a * b, (a * b) * S.dot(x, y) + z):
        f = arignote.function([a, b, x, y, z], expr)
        assert any(isinstance(op, S.Usmm) for op in ops(f))
        np.testing.assert_allclose(f(2.0, 3.0, xv, yv, zv), reference(6.0, xv, yv, zv))


def test_usmm_is_not_made_where_the_product_is_needed_elsewhere_or_the_scale_is_not_scalar():
    a, x, y, z = T.dscalar("a"), S.csr_dmatrix("x"), T.dmatrix("y"), T.dmatrix("z")
    row = T.drow("row")
    product = S.dot(x, y)
    shared_product = arignote.function([a, x, y, z], [z - a * product, product])
    assert not any(isinstance(op, S.Usmm) for op in ops(shared_product))
    by_row = arignote.function([row, x, y, z], z - row * S.dot(x, y))
    assert not any(isinstance(op, S.Usmm) for op in ops(by_row))
    xv, yv, zv, rv = random_sparse("csr", "float64", (5, 4)), RNG.rand(4, 3), RNG.rand(5, 3), RNG.rand(1, 3)
    np.testing.assert_allclose(by_row(rv, xv, yv, zv), zv - rv * (xv @ yv))
    excluded = arignote.function([a, x, y, z], z - a * S.dot(x, y),
                                 mode=arignote.compile.mode.get_default_mode().excluding("local_usmm"))
    assert not any(isinstance(op, S.Usmm) for op in ops(excluded))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_usmm_csc_dense_writes_into_a_mutable_z(dtype):
    a, x, y = T.TensorType(dtype, ())("a"), S.SparseType("csc", dtype)("x"), T.TensorType(dtype, (False, False))("y")
    z = T.TensorType(dtype, (False, False))("z")
    f = arignote.function([a, x, y, In(z, mutable=True)], z - a * S.dot(x, y))
    assert any(op == usmm_csc_dense_inplace for op in ops(f))
    xv, yv = random_sparse("csc", dtype, (5, 4)), RNG.rand(4, 3).astype(dtype)
    zv = RNG.rand(5, 3).astype(dtype)
    want = reference(-2.0, xv, yv, zv)
    buffer = zv.copy()
    got = f(np.asarray(2, dtype), xv, yv, buffer)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(buffer, want, rtol=1e-5)  # z's own buffer holds the result
    # without In(mutable=True) z is left alone
    safe = arignote.function([a, x, y, z], z - a * S.dot(x, y))
    assert any(op == usmm_csc_dense for op in ops(safe))
    untouched = zv.copy()
    safe(np.asarray(2, dtype), xv, yv, untouched)
    np.testing.assert_array_equal(untouched, zv)


def test_usmm_csc_dense_parts_and_its_errors():
    m = random_sparse("csc", "float64", (5, 4))
    parts = [T.dscalar("a"), T.dvector("v"), T.ivector("i"), T.ivector("p"), T.iscalar("n"), T.dmatrix("y"),
             T.dmatrix("z")]
    f = arignote.function(parts, usmm_csc_dense(*parts))
    yv, zv = RNG.rand(4, 2), RNG.rand(5, 2)
    np.testing.assert_allclose(f(1.5, m.data, m.indices, m.indptr, 5, yv, zv), reference(1.5, m, yv, zv))
    with pytest.raises(TypeError, match="x_ind 'fi' .* must be a vector of integers"):
        usmm_csc_dense(parts[0], parts[1], T.fvector("fi"), *parts[3:])
    with pytest.raises(TypeError, match="float32 and float64 only"):
        usmm_csc_dense(T.iscalar("k"), T.ivector("iv"), *parts[2:5], T.imatrix("iy"), T.imatrix("iz"))
    with pytest.raises(TypeError, match="z 'z32' is float32 but the result is float64"):
        usmm_csc_dense_inplace(*parts[:6], T.fmatrix("z32"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_add_s_d_adds_into_a_mutable_dense_operand(fmt):
    x, d = S.SparseType(fmt, "float64")("x"), T.dmatrix("d")
    f = arignote.function([x, In(d, mutable=True)], S.add(x, d))
    inplace = [op for op in ops(f) if isinstance(op, S.AddSD_ccode)]
    assert len(inplace) == 1 and inplace[0].inplace and inplace[0].format == fmt
    xv, dv = random_sparse(fmt, "float64", (5, 4), explicit_zero=True), RNG.rand(5, 4)
    buffer = dv.copy()
    got = f(xv, buffer)
    np.testing.assert_allclose(got, dv + xv.toarray())
    np.testing.assert_allclose(buffer, dv + xv.toarray())
    # a broadcast operand cannot hold the result, nor an input that is not mutable
    row = T.drow("row")
    for inputs, expr in (([x, In(row, mutable=True)], S.add(x, row)), ([x, d], S.add(x, d))):
        g = arignote.function(inputs, expr)
        assert not any(getattr(op, "inplace", False) for op in ops(g))
    np.testing.assert_allclose(arignote.function([x, row], S.add(x, row))(xv, dv[:1]), dv[:1] + xv.toarray())


def test_add_sd_ccode_checks_its_format_and_buffer():
    with pytest.raises(TypeError, match=r"'x' is csr; build AddSD_ccode\('csr'\)"):
        S.AddSD_ccode("csc")(S.csr_dmatrix("x"), T.dmatrix("d"))
    with pytest.raises(TypeError, match="'f32' .* cannot hold the result"):
        S.AddSD_ccode("csr", inplace=True)(S.csr_dmatrix("x"), T.fmatrix("f32"))
    x, d = S.csc_fmatrix("x"), T.fmatrix("d")
    out = S.AddSD_ccode("csc")(x, d)
    xv, dv = random_sparse("csc", "float32", (3, 4)), RNG.rand(3, 4).astype("float32")
    np.testing.assert_allclose(arignote.function([x, d], out)(xv, dv), dv + xv.toarray(), rtol=1e-6)


@pytest.mark.parametrize("fmt", FORMATS)
def test_remove0_and_sorting_tidy_a_mutable_input_itself(fmt):
    x = S.SparseType(fmt, "float64")("x")
    for op, check in ((S.Remove0, lambda m: 0 not in m.data), (S.EnsureSortedIndices, lambda m: m.has_sorted_indices)):
        f = arignote.function([In(x, mutable=True, borrow=True)], op()(x))
        assert [o.inplace for o in ops(f) if isinstance(o, op)] == [True]
        m = random_sparse(fmt, "float64", (6, 5), explicit_zero=True)
        m.indices[m.indptr[0]:m.indptr[1]] = m.indices[m.indptr[0]:m.indptr[1]][::-1]
        m.has_sorted_indices = False
        dense = m.toarray()
        got = f(m)
        assert check(got) and check(m)  # the argument itself was tidied
        np.testing.assert_array_equal(got.toarray(), dense)
        kept = arignote.function([x], op()(x))
        assert [o.inplace for o in ops(kept) if isinstance(o, op)] == [False]
