"""Gradients of the abstract convolutions: each of the three ops differentiates into the
other two (Theano's rules), so second derivatives and Rop work through a convolution.

``shape`` inputs (the spatial lengths of the filters or of the input) are int
vectors and get no gradient; the rules build them from ``Shape_i`` reads, which
stay host values wherever the arrays live.
"""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.tensor.shape import shape_i
from arignote.tensor.nnet.abstract_conv import (AbstractConv, AbstractConv_gradInputs,
                                                AbstractConv_gradWeights, ShapeAssert, sibling)


def _spatial(x, convdim: int) -> list:
    return [shape_i(x, d) for d in range(x.ndim - convdim, x.ndim)]


@register_grad(AbstractConv)
def conv_grad(op, inputs, outputs, output_grads):
    bottom, weights = inputs
    top = output_grads[0]
    return [sibling(op, "inputs")(weights, top, _spatial(bottom, op.convdim)),
            sibling(op, "weights")(bottom, top, _spatial(weights, op.convdim))]


@register_grad(AbstractConv_gradWeights)
def conv_grad_weights_grad(op, inputs, outputs, output_grads):
    bottom, top, _ = inputs
    weights = output_grads[0]
    return [sibling(op, "inputs")(weights, top, _spatial(bottom, op.convdim)),
            sibling(op, "forward")(bottom, weights), None]


@register_grad(AbstractConv_gradInputs)
def conv_grad_inputs_grad(op, inputs, outputs, output_grads):
    weights, top, _ = inputs
    bottom = output_grads[0]
    return [sibling(op, "weights")(bottom, top, _spatial(weights, op.convdim)),
            sibling(op, "forward")(bottom, weights), None]


@register_grad(ShapeAssert)
def shape_assert_grad(op, inputs, outputs, output_grads):
    return [output_grads[0]] + [None] * (len(inputs) - 1)
