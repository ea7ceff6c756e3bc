"""``sandbox.linalg``: hints, the inverse/solve/Cholesky rewrites and ``spectral_radius_bound``."""
import numpy as np
import pytest
import scipy.linalg

from arignote import function, grad, tensor as T
from arignote.compat.theano import sandbox_linalg as theano_ops
from arignote.sandbox import linalg
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.nlinalg import Det, MatrixInverse, det, matrix_inverse
from arignote.tensor.slinalg import Cholesky, Solve, cholesky, solve

rng = np.random.default_rng(42)


def spd(n, dtype="float64"):
    a = rng.normal(size=(n, n))
    return (a @ a.T + n * np.eye(n)).astype(dtype)


def nodes(f, op_class):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, op_class)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_spectral_radius_bound_is_the_trace_of_the_power(dtype, k):
    x = T.matrix(dtype=dtype)
    f = function([x], linalg.spectral_radius_bound(x, k))
    m = np.cov(rng.uniform(size=(4, 6))).astype(dtype)
    power = np.linalg.matrix_power(m.astype(np.float64), 2 ** k)
    want = np.trace(power) ** (2.0 ** -k)
    got = f(m)
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == "float32" else 1e-10)
    assert got >= np.linalg.eigvalsh(m.astype(np.float64)).max() * (1 - 1e-5)


def test_spectral_radius_bound_errors():
    with pytest.raises(TypeError, match="must be a matrix"):
        linalg.spectral_radius_bound(T.vector("v"), 5)
    with pytest.raises(TypeError, match="must be an int"):
        linalg.spectral_radius_bound(T.matrix(), 5.0)
    with pytest.raises(ValueError, match="positive"):
        linalg.spectral_radius_bound(T.matrix(), -5)


def test_psd_hint_is_the_identity_with_its_gradient_and_leaves_the_compiled_graph():
    a = T.dmatrix("a")
    hinted = linalg.psd(a)
    assert linalg.is_psd(hinted) and linalg.is_symmetric(hinted) and not linalg.is_psd(a)
    f = function([a], [hinted * 2, grad((hinted ** 2).sum(), a)])
    value = spd(3)
    doubled, g = f(value)
    np.testing.assert_allclose(doubled, 2 * value)
    np.testing.assert_allclose(g, 2 * value)
    assert not nodes(f, linalg.Hint)


def test_solve_of_a_psd_matrix_goes_through_cholesky():
    a, b = T.dmatrix("a"), T.dmatrix("b")
    f = function([a, b], solve(linalg.psd(a), b))
    structures = sorted(n.op.A_structure for n in nodes(f, Solve))
    assert structures == ["lower_triangular", "upper_triangular"] and nodes(f, Cholesky)
    value, rhs = spd(4), rng.normal(size=(4, 2))
    np.testing.assert_allclose(f(value, rhs), np.linalg.solve(value, rhs), rtol=1e-10)


def test_transpose_of_an_inverse_becomes_the_inverse_of_the_transpose():
    x = T.dmatrix("X")
    f = function([x], matrix_inverse(x).T)
    (inverse,) = nodes(f, MatrixInverse)
    assert isinstance(inverse.inputs[0].owner.op, DimShuffle)
    value = spd(3) + np.triu(np.ones((3, 3)))
    np.testing.assert_allclose(f(value), np.linalg.inv(value).T, rtol=1e-10)


@pytest.mark.parametrize("side", ["left", "right", "right_symmetric"])
def test_a_product_with_an_inverse_becomes_a_solve(side):
    a, b = T.dmatrix("a"), T.dmatrix("b")
    hinted = linalg.psd(a) if side == "right_symmetric" else a
    out = T.dot(matrix_inverse(hinted), b) if side == "left" else T.dot(b, matrix_inverse(hinted))
    f = function([a, b], out)
    assert not nodes(f, MatrixInverse) and nodes(f, Solve)
    value = spd(3) if side == "right_symmetric" else spd(3) + np.triu(np.ones((3, 3)))
    rhs = rng.normal(size=(3, 3))
    inv = np.linalg.inv(value)
    np.testing.assert_allclose(f(value, rhs), inv @ rhs if side == "left" else rhs @ inv, rtol=1e-9)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transposed", [False, True])
def test_solve_with_a_cholesky_factor_is_triangular(lower, transposed):
    a, x = T.dmatrix("A"), T.dvector("x")
    factor = Cholesky(lower=lower)(a)
    f = function([a, x], solve(factor.T if transposed else factor, x))
    (node,) = nodes(f, Solve)
    want_lower = lower != transposed
    assert node.op.A_structure == ("lower_triangular" if want_lower else "upper_triangular")
    value, rhs = spd(4), rng.normal(size=4)
    L = scipy.linalg.cholesky(value, lower=lower)
    np.testing.assert_allclose(f(value, rhs), np.linalg.solve(L.T if transposed else L, rhs), rtol=1e-10)


def test_transpose_of_a_symmetric_hint_is_dropped():
    a = T.dmatrix("a")
    f = function([a], linalg.psd(a).T + 1)
    assert not nodes(f, DimShuffle) or all(n.op.new_order != (1, 0) for n in nodes(f, DimShuffle))
    value = spd(3)
    np.testing.assert_allclose(f(value), value + 1)


def test_det_reuses_a_cholesky_factor_of_the_graph():
    a = T.dmatrix("a")
    f = function([a], [det(a), cholesky(a)])
    assert not nodes(f, Det)
    value = spd(4)
    np.testing.assert_allclose(f(value)[0], np.linalg.det(value), rtol=1e-10)


def test_log_of_a_product_of_squares_is_a_sum_of_logs():
    x = T.dvector("x")
    f = function([x], T.log(T.prod(x ** 2)))
    value = np.full(400, 10.0)  # the product overflows float64; the sum of logs does not
    np.testing.assert_allclose(f(value), 400 * np.log(100.0))


def test_theano_local_optimizers_transform_one_node():
    a, b = T.dmatrix("A"), T.dmatrix("b")
    node = T.dot(matrix_inverse(a), b).owner
    (out,) = theano_ops.inv_as_solve.transform(node)
    assert isinstance(out.owner.op, Solve)
    assert theano_ops.inv_as_solve.transform(T.dot(a, b).owner) is None
    assert theano_ops.local_det_chol.transform(det(a).owner) is None  # it needs the graph
