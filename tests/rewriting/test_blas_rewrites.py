"""The BLAS forms the rewrites build from dot, outer and scaled sums (Dot22, Gemv, Ger,
Dot22Scalar, Gemm of transposes and of repeated products): same values as numpy over shapes,
dtypes, strided and transposed inputs and empty arrays; in place only where nothing else
reads the overwritten buffer."""
import numpy as np
import pytest

from arignote import In, function, shared
from arignote import tensor as T
from arignote.compile.mode import Mode
from arignote.graph.rewriting.basic import in_to_out
from arignote.graph.traversal import ancestors
from arignote.tensor.blas import Dot
from arignote.tensor.gemm import (Dot22, Dot22Scalar, Gemm, Gemv, Ger, dot22, gemm_no_inplace,
                                  ger_destructive)
from arignote.tensor.rewrites.blas import local_dot22_to_dot22scalar, local_gemm_to_ger

from tests.rewriting.rewrite_utils import NO_REWRITES, check_same_values

DTYPES = ["float32", "float64", "complex64", "complex128"]
RTOL = {"float32": 1e-5, "complex64": 1e-5, "float64": 1e-10, "complex128": 1e-10}


def _ops(f):
    return [n.op for n in f.maker.fgraph.toposort()]


def _count(f, cls, **attrs):
    return sum(isinstance(op, cls) and all(getattr(op, k) == v for k, v in attrs.items()) for op in _ops(f))


def _rand(rng, shape, dtype):
    value = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        value = value + 1j * rng.standard_normal(shape)
    return value.astype(dtype)


def _strided(value, how):
    """``value``'s numbers in a non-contiguous or transposed layout."""
    if how == "reversed":
        return np.ascontiguousarray(value[::-1, ::-1])[::-1, ::-1]
    if how == "transposed":
        return np.ascontiguousarray(value.T).T
    if how == "every_other":
        padded = np.zeros((value.shape[0], 2 * value.shape[1]), value.dtype)
        padded[:, ::2] = value
        return padded[:, ::2]
    return value


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (0, 4), (3, 0), (1, 1)])
@pytest.mark.parametrize("layout", ["contiguous", "reversed", "transposed", "every_other"])
def test_matrix_vector_products_are_gemv_into_a_fresh_vector(dtype, shape, layout):
    rng = np.random.default_rng(0)
    A, x, y = T.matrix("A", dtype=dtype), T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    a = _strided(_rand(rng, shape, dtype), layout)
    u, v = _rand(rng, shape[1], dtype), _rand(rng, shape[0], dtype)
    for inputs, out, values in (([A, x], T.dot(A, x), [a, u]), ([y, A], T.dot(y, A), [v, a])):
        f = check_same_values(inputs, out, None, values, rtol=RTOL[dtype], atol=1e-6)
        assert _count(f, Gemv, inplace=True) == 1 and _count(f, Dot) == 0
        np.testing.assert_allclose(f(*values), np.dot(*values), rtol=RTOL[dtype], atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 5])
def test_a_vector_dot_is_gemv_and_a_scalar(dtype, n):
    rng = np.random.default_rng(1)
    x, y = T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    u, v = _rand(rng, n, dtype), _rand(rng, n, dtype)
    f = check_same_values([x, y], T.dot(x, y), None, [u, v], rtol=RTOL[dtype], atol=1e-6)
    assert _count(f, Gemv) == 1 and f(u, v).shape == ()


def test_a_returned_gemv_result_is_not_overwritten_by_the_next_call():
    A, x = T.dmatrix("A"), T.dvector("x")
    f = function([A, x], T.dot(A, x))
    first = f(np.ones((3, 2)), np.ones(2))
    f(np.full((3, 2), 2.0), np.ones(2))
    np.testing.assert_array_equal(first, [2.0, 2.0, 2.0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_products_are_dot22_and_mixed_dtypes_stay_dot(dtype):
    rng = np.random.default_rng(2)
    X, Y = T.matrix("X", dtype=dtype), T.matrix("Y", dtype=dtype)
    for shapes in (((3, 4), (4, 5)), ((0, 4), (4, 5)), ((3, 0), (0, 5)), ((0, 0), (0, 0))):
        values = [_rand(rng, s, dtype) for s in shapes]
        f = check_same_values([X, Y], T.dot(X, Y), None, values, rtol=RTOL[dtype], atol=1e-6)
        assert [type(op) for op in _ops(f)] == [Dot22]
    other = T.matrix("W", dtype="float64" if dtype != "float64" else "float32")
    assert Dot22 not in [type(op) for op in _ops(function([X, other], T.dot(X, other)))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 4), (0, 3), (3, 0), (1, 1)])
def test_outer_products_are_ger(dtype, shape):
    rng = np.random.default_rng(3)
    A = T.matrix("A", dtype=dtype)
    x, y = T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    a, u, v = _rand(rng, shape, dtype), _rand(rng, shape[0], dtype), _rand(rng, shape[1], dtype)
    alone = check_same_values([x, y], T.outer(x, y), None, [u, v], rtol=RTOL[dtype])
    assert _count(alone, Ger, destructive=True) == 1 and _count(alone, Dot) == 0
    scale = np.asarray(0.5, dtype)
    for layout in ("contiguous", "reversed"):
        values = [_strided(a, layout), u, v]
        f = check_same_values([A, x, y], A + scale * T.outer(x, y), None, values, rtol=RTOL[dtype])
        assert _count(f, Ger, destructive=False) == 1 and _count(f, Gemm) == 0
        np.testing.assert_allclose(f(*values), a + scale * np.outer(u, v), rtol=RTOL[dtype])


def test_ger_overwrites_only_a_mutable_input():
    A, x, y = T.dmatrix("A"), T.dvector("x"), T.dvector("y")
    out = A + 0.1 * T.outer(x, y)
    a, u, v = np.ones((2, 3)), np.arange(2.0), np.arange(3.0)
    kept = function([A, x, y], out)
    assert _count(kept, Ger, destructive=False) == 1
    kept(a, u, v)
    np.testing.assert_array_equal(a, np.ones((2, 3)))
    mutable = function([In(A, mutable=True), x, y], out)
    assert ger_destructive in _ops(mutable)
    np.testing.assert_allclose(mutable(a, u, v), np.ones((2, 3)) + 0.1 * np.outer(u, v))


def test_a_scaled_a_plus_outer_stays_gemm():
    A, x, y = T.dmatrix("A"), T.dvector("x"), T.dvector("y")
    f = function([A, x, y], 0.2 * A + 0.1 * T.outer(x, y))
    assert _count(f, Gemm) == 1 and _count(f, Ger) == 0


def test_gemm_to_ger_takes_beta_zero_or_one_only():
    A, a = T.dmatrix("A"), T.dscalar("a")
    x, y = T.dvector("x"), T.dvector("y")
    for beta, expected in ((np.float64(0), True), (np.float64(1), True), (np.float64(1.5), False), (a, False)):
        node = gemm_no_inplace(A, a, x.dimshuffle(0, "x"), y.dimshuffle("x", 0), beta).owner
        assert bool(local_gemm_to_ger.transform(None, node)) is expected
    g = in_to_out(local_gemm_to_ger)
    out = gemm_no_inplace(A, a, x.dimshuffle(0, "x"), y.dimshuffle("x", 0), np.float64(0))
    f = function([A, a, x, y], out, mode=Mode(optimizer=g))
    u, v = np.arange(3.0), np.arange(2.0)
    np.testing.assert_allclose(f(np.full((3, 2), np.nan), 2.0, u, v), 2 * np.outer(u, v))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_a_scaled_matrix_product_is_dot22scalar(dtype):
    rng = np.random.default_rng(4)
    X, Y = T.matrix("X", dtype=dtype), T.matrix("Y", dtype=dtype)
    c = T.scalar("c", dtype=dtype)
    values = [_rand(rng, (3, 4), dtype), _rand(rng, (4, 2), dtype), np.asarray(0.3, dtype)]
    f = check_same_values([X, Y, c], T.dot(X, Y) * c, None, values, rtol=RTOL[dtype])
    assert [type(op) for op in _ops(f)] == [Dot22Scalar]


@pytest.mark.parametrize("scalar_dtype, formed", [("int8", True), ("int16", True), ("int32", False),
                                                  ("int64", False)])
def test_dot22scalar_takes_a_scale_only_where_it_keeps_the_dtype(scalar_dtype, formed):
    A = T.fmatrix("A")
    k = T.scalar("k", dtype=scalar_dtype)
    a = np.arange(4, dtype="float32").reshape(2, 2)
    f = check_same_values([A, k], T.dot(A, A) * k, None, [a, np.asarray(3, scalar_dtype)], rtol=1e-6)
    assert (Dot22Scalar in [type(op) for op in _ops(f)]) is formed


def test_dot22scalar_finds_the_scalar_in_the_product_tree():
    A, m = T.dmatrix("A"), T.dmatrix("m")
    r, x, y = T.drow("r"), T.dscalar("x"), T.dscalar("y")
    for out in (T.mul(dot22(A, A), m * y, m), T.mul(dot22(A, A), r * m, m * x), dot22(A, A) * x * y):
        new = local_dot22_to_dot22scalar.transform(None, out.owner)
        assert new and any(v.owner is not None and isinstance(v.owner.op, Dot22Scalar) for v in ancestors(new))
        values = [np.arange(4.0).reshape(2, 2) + 1, np.full((2, 2), 2.0), np.array([[5.0, 6.0]]), 0.1, 0.2]
        inputs = [A, m, r, x, y]
        f = function(inputs, new[0], mode=NO_REWRITES, on_unused_input="ignore")
        g = function(inputs, out, mode=NO_REWRITES, on_unused_input="ignore")
        np.testing.assert_allclose(f(*values), g(*values))


def _gemm_case(build, shapes):
    rng = np.random.default_rng(5)
    X, Y, Z, R, S = (T.dmatrix(n) for n in "XYZRS")
    a, b, c = T.dscalar("a"), T.dscalar("b"), T.dscalar("c")
    inputs = [X, Y, Z, R, S, a, b, c]
    values = [rng.standard_normal(s) for s in shapes] + [0.7, -1.3, 2.1]
    return inputs, build(X, Y, Z, R, S, a, b, c), values


@pytest.mark.parametrize("build, shapes, n_gemm", [
    (lambda X, Y, Z, R, S, a, b, c: b * Z.T - a * T.dot(Y.T, X.T),
     [(4, 3), (3, 5), (4, 5), (1, 1), (1, 1)], 1),
    (lambda X, Y, Z, R, S, a, b, c: b * Z.T + a * b * T.dot(X, Y).T,
     [(4, 3), (3, 5), (4, 5), (1, 1), (1, 1)], 1),
    (lambda X, Y, Z, R, S, a, b, c: Z * c + a * T.dot(X, Y) + b * T.dot(R, S).T,
     [(4, 3), (3, 5), (4, 5), (5, 9), (9, 4)], 2),
    (lambda X, Y, Z, R, S, a, b, c: (b * b) * Z * a + (a * a) * T.dot(X, Y) + b * T.dot(X, Y),
     [(4, 3), (3, 5), (4, 5), (1, 1), (1, 1)], 1),
    (lambda X, Y, Z, R, S, a, b, c: Z + T.dot(X, Y) + T.dot(X, Y),
     [(4, 3), (3, 5), (4, 5), (1, 1), (1, 1)], 1),
    (lambda X, Y, Z, R, S, a, b, c: Z + T.dot(X, Y) + T.dot(X, Y),
     [(0, 3), (3, 5), (0, 5), (1, 1), (1, 1)], 1),
])
def test_sums_with_transposed_or_repeated_products_are_gemm_in_place(build, shapes, n_gemm):
    inputs, out, values = _gemm_case(build, shapes)
    f = function([In(v, mutable=True) for v in inputs], out, on_unused_input="ignore")
    g = function(inputs, out, mode=NO_REWRITES, on_unused_input="ignore")
    expected = g(*values)
    assert _count(f, Gemm, inplace=True) == n_gemm and _count(f, Dot) == 0
    np.testing.assert_allclose(f(*[np.array(v) for v in values]), expected, rtol=1e-10, atol=1e-12)


def test_a_product_used_outside_the_sum_is_not_folded_into_gemm():
    X, Y, Z = T.dmatrix("X"), T.dmatrix("Y"), T.dmatrix("Z")
    d = T.dot(X, Y)
    f = function([X, Y, Z], [Z + d + d, d * 2])
    values = [np.ones((2, 3)), np.ones((3, 2)), np.ones((2, 2))]
    assert _count(f, Gemm) == 0
    first, second = f(*values)
    np.testing.assert_allclose(first, 7.0)
    np.testing.assert_allclose(second, 6.0)


def test_a_z_read_elsewhere_is_not_overwritten():
    Z, R, S, b = T.dmatrix("Z"), T.dmatrix("R"), T.dmatrix("S"), T.dscalar("b")
    f = function([In(Z, mutable=True), R, S, b], Z * (Z + b * T.dot(R, S).T))
    assert _count(f, Gemm, inplace=False) == 1 and _count(f, Gemm, inplace=True) == 0
    z, r, s = np.full((2, 2), 2.0), np.eye(2), np.arange(4.0).reshape(2, 2)
    np.testing.assert_allclose(f(z.copy(), r, s, 0.5), z * (z + 0.5 * (r @ s).T))


def test_a_shared_update_of_a_dot_keeps_the_shared_value_right():
    rng = np.random.default_rng(6)
    m = shared(rng.standard_normal((3, 2)))
    v = shared(rng.standard_normal(2))
    y = shared(np.zeros(3))
    step = function([], [], updates=[(y, y + T.dot(m, v))])
    step()
    step()
    np.testing.assert_allclose(y.get_value(), 2 * m.get_value() @ v.get_value())



def test_equal_shape_nodes_the_blas_rewrites_build_are_merged():
    x = T.vector("x")
    o = T.outer(x, x)
    mode = Mode(optimizer="fast_run").excluding("local_elemwise_fusion", "inplace_elemwise_optimizer")
    f = function([x], T.log(o) * o, mode=mode)
    names = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    assert names.count("Shape_i") == 1 and "Ger" in names and len(names) == 5
