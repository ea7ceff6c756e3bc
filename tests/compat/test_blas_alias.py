"""``theano.tensor.blas``, ``blas_c``, ``blas_scipy`` under the alias: Theano's names of the BLAS
ops, and the graph helpers of its gemm rewrite (sums read as scaled terms, scalars found
under DimShuffles)."""
import numpy as np
import pytest

import arignote
from arignote import config
from arignote.tensor import gemm


def test_theano_names_are_the_blas_ops(theano):
    import theano.tensor as T
    from theano.tensor.blas import (Gemm, Ger, InconsistencyError, _dot22, _dot22scalar, gemm_inplace,
                                    gemm_no_inplace, gemv_no_inplace, ger_destructive)
    from theano.tensor.blas_c import CGemv, CGer, check_force_gemv_init
    from theano.tensor.blas_scipy import ScipyGer, scipy_ger_inplace
    assert Gemm is gemm.Gemm and gemm_inplace is gemm.gemm_inplace and _dot22 is gemm.dot22
    assert gemm_no_inplace is T.blas.gemm and gemv_no_inplace is T.blas.gemv
    assert _dot22scalar is gemm.dot22scalar and ger_destructive is gemm.ger_destructive
    assert issubclass(CGer, Ger) and issubclass(CGemv, gemm.Gemv) and issubclass(ScipyGer, Ger)
    assert scipy_ger_inplace.destructive and check_force_gemv_init() is False
    assert InconsistencyError is arignote.graph.errors.InconsistencyError
    assert T.blas.Dot is arignote.tensor.Dot  # the dot family is there too, as in Theano


@pytest.mark.parametrize("destructive", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_scipy_ger_matches_numpy(theano, destructive, dtype, order):
    import theano.tensor as T
    from theano.tensor.blas_scipy import ScipyGer
    A, a, x, y = T.matrix(dtype=dtype), T.scalar(dtype=dtype), T.vector(dtype=dtype), T.vector(dtype=dtype)
    f = theano.function([theano.In(A, mutable=True), a, x, y], ScipyGer(destructive)(A, a, x, y),
                        mode=theano.Mode(optimizer=None), accept_inplace=destructive)
    rng = np.random.default_rng(1)
    Av = np.asarray(rng.standard_normal((3, 4)), dtype=dtype, order=order)
    xv, yv = (np.asarray(rng.standard_normal(n), dtype=dtype) for n in (3, 4))
    expected = Av + 0.5 * np.outer(xv, yv)
    np.testing.assert_allclose(f(Av.copy(order="A"), np.asarray(0.5, dtype), xv, yv), expected, rtol=1e-5)


def test_ldflags_splits_the_blas_flag(theano):
    from theano.tensor.blas import ldflags
    saved = config.blas.ldflags
    config.blas.ldflags = "-L/opt/lib -lopenblas -lgfortran -I/opt/include -Wl,-rpath,/opt/lib"
    try:
        assert ldflags() == ["openblas", "gfortran"]
        assert ldflags(libs=False, libs_dir=True) == ["/opt/lib"]
        assert ldflags(libs=False, include_dir=True, flags=True) == ["/opt/include", "-Wl,-rpath,/opt/lib"]
    finally:
        config.blas.ldflags = saved


def test_as_scalar_finds_the_scalar_under_dimshuffles(theano):
    import theano.tensor as T
    from theano.tensor.blas import _as_scalar
    a = T.dscalar("a")
    assert _as_scalar(a) is a and _as_scalar(a.dimshuffle("x", "x")) is a
    row = T.constant(np.full((1, 1), 2.0))
    assert _as_scalar(row).ndim == 0 and _as_scalar(row) is not row
    assert _as_scalar(T.dmatrix()) is None and _as_scalar(T.constant(np.ones(3))) is None
    i = T.iscalar("i")
    assert _as_scalar(i, "float64").dtype == "float64" and _as_scalar(i, "float32") is None


def test_real_matrix_and_vector(theano):
    import theano.tensor as T
    from theano.tensor.blas import _is_real_matrix, _is_real_vector
    assert _is_real_matrix(T.dmatrix().T) and not _is_real_matrix(T.dvector().dimshuffle("x", 0))
    assert not _is_real_matrix(T.zmatrix()) and not _is_real_matrix(T.lmatrix())
    assert _is_real_vector(T.fvector()) and not _is_real_vector(T.dmatrix())


def test_res_is_a(theano):
    import theano.tensor as T
    from theano.tensor.blas import res_is_a
    a = T.dscalar()
    assert res_is_a(T.sqrt(a + a), T.sqrt) and not res_is_a(a + a, T.sqrt) and not res_is_a(a, T.sqrt)


def test_gemm_canonicalize_reads_scaled_terms(theano):
    import theano.tensor as T
    from theano.tensor.blas import _factor_canonicalized, _gemm_canonicalize
    X, Y, Z = T.matrix("X"), T.matrix("Y"), T.matrix("Z")
    a, b, c = T.scalar("a"), T.scalar("b"), T.scalar("c")
    assert _gemm_canonicalize(X + Y - Z, 1.0, [], 0) == [(1.0, X), (1.0, Y), (-1.0, Z)]
    terms = _gemm_canonicalize(a * X - b * Z * c, 2.0, [], 0)
    assert terms[0][1] is X and terms[1][1] is Z
    values = {a: 3.0, b: 5.0, c: 7.0}
    scales = [theano.function(list(values), s, on_unused_input="ignore")(*values.values()) for s, _ in terms]
    np.testing.assert_allclose(scales, [6.0, -70.0], rtol=1e-6)
    neg = _gemm_canonicalize(-(X + a * Y), 1.0, [], 0)
    assert neg[0] == (-1.0, X) and neg[1][1] is Y
    v = T.vector("v")
    third = _gemm_canonicalize(X + v, 1.0, [], 0)[1]
    assert third[1].owner.inputs == [v] and isinstance(third[1].owner.op, T.DimShuffle)
    assert _gemm_canonicalize(T.iscalar("i") + 0, 1.0, [], 0)[0].ndim == 0  # another rank: as it is
    assert _factor_canonicalized([(1.0, X), (1.0, Y), (2.0, X), Z]) == [(3.0, X), (1.0, Y), Z]


@pytest.mark.parametrize("ranks", [(2, 2), (2, 3), (3, 2), (3, 3)])
def test_batched_dot_op_of_theanos_blas(theano, ranks):
    import theano.tensor as T
    from theano.tensor.blas import BatchedDot
    shapes = {(2, 2): ((4, 3), (4, 3)), (2, 3): ((4, 3), (4, 3, 2)), (3, 2): ((4, 5, 3), (4, 3)),
              (3, 3): ((4, 5, 3), (4, 3, 2))}[ranks]
    rng = np.random.default_rng(2)
    xv, yv = (rng.standard_normal(s) for s in shapes)
    x, y = T.tensor("float64", (False,) * ranks[0]), T.tensor("float32", (False,) * ranks[1])
    out = BatchedDot()(x, y)
    assert out.dtype == "float64"
    expected = np.stack([np.dot(a, b) for a, b in zip(xv, yv.astype("float32"))])
    np.testing.assert_allclose(theano.function([x, y], out)(xv, yv.astype("float32")), expected, rtol=1e-5)
    with pytest.raises(TypeError, match="2-d or 3-d"):
        BatchedDot()(T.dvector(), y)
