"""Lop, Rop, jacobian and hessian against finite-difference Jacobians and numpy."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, shared, tensor as T
from arignote.gradient import (DisconnectedInputError, Lop, Rop, grad, grad_undefined, hessian,
                               jacobian)
from arignote.graph.basic import Apply, Op
from arignote.graph.traversal import io_toposort
from arignote.graph.types import DisconnectedType
from arignote.tensor.grad.jacobian import JacobianOp


def numeric_jacobian(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d f(x) / dx by central differences, of shape f(x).shape + x.shape."""
    out_shape = np.shape(f(x))
    jac = np.zeros(out_shape + x.shape)
    flat = x.reshape(-1)
    for k in range(flat.size):
        plus, minus = flat.copy(), flat.copy()
        plus[k] += eps
        minus[k] -= eps
        column = (f(plus.reshape(x.shape)) - f(minus.reshape(x.shape))) / (2 * eps)
        jac.reshape(out_shape + (-1,))[..., k] = column
    return jac


def _model(x, W):
    return T.tanh(T.dot(W, x)) * T.exp(x[:2])


@pytest.fixture
def point(rng):
    return rng.uniform(-1, 1, 3), rng.uniform(-1, 1, (2, 3))


def test_lop_matches_vector_times_jacobian(point, rng):
    x, W, v = T.dvector("x"), T.dmatrix("W"), T.dvector("v")
    xv, Wv = point
    vv = rng.uniform(-1, 1, 2)
    gx, gW = Lop(_model(x, W), [x, W], v)
    f_out = function([x, W], _model(x, W))
    lop = function([x, W, v], [gx, gW])(xv, Wv, vv)
    jx = numeric_jacobian(lambda a: f_out(a, Wv), xv)
    jW = numeric_jacobian(lambda a: f_out(xv, a), Wv)
    np.testing.assert_allclose(lop[0], np.tensordot(vv, jx, 1), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(lop[1], np.tensordot(vv, jW, 1), rtol=1e-6, atol=1e-8)


def test_lop_single_wrt_and_errors():
    x, v = T.dvector("x"), T.dvector("v")
    g = Lop(x ** 2, x, v)
    np.testing.assert_allclose(function([x, v], g)(np.array([1.0, 2.0]), np.array([3.0, 4.0])), [6.0, 16.0])
    with pytest.raises(ValueError, match="2 expressions but 1 eval_points"):
        Lop([x, x], x, [v])


def test_rop_matches_jacobian_times_vector(point, rng):
    x, W = T.dvector("x"), T.dmatrix("W")
    ex, eW = T.dvector("ex"), T.dmatrix("eW")
    xv, Wv = point
    exv, eWv = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, (2, 3))
    y = _model(x, W)
    r = Rop(y, [x, W], [ex, eW])
    rop = function([x, W, ex, eW], r)(xv, Wv, exv, eWv)
    f_out = function([x, W], y)
    jx = numeric_jacobian(lambda a: f_out(a, Wv), xv)
    jW = numeric_jacobian(lambda a: f_out(xv, a), Wv)
    expected = jx @ exv + np.tensordot(jW, eWv, 2)
    np.testing.assert_allclose(rop, expected, rtol=1e-6, atol=1e-8)


def test_rop_of_several_outputs(rng):
    x, e = T.dmatrix("x"), T.dmatrix("e")
    outs = Rop([T.nnet.softmax(x), (x ** 3).sum(axis=0)], x, e)
    xv, ev = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))
    got = function([x, e], outs)(xv, ev)
    for k, build in enumerate([T.nnet.softmax(x), (x ** 3).sum(axis=0)]):
        f = function([x], build)
        np.testing.assert_allclose(got[k], np.tensordot(numeric_jacobian(f, xv), ev, 2),
                                   rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="1 wrt variables but 2 eval_points"):
        Rop(x, x, [e, e])


class _Cube(Op):
    """x**3 with an R_op and no gradient: Rop must use the op's own rule."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] ** 3

    def R_op(self, inputs, eval_points):
        return [3 * inputs[0] ** 2 * eval_points[0]]


class _Undefined(Op):
    """The identity with an undefined gradient."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0].copy()

    def grad(self, inputs, grads):
        return [grad_undefined(self, 0, inputs[0])]


class _BreakRop(_Undefined):
    """The same with an R_op that has no product (Theano's test op BreakRop)."""

    def R_op(self, inputs, eval_points):
        return [None]


@pytest.mark.parametrize("op", [_Undefined(), _BreakRop()], ids=["transposed", "forward"])
def test_rop_through_a_non_differentiable_op_is_disconnected(op):
    x, e = T.dvector("x"), T.dvector("e")
    with pytest.raises(DisconnectedInputError, match="differentiable") as err:
        Rop(T.tanh(op(x)), x, e)
    assert isinstance(err.value, ValueError)  # Theano's DisconnectedInputError is one
    # Another output stays computed when disconnected ones are ignored.
    r_tanh, r_sq = Rop([T.tanh(op(x)), x ** 2], x, e, disconnected_outputs="ignore")
    got = function([x, e], [r_tanh, r_sq])(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    np.testing.assert_allclose(got[0], [0.0, 0.0])
    np.testing.assert_allclose(got[1], [6.0, 16.0])


def test_rop_of_disconnected_and_integer_outputs():
    x, y, e = T.dvector("x"), T.dvector("y"), T.dvector("e")
    for out in (y * 2, x.shape[0], T.argmax(x)):
        with pytest.raises(DisconnectedInputError):
            Rop(out, x, e)
    with pytest.warns(UserWarning, match="does not depend on wrt"):
        zero = Rop(y * 2, x, e, disconnected_outputs="warn")
    np.testing.assert_allclose(function([y], zero)(np.ones(3)), np.zeros(3))
    assert Rop(y * 2, x, e, disconnected_outputs="ignore", return_disconnected="None") is None
    cut = Rop(y * 2, x, e, disconnected_outputs="ignore", return_disconnected="Disconnected")
    assert isinstance(cut.type, DisconnectedType)
    with pytest.raises(ValueError, match="disconnected_outputs"):
        Rop(x, x, e, disconnected_outputs="drop")


def test_rop_through_shape_only_is_zero():
    """A gradient that does not depend on its variable (Theano's Jeremiah bug): Rop is 0."""
    x = T.arange(20.0).reshape([1, 20])
    v = shared(np.ones(20))
    r = Rop(grad(T.dot(x, v).sum(), v), v, v)
    np.testing.assert_allclose(function([], r)(), np.zeros(20))


def test_rop_keeps_the_form_of_f_and_checks_dimensions(rng):
    m, v, em, ev = T.dmatrix("m"), T.dvector("v"), T.dmatrix("em"), T.dvector("ev")
    listed = Rop([m, v, m + v], [m, v], [em, ev])
    tupled = Rop((m, v, m + v), [m, v], [em, ev])
    assert isinstance(listed, list) and isinstance(tupled, tuple) and len(tupled) == 3
    mv, vv, emv, evv = (rng.uniform(size=s) for s in [(3, 2), (2,), (3, 2), (2,)])
    got = function([m, v, em, ev], list(tupled))(mv, vv, emv, evv)
    for g, w in zip(got, [emv, evv, emv + evv]):
        np.testing.assert_allclose(g, w)
    with pytest.raises(ValueError, match="2-d but its eval point"):
        Rop(0.0, [m], [ev])


def test_jacobian_unrolled_for_a_fixed_length():
    a, b = T.dscalar("a"), T.dscalar("b")
    y = T.stack([a * b, T.sin(a), b ** 2])
    ja, jb = jacobian(y, [a, b])
    assert not any(isinstance(n.op, JacobianOp) for n in io_toposort([], [ja, jb]))
    out = function([a, b], [ja, jb])(0.5, 3.0)
    np.testing.assert_allclose(out[0], [3.0, np.cos(0.5), 0.0])
    np.testing.assert_allclose(out[1], [0.5, 0.0, 6.0])


def test_jacobian_of_a_vector_against_numpy(rng):
    x = T.dvector("x")
    W = shared(rng.uniform(-1, 1, (4, 3)), name="W")
    y = T.tanh(T.dot(W, x))
    j = jacobian(y, x)
    assert any(isinstance(n.op, JacobianOp) for n in io_toposort([], [j]))
    xv = rng.uniform(-1, 1, 3)
    Wv = W.get_value()
    expected = (1 - np.tanh(Wv @ xv) ** 2)[:, None] * Wv
    np.testing.assert_allclose(function([x], j)(xv), expected, rtol=1e-10)
    # The op follows the shared variable's current value and givens.
    W.set_value(2 * Wv)
    expected2 = (1 - np.tanh(2 * Wv @ xv) ** 2)[:, None] * 2 * Wv
    np.testing.assert_allclose(function([x], j)(xv), expected2, rtol=1e-10)
    W2 = T.dmatrix("W2")
    got = function([x, W2], j, givens={W: W2})(xv, Wv)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_jacobian_of_a_matrix_expression_has_both_shapes(rng):
    x = T.dmatrix("x")
    j = jacobian(x ** 2, x)
    xv = rng.uniform(-1, 1, (2, 3))
    got = function([x], j)(xv)
    assert got.shape == (2, 3, 2, 3)
    expected = np.zeros((2, 3, 2, 3))
    for i in range(2):
        for k in range(3):
            expected[i, k, i, k] = 2 * xv[i, k]
    np.testing.assert_allclose(got, expected)


def test_jacobian_of_an_empty_expression():
    x = T.dvector("x")
    got = function([x], jacobian(x * 2, x))(np.zeros(0))
    assert got.shape == (0, 0)


def test_jacobian_of_a_scalar_is_its_gradient():
    x = T.dvector("x")
    np.testing.assert_allclose(function([x], jacobian((x ** 2).sum(), x))(np.array([1.0, 2.0])), [2.0, 4.0])


def test_jacobian_disconnected():
    x, y = T.dvector("x"), T.dvector("y")
    with pytest.raises(ValueError, match="does not depend on 'y'"):
        jacobian(x * 2, y)
    z = jacobian(x * 2, y, disconnected_inputs="ignore")
    assert function([x, y], z)(np.ones(2), np.ones(3)).shape == (2, 3)


def test_hessian_against_numpy(rng):
    x = T.dvector("x")
    A = rng.uniform(-1, 1, (3, 3))
    cost = T.dot(x, T.dot(A, x)) + T.exp(x).sum()
    h = hessian(cost, x)
    xv = rng.uniform(-1, 1, 3)
    np.testing.assert_allclose(function([x], h)(xv), A + A.T + np.diag(np.exp(xv)), rtol=1e-10)


def test_hessian_of_several_variables():
    x, y = T.dvector("x"), T.dscalar("y")
    cost = (x ** 3).sum() * y + y ** 4
    hx, hy = hessian(cost, [x, y])
    xv = np.array([1.0, -2.0])
    got = function([x, y], [hx, hy])(xv, 2.0)
    np.testing.assert_allclose(got[0], np.diag(6 * xv * 2.0))
    np.testing.assert_allclose(got[1], 12 * 2.0 ** 2)


def test_gradient_of_a_runtime_jacobian_is_refused():
    x = T.dvector("x")
    with pytest.raises(NotImplementedError, match="JacobianOp"):
        grad(jacobian(x ** 2, x).sum(), x)
