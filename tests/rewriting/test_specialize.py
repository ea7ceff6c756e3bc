"""Specialization: powers, sums of squares, gemm and gemv fire and keep the values."""
import numpy as np
import pytest

from arignote import function, shared, tensor as T
from arignote.tensor.gemm import Gemm, Gemv, SumOfSquares
from tests.rewriting.rewrite_utils import check_same_values, op_names, phase_mode

SPECIAL = phase_mode("canonicalize", "specialize")
rng = np.random.default_rng(0)


@pytest.mark.parametrize("exponent, expected", [
    (2, ["sqr"]), (0.5, ["sqrt"]), (-1, ["inv"]), (3, ["sqr", "mul"]), (4, ["sqr", "sqr"]),
    (-2, ["sqr", "inv"]), (-0.5, ["sqrt", "inv"]), (1, ["DeepCopyOp"]), (2.5, ["pow"]),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_powers_by_small_constants(exponent, expected, dtype):
    x = T.vector("x", dtype=dtype)
    f = check_same_values([x], x ** exponent, SPECIAL, [rng.uniform(0.5, 2, 7).astype(dtype)],
                          rtol=1e-6 if dtype == "float32" else 1e-14)
    assert op_names(f) == expected


def test_integer_powers_of_integers_keep_integers():
    i = T.ivector("i")
    f = check_same_values([i], i ** 2 + i ** 3, SPECIAL, [np.arange(-3, 4, dtype="int32")])
    assert "pow" not in op_names(f)
    assert f(np.arange(3, dtype="int32")).dtype == np.int32


def test_float_power_of_an_integer_is_computed_in_the_float_dtype():
    b = T.bvector("b")
    f = check_same_values([b], b ** 0.5, SPECIAL, [np.arange(5, dtype="int8")], rtol=1e-6)
    assert op_names(f) == ["convert_to_float32", "sqrt"]


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
def test_sum_of_squares_is_one_pass(axis):
    x = T.dtensor3("x")
    f = check_same_values([x], T.sum(x ** 2, axis=axis), SPECIAL, [rng.standard_normal((3, 4, 5))],
                          rtol=1e-12)
    assert op_names(f) == ["SumOfSquares"]


def test_sum_of_squares_keeps_the_square_when_it_is_used_elsewhere():
    x = T.dvector("x")
    sq = x ** 2
    f = check_same_values([x], [T.sum(sq), sq], SPECIAL, [rng.standard_normal(4)])
    assert "SumOfSquares" not in op_names(f)


def _matrices(*shapes):
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("build", [
    lambda z, x, y, s: z + T.dot(x, y),
    lambda z, x, y, s: T.dot(x, y) + z,
    lambda z, x, y, s: z - T.dot(x, y),
    lambda z, x, y, s: z + 2.5 * T.dot(x, y),
    lambda z, x, y, s: z + T.dot(x, y) * s,
], ids=["z+dot", "dot+z", "z-dot", "z+2.5*dot", "z+dot*s"])
def test_dot_plus_matrix_becomes_gemm(build):
    z, x, y = T.dmatrix("z"), T.dmatrix("x"), T.dmatrix("y")
    s = T.dscalar("s")
    f = check_same_values([z, x, y, s], build(z, x, y, s), SPECIAL,
                          _matrices((3, 5), (3, 4), (4, 5)) + [np.asarray(0.7)], rtol=1e-12)
    assert op_names(f) == ["Gemm"]


def test_gemm_is_not_used_when_it_would_change_broadcasting_or_repeat_the_dot():
    z, x, y = T.dmatrix("z"), T.dmatrix("x"), T.dmatrix("y")
    b = T.dvector("b")
    d = T.dot(x, y)
    f = check_same_values([x, y, b], d + b, SPECIAL, _matrices((3, 4), (4, 5)) + [np.ones(5)])
    assert "Gemm" not in op_names(f)
    f = check_same_values([z, x, y], [z + d, d], SPECIAL, _matrices((3, 5), (3, 4), (4, 5)))
    assert "Gemm" not in op_names(f)


def test_gemm_in_place_only_overwrites_an_intermediate():
    z, x, y = T.dmatrix("z"), T.dmatrix("x"), T.dmatrix("y")
    values = _matrices((3, 5), (3, 4), (4, 5))
    f = check_same_values([z, x, y], T.exp(z) + T.dot(x, y), "FAST_RUN", values, rtol=1e-12)
    gemms = [n.op for n in f.maker.fgraph.toposort() if isinstance(n.op, Gemm)]
    assert gemms == [Gemm(inplace=True)]
    f = check_same_values([z, x, y], z + T.dot(x, y), "FAST_RUN", values, rtol=1e-12)
    assert [n.op for n in f.maker.fgraph.toposort()] == [Gemm(inplace=False)]
    before = [v.copy() for v in values]
    f(*values)
    for a, b in zip(values, before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gemm_perform_on_contiguous_strided_and_empty_matrices(inplace, dtype):
    node_inputs = [T.matrix(dtype=dtype), T.scalar(dtype=dtype), T.matrix(dtype=dtype),
                   T.matrix(dtype=dtype), T.scalar(dtype=dtype)]
    node = Gemm(inplace).make_node(*node_inputs)
    for zs, xs, ys in (((3, 5), (3, 4), (4, 5)), ((0, 2), (0, 3), (3, 2)), ((2, 3), (2, 0), (0, 3))):
        for strided in (False, True):
            z = rng.standard_normal((zs[0], zs[1] * 2)).astype(dtype)
            z = z[:, ::2] if strided else np.ascontiguousarray(z[:, :zs[1]])
            x, y = (rng.standard_normal(s).astype(dtype) for s in (xs, ys))
            alpha, beta = np.asarray(1.5, dtype), np.asarray(-0.5, dtype)
            expected = beta * z + alpha * (x @ y)
            original = z.copy()
            cell = [None]
            Gemm(inplace).perform(node, [z, alpha, x, y, beta], [cell])
            np.testing.assert_allclose(cell[0], expected, rtol=1e-5, atol=1e-5)
            assert cell[0].dtype == dtype
            if inplace and z.size:
                assert np.shares_memory(cell[0], z)
            else:
                np.testing.assert_array_equal(z, original)


def test_sum_of_squares_perform_matches_numpy():
    for shape, axis in (((0,), (0,)), ((3, 4), (0, 1)), ((3, 4), (1,)), ((2, 3, 4), (0, 2))):
        x = rng.standard_normal(shape)
        node = SumOfSquares(axis).make_node(T.tensor("float64", (False,) * len(shape)))
        cell = [None]
        SumOfSquares(axis).perform(node, [x], [cell])
        np.testing.assert_allclose(cell[0], np.sum(x * x, axis=axis))
        assert cell[0].dtype == np.float64


def test_the_sgd_step_with_an_l2_term_is_one_gemm_on_the_weights():
    w, x, d = T.dmatrix("w"), T.dmatrix("x"), T.dmatrix("d")
    lr, c = 0.1, 0.02
    step = w - lr * (c * w + T.dot(x, d))
    values = _matrices((4, 3), (5, 4), (5, 3))
    f = check_same_values([w, x, d], step, SPECIAL, [values[0], values[1].T, values[2]], rtol=1e-12)
    (node,) = f.maker.fgraph.toposort()
    assert isinstance(node.op, Gemm) and node.inputs[0].name == "w"
    alpha, beta = (float(v.data) for v in (node.inputs[1], node.inputs[4]))
    assert (alpha, beta) == pytest.approx((-lr, 1 - lr * c), rel=1e-15)


@pytest.mark.parametrize("build", [
    lambda y, a, v, s: y + T.dot(a, v),
    lambda y, a, v, s: y - s * T.dot(a, v),
    lambda y, a, v, s: T.dot(v, a.T) * 0.5 + 2 * y,
    lambda y, a, v, s: y - s * (0.1 * y + T.dot(a, v)),
], ids=["y+Av", "y-s*Av", "vA'*0.5+2y", "y-s*(0.1y+Av)"])
def test_a_matrix_vector_product_in_a_sum_becomes_gemv(build):
    y, a, v, s = T.dvector("y"), T.dmatrix("a"), T.dvector("v"), T.dscalar("s")
    values = [rng.standard_normal(3), rng.standard_normal((3, 4)), rng.standard_normal(4), np.asarray(0.7)]
    f = check_same_values([y, a, v, s], build(y, a, v, s), SPECIAL, values, rtol=1e-12)
    assert "Gemv" in op_names(f) and "Dot" not in op_names(f)


def test_the_logistic_regression_step_uses_gemv_in_place_as_theanos_tutorial_checks():
    x, t = T.dmatrix("x"), T.dvector("t")
    w, b = shared(rng.standard_normal(5), name="w"), shared(0.0, name="b")
    p = 1 / (1 + T.exp(-T.dot(x, w) - b))
    cost = (-t * T.log(p) - (1 - t) * T.log(1 - p)).mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    train = function([x, t], cost, updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])
    assert any(type(n.op).__name__ == "Gemv" for n in train.maker.fgraph.toposort())
    xv, tv, wv = rng.standard_normal((8, 5)), (rng.random(8) > 0.5).astype(float), w.get_value()
    train(xv, tv)
    pv = 1 / (1 + np.exp(-xv @ wv))
    np.testing.assert_allclose(w.get_value(), wv - 0.1 * (xv.T @ (pv - tv) / 8 + 0.02 * wv), rtol=1e-12)


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gemv_perform_on_contiguous_strided_and_empty_operands(inplace, dtype):
    node = Gemv(inplace).make_node(T.vector(dtype=dtype), T.scalar(dtype=dtype), T.matrix(dtype=dtype),
                                   T.vector(dtype=dtype), T.scalar(dtype=dtype))
    for m, n in ((3, 4), (0, 2), (2, 0)):
        for strided in (False, True):
            y = rng.standard_normal(2 * m).astype(dtype)
            y = y[::2] if strided else np.ascontiguousarray(y[:m])
            a = rng.standard_normal((n, m)).astype(dtype).T if strided else rng.standard_normal((m, n)).astype(dtype)
            x = rng.standard_normal(n).astype(dtype)
            for beta in (-0.5, 0.0):
                alpha = np.asarray(1.5, dtype)
                y_in = y.copy()
                if beta == 0:
                    y_in[:] = np.nan  # BLAS's rule: beta 0 ignores y
                expected = alpha * (a @ x) + (beta * y_in if beta else 0)
                cell = [None]
                Gemv(inplace).perform(node, [y_in, alpha, a, x, np.asarray(beta, dtype)], [cell])
                np.testing.assert_allclose(cell[0], expected, rtol=1e-5, atol=1e-5)
                assert cell[0].dtype == dtype
                assert np.shares_memory(cell[0], y_in) == (inplace and m > 0)
    with pytest.raises(ValueError, match="dot\\(A, x\\) must have y's shape"):
        Gemv().perform(node, [np.ones(2, dtype), 1, np.ones((3, 2), dtype), np.ones(2, dtype), 1], [[None]])
    with pytest.raises(TypeError, match="A .* must be 2-d"):
        Gemv().make_node(T.dvector(), T.dscalar(), T.dvector(), T.dvector(), T.dscalar())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("w_shape, g_shape", [((4, 3), (5, 3)), ((0, 3), (5, 3)), ((4, 3), (0, 3)),
                                              ((4, 0), (5, 0)), ((1, 1), (1, 1))])
@pytest.mark.parametrize("w_first", [True, False])
def test_a_sum_of_squared_outer_products_is_a_dot(dtype, w_shape, g_shape, w_first):
    W, G = T.matrix("W", dtype=dtype), T.matrix("G", dtype=dtype)
    w3, g3 = W.dimshuffle("x", 0, 1), G.dimshuffle(0, "x", 1)
    y = T.sqr(w3 * g3 if w_first else g3 * w3).sum(axis=(1, 2))
    w, g = rng.standard_normal(w_shape).astype(dtype), rng.standard_normal(g_shape).astype(dtype)
    f = check_same_values([W, G], y, SPECIAL, [w, g], rtol=1e-5 if dtype == "float32" else 1e-12,
                          atol=1e-5 if dtype == "float32" else 1e-12)
    assert "Dot" in op_names(f) and not any(n.outputs[0].ndim == 3 for n in f.maker.fgraph.toposort())
    np.testing.assert_allclose(f(w, g), np.dot(g ** 2, (w ** 2).sum(0)), rtol=1e-4, atol=1e-5)


def test_a_sum_of_squared_products_over_other_axes_is_left_alone():
    W, G = T.dmatrix("W"), T.dmatrix("G")
    y = T.sqr(W.dimshuffle("x", 0, 1) * G.dimshuffle(0, "x", 1)).sum(axis=(0, 2))
    w, g = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    f = check_same_values([W, G], y, SPECIAL, [w, g], rtol=1e-12)
    assert "Dot" not in op_names(f)
