"""The BLAS ops built by hand (Theano's theano.tensor.blas): Gemm, Gemv, Ger, Dot22, Dot22Scalar
against numpy over dtypes, in-place forms, bad inputs, and the gradient of Dot22."""
import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.compile.io import In
from arignote.graph.errors import InconsistencyError
from arignote.tensor import gemm as blas
from arignote.testing import verify_grad
from tests.utils import assert_matches, check_infer_shape, run

DTYPES = ["float32", "float64", "complex64", "complex128"]


def values(dtype, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for shape in shapes:
        v = rng.standard_normal(shape)
        if dtype.startswith("complex"):
            v = v + 1j * rng.standard_normal(shape)
        out.append(np.asarray(v, dtype=dtype))
    return out


def symbols(dtype, *ranks):
    return [T.tensor(dtype, (False,) * r, name=f"v{k}") for k, r in enumerate(ranks)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (-2.0, 1.0), (0.5, -1.5), (0.0, 2.0)])
def test_gemm_and_gemv_match_numpy(dtype, alpha, beta):
    z, a, x, y, b = symbols(dtype, 2, 0, 2, 2, 0)
    zv, xv, yv = values(dtype, (3, 4), (3, 5), (5, 4))
    av, bv = np.asarray(alpha, dtype), np.asarray(beta, dtype)
    got = run([z, a, x, y, b], blas.gemm_no_inplace(z, a, x, y, b), zv, av, xv, yv, bv)
    assert_matches(got, beta * zv + alpha * xv @ yv, 1e-4)
    u, A, w = symbols(dtype, 1, 2, 1)
    uv, Av, wv = values(dtype, (3,), (3, 5), (5,))
    got = run([u, a, A, w, b], blas.gemv_no_inplace(u, a, A, w, b), uv, av, Av, wv, bv)
    assert_matches(got, beta * uv + alpha * Av @ wv, 1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (0, 4), (3, 0)])
def test_ger_is_a_rank_one_update(dtype, shape):
    A, a, x, y = symbols(dtype, 2, 0, 1, 1)
    Av, xv, yv = values(dtype, shape, shape[:1], shape[1:])
    av = np.asarray(0.5, dtype)
    for op in (blas.ger, blas.ger_destructive):
        mode = None if op is blas.ger else arignote.Mode(optimizer=None)
        f = arignote.function([In(A, mutable=True), a, x, y], op(A, a, x, y), mode=mode,
                              accept_inplace=op.destructive)
        assert_matches(f(Av.copy(), av, xv, yv), Av + 0.5 * np.outer(xv, yv), 1e-4)
    check_infer_shape([A, a, x, y], blas.ger(A, a, x, y), [Av, av, xv, yv])


def test_destructive_ger_writes_into_a_mutable_input():
    A, a, x, y = symbols("float64", 2, 0, 1, 1)
    Av, xv, yv = values("float64", (2, 3), (2,), (3,))
    f = arignote.function([In(A, mutable=True), a, x, y], blas.ger_destructive(A, a, x, y),
                          mode=arignote.Mode(optimizer=None), accept_inplace=True)
    expected = Av + 2 * np.outer(xv, yv)
    out = f(Av, 2.0, xv, yv)
    assert_matches(out, expected)
    assert np.shares_memory(out, Av)
    assert_matches(Av, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dot22_and_dot22scalar_match_numpy(dtype):
    x, y, a = symbols(dtype, 2, 2, 0)
    xv, yv = values(dtype, (3, 5), (5, 2))
    av = np.asarray(-1.5, dtype)
    assert_matches(run([x, y], blas.dot22(x, y), xv, yv), xv @ yv, 1e-4)
    assert_matches(run([x, y, a], blas.dot22scalar(x, y, a), xv, yv, av), -1.5 * (xv @ yv), 1e-4)
    check_infer_shape([x, y, a], [blas.dot22(x, y), blas.dot22scalar(x, y, a)], [xv, yv, av])


def test_dot22_is_a_dot_with_its_gradient():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    assert isinstance(blas.dot22(x, y).owner.op, T.Dot) and blas.dot22 != T.Dot()
    xv, yv = values("float64", (3, 4), (4, 2))
    verify_grad(blas.dot22, [xv, yv])


def test_ops_compare_by_their_form():
    assert blas.Ger(True) == blas.ger_destructive and blas.Ger(False) != blas.ger_destructive
    assert hash(blas.Ger(False)) == hash(blas.ger)
    assert str(blas.ger) == "Ger{non-destructive}" and str(blas.ger_destructive) == "Ger{destructive}"
    assert blas.gemm_no_inplace is blas.gemm and str(blas.gemv_inplace) == "Gemv{inplace}"


@pytest.mark.parametrize("build,kind,names", [
    (lambda m, s, v: blas.gemm_no_inplace(v, s, m, m, s), "E_rank", "Z"),
    (lambda m, s, v: blas.gemm_no_inplace(m, m, m, m, s), "E_scalar", "alpha"),
    (lambda m, s, v: blas.gemm_no_inplace(m, s, m, T.fmatrix("f"), s), "E_mixed", "Y"),
    (lambda m, s, v: blas.gemm_no_inplace(*[T.cast(t, "int32") for t in (m, s, m, m, s)]), "E_float", "Z ("),
    (lambda m, s, v: blas.ger(m, s, T.dmatrix("w"), v), "E_rank", "x"),
    (lambda m, s, v: blas.ger(m, v, v, v), "E_scalar", "alpha"),
    (lambda m, s, v: blas.dot22scalar(m, m, T.fscalar("f")), "E_mixed", "dot22scalar"),
    (lambda m, s, v: blas.dot22(m, v), "E_rank", "y"),
])
def test_bad_inputs_name_the_input_and_theano_kind(build, kind, names):
    m, s, v = T.dmatrix("m"), T.dscalar("s"), T.dvector("v")
    with pytest.raises(TypeError) as info:
        build(m, s, v)
    assert info.value.args[0] is getattr(blas.Gemm, kind)
    assert names in str(info.value)


def test_inplace_gemm_refuses_a_z_that_views_x_or_y():
    z, a = T.dmatrix("z"), T.dscalar("a")
    for x, y in ((z, T.dmatrix("y")), (T.dmatrix("x"), z.T)):
        with pytest.raises(InconsistencyError) as info:
            blas.gemm_inplace(z, a, x, y, a)
        assert info.value.args[0] is blas.Gemm.E_z_uniq and "no_inplace" in str(info.value)
        assert str(info.value).startswith(blas.Gemm.E_z_uniq + ": gemm: Z ('z') shares memory with")
    blas.gemm_no_inplace(z, a, z, z.T, a)  # the out-of-place form may read z as X and Y


def test_bad_shapes_at_run_time_say_which():
    A, a, x, y = symbols("float64", 2, 0, 1, 1)
    f = arignote.function([A, a, x, y], blas.ger(A, a, x, y))
    with pytest.raises(ValueError, match="outer"):
        f(np.ones((2, 3)), 1.0, np.ones(3), np.ones(3))
    u, v, s = symbols("float64", 2, 2, 0)
    g = arignote.function([u, v, s], blas.dot22scalar(u, v, s))
    with pytest.raises(ValueError, match="columns"):
        g(np.ones((2, 3)), np.ones((2, 3)), 1.0)


def test_z_need_not_share_the_broadcast_pattern_of_the_product():
    y, a = T.dvector("y"), T.dscalar("a")
    row = T.TensorType("float64", (True, False))("row")
    x = T.dvector("x")
    out = blas.gemv_no_inplace(y, a, row, x, a)
    assert out.type == y.type
    rv, xv, yv = np.ones((1, 2)), np.arange(2.0), np.asarray([5.0])
    assert_matches(run([y, a, row, x], out, yv, 0.5, rv, xv), 0.5 * yv + 0.5 * rv @ xv)
    f = arignote.function([y, a, row, x], out)
    with pytest.raises(ValueError, match="must have y's shape"):
        f(np.ones(3), 0.5, rv, xv)
