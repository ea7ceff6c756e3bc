"""The identities that change only the gradient: zero_grad, consider_constant,
disconnected_grad, grad_clip, grad_scale (Theano's theano.gradient helpers)."""
import numpy as np
import pytest

import arignote
from arignote import function, gradient as G, tensor as T

X = np.array([-2.0, 0.25, 3.0])


def grad_of(cost_of, x=None):
    x = x if x is not None else T.dvector("x")
    return function([x], arignote.grad(cost_of(x), x))(X)


@pytest.mark.parametrize("helper", [G.zero_grad, G.consider_constant])
def test_zero_grad_blocks_the_path_through_it(helper):
    # d/dx sum(stop(x) * x) = stop(x) = x; the path through the helper adds nothing.
    np.testing.assert_allclose(grad_of(lambda x: (helper(x) * x).sum()), X)
    np.testing.assert_allclose(grad_of(lambda x: (helper(x) ** 2).sum()), np.zeros(3))


def test_disconnected_grad_cuts_the_path():
    np.testing.assert_allclose(grad_of(lambda x: (G.disconnected_grad(x) * x).sum()), X)
    x = T.dvector("x")
    with pytest.raises(G.DisconnectedInputError):
        arignote.grad(G.disconnected_grad(x).sum(), x)


def test_grad_clip_and_grad_scale_against_the_analytic_gradient():
    # d/dx sum(c * x^2) = 2 c x, clipped to [-1, 1]; scaled by 3.
    np.testing.assert_allclose(grad_of(lambda x: (G.grad_clip(x, -1, 1) ** 2 * 0.5).sum()),
                               np.clip(X, -1, 1))
    np.testing.assert_allclose(grad_of(lambda x: (G.grad_scale(x, 3.0) ** 2).sum()), 6 * X)
    with pytest.raises(ValueError, match="lower_bound"):
        G.grad_clip(T.dvector(), 1, -1)


def test_forward_values_unchanged_and_ops_removed_when_compiled():
    x = T.dvector("x")
    for helper in (G.zero_grad, G.disconnected_grad, lambda v: G.grad_clip(v, -1, 1),
                   lambda v: G.grad_scale(v, 2.0)):
        f = function([x], helper(x) * 2)
        np.testing.assert_allclose(f(X), 2 * X)
        assert not any(isinstance(n.op, G.ViewGradOp) for n in f.maker.fgraph.toposort())
        g = function([x], helper(x) * 2, mode=arignote.Mode(optimizer=None))
        np.testing.assert_allclose(g(X), 2 * X)


def test_float32_stays_float32():
    x = T.fvector("x")
    g = arignote.grad((G.grad_clip(x, -1, 1) * G.grad_scale(x, 2.0)).sum(), x)
    assert g.dtype == "float32"
