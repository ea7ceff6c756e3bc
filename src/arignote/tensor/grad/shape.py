"""Gradients of the shape ops: reading a shape has none; the others pass it back reshaped."""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.tensor.checks import Assert
from arignote.tensor.shape import (Rebroadcast, Reshape, Shape, Shape_i, SpecifyShape,
                                   patternbroadcast)
from arignote.tensor.shape import shape as _shape


@register_grad(Shape, Shape_i)
def shape_grad(op, inputs, outputs, output_grads):
    return [None]


@register_grad(Reshape)
def reshape_grad(op, inputs, outputs, output_grads):
    x = inputs[0]
    return [Reshape(x.ndim)(output_grads[0], _shape(x)), None]


@register_grad(Assert)
def assert_grad(op, inputs, outputs, output_grads):
    return [output_grads[0]] + [None] * (len(inputs) - 1)


@register_grad(SpecifyShape)
def specify_shape_grad(op, inputs, outputs, output_grads):
    return [output_grads[0], None]


@register_grad(Rebroadcast)
def rebroadcast_grad(op, inputs, outputs, output_grads):
    return [patternbroadcast(output_grads[0], inputs[0].broadcastable)]
