"""Gradients of the gradient-changing identities (``tensor/gradient_ops.py``)."""
from __future__ import annotations

from arignote.gradient import grad_undefined, register_grad
from arignote.tensor import math as tm
from arignote.tensor.alloc import zeros_like
from arignote.tensor.gradient_ops import DisconnectedGrad, GradClip, GradScale, UndefinedGrad, ZeroGrad
from arignote.tensor.variable import constant


@register_grad(ZeroGrad)
def zero_grad_grad(op, inputs, outputs, output_grads):
    return [zeros_like(output_grads[0])]


@register_grad(DisconnectedGrad)
def disconnected_grad_grad(op, inputs, outputs, output_grads):
    return [None]


@register_grad(UndefinedGrad)
def undefined_grad_grad(op, inputs, outputs, output_grads):
    return [grad_undefined(op, 0, inputs[0], "(undefined_grad)")]


@register_grad(GradClip)
def grad_clip_grad(op, inputs, outputs, output_grads):
    g = output_grads[0]
    return [tm.clip(g, constant(op.lower_bound, dtype=g.dtype), constant(op.upper_bound, dtype=g.dtype))]


@register_grad(GradScale)
def grad_scale_grad(op, inputs, outputs, output_grads):
    g = output_grads[0]
    return [tm.mul(g, constant(op.multiplier, dtype=g.dtype))]
