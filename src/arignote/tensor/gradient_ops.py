"""Ops that are the identity in the forward pass and change only the gradient.

``zero_grad`` (the gradient through it is zero), ``disconnected_grad`` (no
path at all: asking for the gradient only through it raises, as for an
unconnected input), ``consider_constant`` (Theano's older name of zero_grad),
``undefined_grad`` (the gradient does not exist: ``grad`` raises, or returns a
NullType gradient), ``grad_clip`` (clipped to ``[lower, upper]``) and
``grad_scale`` (multiplied). ``zero_grad_``, ``consider_constant_``,
``disconnected_grad_`` and ``undefined_grad_`` are the op instances (Theano's
names, which its code compares nodes' ops with).
Their rules live in ``tensor/grad/gradient_ops.py``; compiling removes the
ops (``local_remove_gradient_ops``), so they cost nothing at run time.
``IdentityView`` is their forward pass, for other marker ops too (sandbox.linalg's hints).
"""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply, Op, Variable
from arignote.tensor.variable import as_tensor_variable

__all__ = ["IdentityView", "ViewGradOp", "ZeroGrad", "DisconnectedGrad", "ConsiderConstant", "UndefinedGrad", "GradClip",
           "GradScale", "zero_grad", "disconnected_grad", "consider_constant", "undefined_grad", "grad_clip",
           "grad_scale", "zero_grad_", "consider_constant_", "disconnected_grad_", "undefined_grad_"]


class IdentityView(Op):
    """The identity on its one input, whose output is a view of it."""

    __props__ = ()

    view_map = {0: [0]}

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class ViewGradOp(IdentityView):
    """The identity on its one input (a view), with a gradient rule of its own."""


class ZeroGrad(ViewGradOp):
    """The gradient through it is zeros."""


class ConsiderConstant(ZeroGrad):
    """Theano's ``consider_constant`` op: the same as ZeroGrad."""


class DisconnectedGrad(ViewGradOp):
    """No gradient path goes through it."""

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False]]


class UndefinedGrad(ViewGradOp):
    """The gradient through it does not exist (a NullType gradient)."""


class GradClip(ViewGradOp):
    """The gradient through it is clipped to ``[lower_bound, upper_bound]``."""

    __props__ = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound: float, upper_bound: float):
        if lower_bound > upper_bound:
            raise ValueError(f"grad_clip: lower_bound {lower_bound} is above upper_bound {upper_bound}")
        self.lower_bound, self.upper_bound = float(lower_bound), float(upper_bound)


class GradScale(ViewGradOp):
    """The gradient through it is multiplied by ``multiplier``."""

    __props__ = ("multiplier",)

    def __init__(self, multiplier: float):
        self.multiplier = float(multiplier)


zero_grad_ = ZeroGrad()
consider_constant_ = ConsiderConstant()
disconnected_grad_ = DisconnectedGrad()
undefined_grad_ = UndefinedGrad()


def zero_grad(x: Any) -> Variable:
    """``x``, whose gradient is zero: ``grad(f(zero_grad(x)), x)`` is zeros."""
    return zero_grad_(x)


def consider_constant(x: Any) -> Variable:
    """``x`` treated as a constant by ``grad`` (Theano's name for ``zero_grad``)."""
    return consider_constant_(x)


def disconnected_grad(x: Any) -> Variable:
    """``x`` with no gradient path through it (a wrt reached only this way is disconnected)."""
    return disconnected_grad_(x)


def undefined_grad(x: Any) -> Variable:
    """``x``, whose gradient is undefined: ``grad`` through it raises ``NullTypeGradError``."""
    return undefined_grad_(x)


def grad_clip(x: Any, lower_bound: float, upper_bound: float) -> Variable:
    """``x``, whose gradient is clipped elementwise to ``[lower_bound, upper_bound]``."""
    return GradClip(lower_bound, upper_bound)(x)


def grad_scale(x: Any, multiplier: float) -> Variable:
    """``x``, whose gradient is multiplied by ``multiplier``."""
    return GradScale(multiplier)(x)
