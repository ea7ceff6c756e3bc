"""OpFromGraph: values, shared variables inside, nesting, inline expansion, gradients
(default, overridden per input or as a whole, NullType/DisconnectedType), R-op overrides,
connection patterns, shapes, test values, pickling, and errors."""
import pickle

import numpy as np
import pytest

from arignote import OpFromGraph, config, function, shared, tensor as T
from arignote.gradient import DisconnectedType, NullType, NullTypeGradError, Rop, grad, verify_grad

x, y, z = T.dscalars("x", "y", "z")


def test_values_and_nesting():
    op = OpFromGraph([x, y, z], [x + y * z])
    f = function([x, y, z], op(x, y, z) + op(z, y, x))
    assert f(1.0, 2.0, 3.0) == (1 + 6) + (3 + 2)
    outer = OpFromGraph([x, y], [op(x, y, y) * 2])
    assert function([x, y], outer(x, y))(1.0, 3.0) == 2 * (1 + 9)
    two = OpFromGraph([x], [x * 2, x * 3])
    a, b = two(y)
    assert function([y], [a, b])(2.0) == [4.0, 6.0]
    assert str(op) == "OpFromGraph{inline=False}" and op != OpFromGraph([x, y, z], [x + y * z])


def test_shared_variables_inside():
    m = T.dmatrix("m")
    s = shared(np.ones((2, 2)), name="s")
    op = OpFromGraph([m], [m + s])
    f = function([m], op(m))
    np.testing.assert_array_equal(f(np.zeros((2, 2))), np.ones((2, 2)))
    s.set_value(np.full((2, 2), 5.0))
    np.testing.assert_array_equal(f(np.zeros((2, 2))), np.full((2, 2), 5.0))
    g = function([m], grad((op(m) ** 2).sum(), s))
    np.testing.assert_array_equal(g(np.ones((2, 2))), 2 * (1 + 5.0) * np.ones((2, 2)))


def test_inline_puts_the_nodes_in_the_graph():
    op = OpFromGraph([x, y], [x * y + 1], inline=True)
    f = function([x, y], op(x, y))
    assert f(2.0, 3.0) == 7.0
    assert not any(isinstance(n.op, OpFromGraph) for n in f.maker.fgraph.toposort())


def test_default_gradient():
    m, v = T.dmatrix("m"), T.dvector("v")
    op = OpFromGraph([m, v], [T.tanh(T.dot(m, v)), (m ** 2).sum()])
    rng = np.random.RandomState(3)
    verify_grad(lambda m, v: op(m, v)[0] * 2 + op(m, v)[1], [rng.randn(3, 2), rng.randn(2)], rng=rng)
    # Second order: the gradient op is an OpFromGraph too.
    gx = grad(OpFromGraph([x], [x ** 3])(x), x)
    assert function([x], grad(gx, x))(2.0) == 12.0


def test_default_gradient_of_outputs_computed_from_one_another():
    """Outputs [a, 3a]: the total derivative, each output's gradient counted (real Theano
    1.0.5 drops the second's, through its known_grads rule; arignote does not)."""
    a = x * x
    first, second = OpFromGraph([x], [a, 3 * a])(y)
    g = grad(first + second, y)
    assert np.isclose(function([y], g)(0.7), 8 * 0.7)
    verify_grad(lambda v: sum(OpFromGraph([x], [a, 3 * a])(v)), [np.array(0.7)])


def test_gradient_overrides():
    e = x + y * z

    def rescale_dy(inputs, output_grads):
        return inputs[2] * 2

    op = OpFromGraph([x, y, z], [e], grad_overrides=["default", rescale_dy, "default"])
    assert function([x, y, z], grad(op(x, y, z), [x, y, z]))(2.0, 3.0, 4.0) == [1.0, 8.0, 3.0]
    whole = OpFromGraph([x, y], [x * y], grad_overrides=lambda inps, gs: [gs[0] * 10, gs[0] * 20])
    assert function([x, y], grad(whole(x, y), [x, y]), on_unused_input="ignore")(1.0, 1.0) == [10.0, 20.0]
    lop = OpFromGraph([x], [x ** 2], lop_overrides=lambda inps, outs, gs: [outs[0] * gs[0]])
    assert function([x], grad(lop(x), x))(3.0) == 9.0
    undefined = OpFromGraph([x, y], [x * y], grad_overrides=["default", NullType()()])
    with pytest.raises(NullTypeGradError):
        grad(undefined(x, y), y)
    assert function([x, y], grad(undefined(x, y), x), on_unused_input="ignore")(2.0, 5.0) == 5.0
    cut = OpFromGraph([x, y], [x * y], grad_overrides=["default", DisconnectedType()()])
    assert grad(cut(x, y), y, disconnected_inputs="ignore", return_disconnected="None") is None
    by_op = OpFromGraph([x, y], [x * y], grad_overrides=OpFromGraph([x, y, z], [z * 0 + 7, z * 0 + 9]))
    assert function([x, y], grad(by_op(x, y), [x, y]), on_unused_input="ignore")(1.0, 1.0) == [7.0, 9.0]


def test_lop_override_given_as_an_op_of_inputs_outputs_and_output_gradients():
    v, out, g_out = T.dvectors("v", "out", "g_out")
    sigmoid = 1 / (1 + T.exp(-v))
    twice = OpFromGraph([v, out, g_out], [2 * out * (1 - out) * g_out])
    for inline in (False, True):
        op = OpFromGraph([v], [sigmoid], lop_overrides=twice, inline=inline)
        w = T.dvector("w")
        point = np.linspace(-2, 2, 7)
        got = function([w], grad(op(w).sum(), w))(point)
        s = 1 / (1 + np.exp(-point))
        np.testing.assert_allclose(got, 2 * s * (1 - s))


@pytest.mark.parametrize("inline", [False, True])
def test_rop_overrides(inline):
    a, b, u, w = T.dvectors("a", "b", "u", "w")
    point = [np.arange(1.0, 5.0), np.arange(5.0, 9.0), np.full(4, 0.5), np.full(4, 2.0)]
    expected = point[2] * point[1] * 2 + point[0] * point[3] * 1.5  # not the product's own R-op

    def by_hand(inputs, eval_points):
        (p, q), (dp, dq) = inputs, eval_points
        return [dp * q * 2 + p * dq * 1.5]

    forms = [by_hand, OpFromGraph([a, b, u, w], by_hand([a, b], [u, w])),
             [lambda inputs, points: by_hand(inputs, points)[0]]]
    for form in forms:
        op = OpFromGraph([a, b], [a * b], rop_overrides=form, inline=inline)
        xa, xb, du, dv = T.dvectors("xa", "xb", "du", "dv")
        r = Rop(op(xa, xb), [xa, xb], [du, dv])
        np.testing.assert_allclose(function([xa, xb, du, dv], r)(*point), expected)
    plain = OpFromGraph([a, b], [a * b], rop_overrides=["default"], inline=inline)
    xa, xb, du, dv = T.dvectors("xa", "xb", "du", "dv")
    r = function([xa, xb, du, dv], Rop(plain(xa, xb), [xa, xb], [du, dv]))(*point)
    np.testing.assert_allclose(r, point[2] * point[1] + point[0] * point[3])
    with pytest.raises(ValueError, match="1 outputs"):
        Rop(OpFromGraph([a, b], [a * b], rop_overrides=[by_hand, by_hand])(xa, xb), [xa], [du])


def test_connection_pattern_goes_through_inner_multi_output_nodes():
    m, n, p, q = T.dmatrices("m", "n", "p", "q")
    pair = OpFromGraph([m, n, p], [m * n, n * p])
    assert pair.connection_pattern(None) == [[True, False], [True, True], [False, True]]
    first, second = pair(m, n, p)
    nested = OpFromGraph([m, n, p, q], list(pair(first, q, second)))
    # m reaches only the nested op's first output: through the inner pair's first output
    assert nested.connection_pattern(None) == [[True, False], [True, True], [False, True], [True, True]]


def test_shapes_are_inferred_without_running_the_op():
    m, n = T.dmatrices("m", "n")
    op = OpFromGraph([m, n], [m + n, T.dot(m, n.T)])
    total, product = op(m, n)
    f = function([m, n], [total.shape, product.shape])
    assert not any(isinstance(node.op, OpFromGraph) for node in f.maker.fgraph.toposort())
    got = f(np.ones((3, 4)), np.ones((3, 4)))
    assert [tuple(s) for s in got] == [(3, 4), (3, 3)]


def test_gradient_with_test_values_on():
    v = T.dscalar("v")
    v.tag.test_value = np.array(2.0)
    cube = OpFromGraph([x], [x ** 3])
    with config.change_flags(compute_test_value="raise"):
        g = grad(cube(v), v)  # the gradient op's inner placeholders have no test values
    assert g.tag.test_value == 12.0


def test_connection_pattern():
    op = OpFromGraph([x, y], [x * 2, y * 3])
    node = op(x, y)[0].owner
    assert op.connection_pattern(node) == [[True, False], [False, True]]
    with pytest.raises(Exception, match="does not depend"):
        grad(op(x, y)[0], y)
    given = OpFromGraph([x, y], [x * y], connection_pattern=[[True], [False]])
    assert given.connection_pattern(given(x, y).owner) == [[True], [False]]


def test_pickles():
    op = OpFromGraph([x, y], [x * y + 1])
    f = function([x, y], op(x, y))
    assert f(2.0, 3.0) == 7.0
    copy = pickle.loads(pickle.dumps(op))
    assert function([x, y], copy(x, y))(2.0, 3.0) == 7.0


def test_errors():
    with pytest.raises(TypeError, match="must be a list"):
        OpFromGraph([x], x * 2)
    with pytest.raises(TypeError, match="updates and givens"):
        OpFromGraph([x], [x * 2], updates={})
    op = OpFromGraph([x], [x * 2])
    with pytest.raises(TypeError, match="takes 1 inputs, got 2"):
        op(x, y)
    with pytest.raises(TypeError, match="expects"):
        op(T.dvector("v"))
    with pytest.raises(ValueError, match="not both"):
        OpFromGraph([x], [x], grad_overrides=lambda i, g: g, lop_overrides=lambda i, o, g: g)
