"""grad()'s Theano options: add_names, return_disconnected, null_gradients; NullType and
DisconnectedType gradients, grad_undefined/grad_not_implemented, consider_constant on a
wrt, connection patterns, subgraph_grad."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, shared, tensor as T
from arignote.gradient import (DisconnectedInputError, DisconnectedType, NullType, NullTypeGradError,
                               grad, grad_not_implemented, grad_undefined, subgraph_grad,
                               undefined_grad)
from arignote.graph.basic import Apply, Op


class Twice(Op):
    """2x, whose gradient is given by ``how`` (undefined / not implemented / a formula)."""

    __props__ = ("how",)

    def __init__(self, how: str):
        self.how = how

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def grad(self, inputs, output_grads):
        if self.how == "undefined":
            return [grad_undefined(self, 0, inputs[0], "on purpose")]
        if self.how == "missing":
            return [grad_not_implemented(self, 0, inputs[0])]
        return [output_grads[0] * 2]


def test_add_names():
    x = T.dvector("x")
    f = (x ** 2).sum()
    f.name = "f"
    assert grad(f, x).name == "(df/dx)"
    assert grad(f, x, add_names=False).name is None
    unnamed = T.dvector()
    assert grad((unnamed ** 2).sum(), unnamed).name is None


def test_return_disconnected():
    x, y, k = T.dvector("x"), T.dvector("y"), T.iscalar("k")
    cost = (x ** 2).sum()
    assert grad(cost, y, disconnected_inputs="ignore", return_disconnected="None") is None
    g = grad(cost, y, disconnected_inputs="ignore", return_disconnected="Disconnected")
    assert isinstance(g.type, DisconnectedType)
    zeros = grad(cost, k, disconnected_inputs="ignore")
    assert zeros.dtype == "float64"  # an integer's zeros are a float's
    with pytest.raises(ValueError, match="return_disconnected='maybe'"):
        grad(cost, x, return_disconnected="maybe")
    with pytest.raises(TypeError, match="DisconnectedType gradient"):
        function([x], g, on_unused_input="ignore")


@pytest.mark.parametrize("how, word", [("undefined", "mathematically undefined"),
                                       ("missing", "not implemented")])
def test_null_gradients(how, word):
    x = T.dvector("x")
    cost = Twice(how)(x).sum()
    with pytest.raises(NullTypeGradError, match=word):
        grad(cost, x)
    assert issubclass(NullTypeGradError, TypeError)  # Theano's tests catch TypeError
    g = grad(cost, x, null_gradients="return")
    assert isinstance(g.type, NullType) and word in g.type.why_null
    with pytest.raises(TypeError, match="does not exist"):
        function([x], g)
    # A null gradient spreads to every input connected to it, and sums stay null.
    y = T.dvector("y")
    both = (Twice(how)(x * y) + x).sum()
    gx, gy = grad(both, [x, y], null_gradients="return")
    assert isinstance(gx.type, NullType) and isinstance(gy.type, NullType)


def test_undefined_grad_op():
    x = T.dscalar("x")
    with pytest.raises(NullTypeGradError):
        grad(undefined_grad(x) * 3, x)
    f = function([x], undefined_grad(x) * 3)
    assert f(2.0) == 6.0
    assert not any(type(n.op).__name__ == "UndefinedGrad" for n in f.maker.fgraph.toposort())


def test_known_grads_null_and_disconnected():
    x, y = T.iscalar("x"), T.iscalar("y")
    cost = x + y
    with pytest.raises(NullTypeGradError):
        grad(cost, [x, y], known_grads={cost: NullType()()})
    with pytest.raises(DisconnectedInputError):
        grad(cost, [x, y], known_grads={cost: DisconnectedType()()})
    g = T.dscalar("g")
    gx = grad(None, x, known_grads={x: g})
    assert gx is g  # an integer may carry a known float gradient
    with pytest.raises(ValueError, match="NullType variable"):
        grad(NullType()(), x)


def test_consider_constant_wrt_still_gets_its_gradient():
    # Theano: a variable held constant gets its own gradient, but passes none on.
    x, y = T.dscalar("x"), T.dscalar("y")
    one = T.constant(1.0)
    held = grad(x + y, x, consider_constant=[x])
    of_constant = grad(one + y, one)
    assert function([x, y], [held, of_constant], on_unused_input="ignore")(1.0, 0.5) == [1.0, 1.0]
    z = T.exp(x)
    assert function([x], grad(z * 2, z, consider_constant=[z]), on_unused_input="ignore")(0.0) == 2.0


class Split2(Op):
    """(x, a fresh scalar): the second output does not depend on x (connection_pattern)."""

    def make_node(self, x):
        return Apply(self, [x], [x.type(), T.dscalar()])

    def connection_pattern(self, node):
        return [[True, False]]

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]
        output_storage[1][0] = np.float64(0)

    def grad(self, inputs, output_grads):
        return [output_grads[0]]


class UseBoth(Op):
    """f + g, whose gradient on g is undefined."""

    def make_node(self, f, g):
        return Apply(self, [f, g], [T.dscalar()])

    def grad(self, inputs, output_grads):
        return [T.ones_like(inputs[0]) * output_grads[0], NullType()()]


def test_connection_pattern_keeps_a_null_gradient_away():
    x = T.dscalar("x")
    f, g = Split2()(x)
    cost = UseBoth()(f, g)
    gx = grad(cost, x)  # the NullType reaches g only, which x does not feed
    assert not isinstance(gx.type, NullType)


def test_rule_contract_errors():
    class NoList(Op):
        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def grad(self, inputs, output_grads):
            return None

    class TooFew(Op):
        def make_node(self, *xs):
            return Apply(self, list(xs), [xs[0].type()])

        def grad(self, inputs, output_grads):
            return [inputs[0].zeros_like()]

    x, y = T.dvector("x"), T.dvector("y")
    with pytest.raises(TypeError, match="returned None"):
        grad(NoList()(x).sum(), x)
    with pytest.raises(ValueError, match="1 gradients for 2 inputs"):
        grad(TooFew()(x, y).sum(), x)


def test_subgraph_grad_matches_grad():
    rng = np.random.RandomState(3)
    x, t = T.dvector("x"), T.dvector("t")
    w1, w2 = shared(rng.randn(3, 4), name="w1"), shared(rng.randn(4, 2), name="w2")
    a1 = T.tanh(T.dot(x, w1))
    a2 = T.tanh(T.dot(a1, w2))
    cost2 = ((a2 - t) ** 2).sum() + (w2.sum()) ** 2
    cost1 = (w1.sum()) ** 2
    expected = function([t, x], grad(cost2 + cost1, [w2, w1]))
    g_w2, g_a1 = subgraph_grad(wrt=[w2], end=[a1], cost=cost2)
    (g_w1,), _ = subgraph_grad(wrt=[w1], end=[x], start={a1: g_a1[0]}, cost=cost1)
    tv, xv = rng.randn(2), rng.randn(3)
    for a, b in zip(expected(tv, xv), function([t, x], [g_w2[0], g_w1])(tv, xv)):
        np.testing.assert_allclose(a, b)
    _, _, start_grads, cost_grads = subgraph_grad([w1], [x], start={a1: g_a1[0]}, cost=cost1,
                                                  details=True)
    assert len(start_grads) == len(cost_grads) == 2
    with pytest.raises(ValueError, match="give a cost, or start"):
        subgraph_grad([w1], [x])
