"""tensor.nlinalg and tensor.slinalg against numpy/scipy, their shapes and gradients
(finite differences), and the triangle that each symmetric-matrix op reads."""
import numpy as np
import pytest
import scipy.linalg

from arignote import function, tensor as T
from arignote.gradient import verify_grad
from arignote.tensor import nlinalg as N
from arignote.tensor import slinalg as S
from tests.utils import assert_matches, check_infer_shape, run

RNG = np.random.RandomState(23)


def spd(n, rng=RNG):
    a = rng.randn(n, n)
    return a @ a.T + n * np.eye(n)


def test_inverse_pinv_det():
    x = T.dmatrix("x")
    a = RNG.randn(4, 4) + 4 * np.eye(4)
    assert_matches(run([x], N.matrix_inverse(x), a), np.linalg.inv(a))
    assert_matches(run([x], N.det(x), a), np.asarray(np.linalg.det(a)))
    rect = RNG.randn(5, 3)
    assert_matches(run([x], N.pinv(x), rect), np.linalg.pinv(rect))
    for op, pt in ((N.matrix_inverse, a), (N.det, a), (N.pinv, rect), (N.pinv, rect.T)):
        verify_grad(op, [pt], rng=RNG)
        check_infer_shape([x], op(x), [pt])
    f = T.fmatrix("f")
    assert run([f], N.matrix_inverse(f), a.astype("float32")).dtype == np.float32
    with pytest.raises(TypeError, match="integer matrix"):
        N.det(T.imatrix("i"))
    with pytest.raises(ValueError, match="must be square"):
        run([x], N.det(x), rect)


def test_eig_eigh():
    x = T.dmatrix("x")
    sym = spd(4)
    w, v = run([x], N.eig(x), sym)
    np.testing.assert_allclose(sym @ v, v * w, atol=1e-10)
    with pytest.raises(ValueError, match="complex"):
        run([x], N.eig(x), np.array([[0.0, -1.0], [1.0, 0.0]]))
    for uplo in ("L", "U"):
        junk = np.tril(sym) + np.triu(RNG.randn(4, 4), 1) if uplo == "L" else np.triu(sym) + np.tril(RNG.randn(4, 4), -1)
        w, v = run([x], N.eigh(x, uplo), junk)
        ww, vv = np.linalg.eigh(junk, uplo)
        assert_matches(w, ww)
        np.testing.assert_allclose(np.abs(v), np.abs(vv), atol=1e-10)
        # Eigenvalues, and eigenvectors through a sign-free function of them.
        verify_grad(lambda a, uplo=uplo: N.eigh(a, uplo)[0], [junk], rng=RNG)
        verify_grad(lambda a, uplo=uplo: N.eigh(a, uplo)[1] ** 2, [junk], rng=RNG)
    check_infer_shape([x], N.eigh(x), [sym])


def test_svd_qr():
    x = T.dmatrix("x")
    a = RNG.randn(5, 3)
    for full in (True, False):
        u, s, vt = run([x], N.svd(x, full), a)
        uu, ss, vvt = np.linalg.svd(a, full)
        assert u.shape == uu.shape and vt.shape == vvt.shape
        assert_matches(s, ss)
        check_infer_shape([x], N.svd(x, full), [a])
    assert_matches(run([x], N.svd(x, compute_uv=False), a), np.linalg.svd(a, compute_uv=False))
    for mode in ("reduced", "complete"):
        q, r = run([x], N.qr(x, mode), a)
        np.testing.assert_allclose(q @ r, a, atol=1e-12)
    assert run([x], N.qr(x, "r"), a).shape == (3, 3)
    h, tau = run([x], N.qr(x, "raw"), a)
    assert h.shape == (3, 5) and tau.shape == (3,)
    with pytest.raises(ValueError, match="mode must be"):
        N.qr(x, "economic")


def test_helpers():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    a, b = RNG.randn(3, 3), RNG.randn(3, 2)
    assert_matches(run([x], N.trace(x), a), np.asarray(np.trace(a)))
    assert_matches(run([x], x.trace(), a), np.asarray(np.trace(a)))
    assert_matches(run([x], N.diag(x), a), np.diag(a))
    assert_matches(run([x, y], N.matrix_dot(x, x, y), a, b), a @ a @ b)
    assert_matches(run([x], N.matrix_power(x, 3), a), np.linalg.matrix_power(a, 3))
    v = T.dvector("v")
    vec = RNG.randn(4)
    for ord_ in (None, "inf", "-inf", 1, 3):
        want = np.linalg.norm(vec, {"inf": np.inf, "-inf": -np.inf}.get(ord_, ord_))
        np.testing.assert_allclose(run([v], N.norm(v, ord_), vec), want)
    for ord_ in (None, "fro", "inf", "-inf", 1, -1):
        want = np.linalg.norm(a, {"inf": np.inf, "-inf": -np.inf}.get(ord_, ord_))
        np.testing.assert_allclose(run([x], N.norm(x, ord_), a), want)
    verify_grad(N.trace, [a], rng=RNG)


def test_norm_refusals():
    with pytest.raises(ValueError, match="ord='fro' is not a vector norm"):
        N.norm(T.dvector("v"), "fro")
    with pytest.raises(ValueError, match="not a matrix norm"):
        N.norm(T.dmatrix("m"), 0)
    with pytest.raises(ValueError, match="the scalar"):
        N.norm(3, None)
    with pytest.raises(NotImplementedError, match="3-d"):
        N.norm(T.dtensor3("t"), None)


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
@pytest.mark.parametrize("b_shape", [(5,), (5, 2)])
def test_lstsq(dtype, b_shape):
    a_val = (RNG.randn(5, 3) * 4).astype(dtype)
    b_val = (RNG.randn(*b_shape) * 4).astype(dtype)
    a, b, rcond = T.matrix("a", dtype=dtype), T.tensor(dtype, (False,) * len(b_shape), name="b"), T.dscalar()
    outs = N.lstsq()(a, b, rcond)
    got = function([a, b, rcond], outs)(a_val, b_val, -1.0)
    want = np.linalg.lstsq(a_val, b_val, rcond=-1)
    tol = 1e-4 if dtype == "float32" else 1e-9
    for value, ref, out in zip(got, want, outs):
        assert value.dtype == out.dtype
        np.testing.assert_allclose(value, ref, rtol=tol, atol=tol)
    assert got[2] == 3 and outs[2].dtype == "int64"
    with pytest.raises(TypeError, match="lstsq expects a coefficient matrix"):
        N.lstsq()(T.dvector("v"), b, rcond)


@pytest.mark.parametrize("shape, ind", [((4, 6, 8, 3), 2), ((6, 2, 3), 1), ((2, 3, 6), 2)])
def test_tensorinv(shape, ind):
    t = T.tensor("float64", (False,) * len(shape), name="t")
    a = RNG.randn(*shape)
    inv = N.tensorinv(t, ind)
    assert_matches(run([t], inv, a), np.linalg.tensorinv(a, ind))
    check_infer_shape([t], inv, [a])
    with pytest.raises(TypeError, match=r"tensorinv\(ind=3\) expects a float tensor of more than 3"):
        N.tensorinv(T.dtensor3("x"), 3)


def test_tensorsolve():
    a_val, b_val = RNG.randn(6, 2, 3), RNG.randn(6)
    a, b = T.dtensor3("a"), T.dvector("b")
    x = N.tensorsolve(a, b)
    assert x.ndim == 2
    assert_matches(run([a, b], x, a_val, b_val), np.linalg.tensorsolve(a_val, b_val))
    moved_val, rhs_val = RNG.randn(2, 6, 3), RNG.randn(2, 3)  # axes=(1,): a's axis 1 goes last
    m, r = T.dtensor3("m"), T.dmatrix("r")
    assert_matches(run([m, r], N.tensorsolve(m, r, axes=(1,)), moved_val, rhs_val),
                   np.linalg.tensorsolve(moved_val, rhs_val, axes=(1,)))
    with pytest.raises(TypeError, match="more dimensions than b"):
        N.tensorsolve(b, a)


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky(lower):
    x = T.dmatrix("x")
    a = spd(4)
    out = run([x], S.Cholesky(lower)(x), a)
    assert_matches(out, scipy.linalg.cholesky(a, lower=lower))
    verify_grad(S.Cholesky(lower), [a], rng=RNG)
    check_infer_shape([x], S.cholesky(x), [a])
    with pytest.raises(scipy.linalg.LinAlgError, match="'x'.*on_error='nan'"):
        run([x], S.cholesky(x), -a)
    assert np.isnan(run([x], S.Cholesky(on_error="nan")(x), -a)).all()
    g = T.grad(S.Cholesky(on_error="nan")(x).sum(), x)
    assert np.isnan(run([x], g, -a)).all()
    np.testing.assert_allclose(run([x], g, a), run([x], T.grad(S.cholesky(x).sum(), x), a))


@pytest.mark.parametrize("structure", ["general", "symmetric", "lower_triangular", "upper_triangular"])
@pytest.mark.parametrize("bshape", [(4,), (4, 2)])
def test_solve(structure, bshape):
    a = spd(4) if structure == "symmetric" else RNG.randn(4, 4) + 4 * np.eye(4)
    b = RNG.randn(*bshape)
    op = S.Solve(structure, lower=structure == "lower_triangular")
    A, B = T.dmatrix("A"), T.tensor("float64", (False,) * len(bshape), name="B")
    if structure.endswith("triangular"):
        want = scipy.linalg.solve_triangular(a, b, lower=structure.startswith("lower"))
    else:
        want = scipy.linalg.solve(a, b)
    assert_matches(run([A, B], op(A, B), a, b), want)
    check_infer_shape([A, B], op(A, B), [a, b])
    verify_grad(op, [a, b], rng=RNG)


def test_solve_names():
    A, b = T.dmatrix("A"), T.dvector("b")
    a, bv = np.triu(RNG.randn(3, 3)) + 3 * np.eye(3), RNG.randn(3)
    assert_matches(run([A, b], S.solve_triangular(A, b), a, bv), scipy.linalg.solve_triangular(a, bv))
    assert_matches(run([A, b], S.solve_upper_triangular(A, b), a, bv), scipy.linalg.solve_triangular(a, bv))
    assert_matches(run([A, b], S.solve_lower_triangular(A.T, b), a, bv),
                   scipy.linalg.solve_triangular(a.T, bv, lower=True))
    with pytest.raises(ValueError, match="has 2 rows"):
        run([A, b], S.solve(A, b), a, bv[:2])


@pytest.mark.parametrize("a_dtype", ["uint8", "int32", "int64", "float16", "float32", "float64"])
@pytest.mark.parametrize("b_dtype", ["int8", "uint16", "float32", "float64"])
def test_solve_dtypes(a_dtype, b_dtype):
    """Integer systems solve, as in Theano; the variable's dtype is the one scipy computes in."""
    A, B = T.matrix(dtype=a_dtype), T.matrix(dtype=b_dtype)
    a, b = 2 * np.eye(3) + np.triu(np.ones((3, 3))), np.arange(6).reshape(3, 2)
    x = S.solve(A, B)
    got = run([A, B], x, a.astype(a_dtype), b.astype(b_dtype))
    want = scipy.linalg.solve(a.astype(a_dtype), b.astype(b_dtype))
    assert x.dtype == got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-3 if x.dtype == "float32" else 1e-12)


@pytest.mark.parametrize("lower", [True, False])
def test_eigvalsh(lower):
    a, b = T.dmatrix("a"), T.dmatrix("b")
    av, bv = spd(4), spd(4)
    assert_matches(run([a], S.eigvalsh(a, None, lower), av), scipy.linalg.eigvalsh(av, lower=lower))
    assert_matches(run([a, b], S.eigvalsh(a, b, lower), av, bv), scipy.linalg.eigvalsh(av, bv, lower=lower))
    assert_matches(run([a], S.eigvalsh(a, T.NoneConst, lower), av), scipy.linalg.eigvalsh(av, lower=lower))
    verify_grad(lambda a: S.eigvalsh(a, None, lower), [av], rng=RNG)
    verify_grad(lambda a, b: S.eigvalsh(a, b, lower), [av, bv], rng=RNG)
    check_infer_shape([a], S.eigvalsh(a), [av])


def test_expm_and_kron():
    x = T.dmatrix("x")
    a = RNG.randn(4, 4) / 2
    assert_matches(run([x], S.expm(x), a), scipy.linalg.expm(a))
    verify_grad(S.expm, [a], rng=RNG)
    check_infer_shape([x], S.expm(x), [a])
    y = T.dmatrix("y")
    b = RNG.randn(2, 3)
    assert_matches(run([x, y], S.kron(x, y), a, b), np.kron(a, b))
    t = T.dtensor3("t")
    c = RNG.randn(2, 2, 3)
    assert run([x, t], S.kron(x, t), a, c).shape == (8, 8, 3)
    with pytest.raises(TypeError, match="add up to 3"):
        S.kron(T.dvector(), T.dvector())


def test_float32_stays_float32():
    x = T.fmatrix("x")
    a = spd(3).astype("float32")
    f = function([x], [S.cholesky(x), N.matrix_inverse(x), S.expm(x), S.eigvalsh(x)])
    assert all(r.dtype == np.float32 for r in f(a))
    g = function([x], T.grad(S.cholesky(x).sum() + N.det(x), x))
    assert g(a).dtype == np.float32


def test_nlinalg_alloc_diag_takes_vectors_only_and_eigh_is_an_eig():
    v = T.dvector("v")
    assert_matches(run([v], N.alloc_diag(v), np.arange(3.0)), np.diag(np.arange(3.0)))
    with pytest.raises(TypeError, match="vector"):
        N.alloc_diag(T.dmatrix("m"))
    assert T.AllocDiag()(T.dmatrix("m")).ndim == 3  # tensor's AllocDiag takes stacks
    w, _ = N.eigh(T.dmatrix("a"))
    assert isinstance(w.owner.op, N.Eig) and N.Eigh() != N.Eig() and N.Eigh("L") != N.Eigh("U")
    verify_grad(lambda a: N.eigh(a + a.T)[0].sum(), [np.random.default_rng(0).standard_normal((3, 3))])
