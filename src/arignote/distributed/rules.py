"""Update rules: callables from (parameters, gradients) to update pairs.

A rule is called once, symbolically, with the parameters (shared variables) and one
symbolic gradient per parameter; it returns ``[(shared, next value), ...]`` and may
make shared variables of its own (momentum's velocities), which become part of the
state a trainer keeps on every replica and pulls back to the client. Any callable of
that shape works as a rule; these are the usual three. A learning rate may be a
number or a shared variable (changing it on the client reaches the replicas at the
next step).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote import tensor as T
from arignote.compile.sharedvalue import SharedVariable, shared

Rule = Callable[[Sequence[SharedVariable], Sequence[Any]], list[tuple[SharedVariable, Any]]]


def _like(param: SharedVariable, suffix: str) -> SharedVariable:
    value = param.get_value(borrow=True)
    return shared(np.zeros_like(value), name=f"{param.name or 'param'}.{suffix}",
                  broadcastable=param.type.broadcastable)


def _as(expr: Any, param: SharedVariable) -> Any:
    return T.cast(expr, param.dtype)


def sgd(learning_rate: float | SharedVariable) -> Rule:
    """``p <- p - learning_rate * g``."""
    def rule(params: Sequence[SharedVariable], grads: Sequence[Any]) -> list:
        return [(p, _as(p - learning_rate * g, p)) for p, g in zip(params, grads)]
    return rule


def momentum(learning_rate: float | SharedVariable, momentum: float = 0.9) -> Rule:
    """Classical momentum: ``v <- momentum * v - learning_rate * g``, ``p <- p + v``, with
    one velocity per parameter (named ``<param>.velocity``, starting at zero)."""
    def rule(params: Sequence[SharedVariable], grads: Sequence[Any]) -> list:
        pairs = []
        for p, g in zip(params, grads):
            v = _like(p, "velocity")
            v_next = _as(momentum * v - learning_rate * g, p)
            pairs += [(v, v_next), (p, _as(p + v_next, p))]
        return pairs
    return rule


def adadelta(learning_rate: float | SharedVariable = 1.0, rho: float = 0.95, epsilon: float = 1e-6) -> Rule:
    """Zeiler's ADADELTA: running means of squared gradients and squared steps
    (``<param>.grad_sq``, ``<param>.step_sq``) scale each step."""
    def rule(params: Sequence[SharedVariable], grads: Sequence[Any]) -> list:
        pairs = []
        for p, g in zip(params, grads):
            grad_sq, step_sq = _like(p, "grad_sq"), _like(p, "step_sq")
            grad_sq_next = rho * grad_sq + (1 - rho) * T.sqr(g)
            delta = g * T.sqrt(step_sq + epsilon) / T.sqrt(grad_sq_next + epsilon)
            pairs += [(grad_sq, _as(grad_sq_next, p)),
                      (step_sq, _as(rho * step_sq + (1 - rho) * T.sqr(delta), p)),
                      (p, _as(p - learning_rate * delta, p))]
        return pairs
    return rule
