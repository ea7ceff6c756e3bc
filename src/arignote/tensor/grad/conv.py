"""Gradients of the abstract convolutions: each of the three ops differentiates into the
other two (Theano's rules), so second derivatives and Rop work through a convolution.

``shape`` inputs (the spatial lengths of the filters or of the input) are int
vectors and get no gradient.
"""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.tensor.nnet.abstract_conv import (AbstractConv, AbstractConv_gradInputs,
                                                AbstractConv_gradWeights, sibling)


@register_grad(AbstractConv)
def conv_grad(op, inputs, outputs, output_grads):
    bottom, weights = inputs
    top = output_grads[0]
    return [sibling(op, "inputs")(weights, top, bottom.shape[2:]),
            sibling(op, "weights")(bottom, top, weights.shape[2:])]


@register_grad(AbstractConv_gradWeights)
def conv_grad_weights_grad(op, inputs, outputs, output_grads):
    bottom, top, _ = inputs
    weights = output_grads[0]
    return [sibling(op, "inputs")(weights, top, bottom.shape[2:]),
            sibling(op, "forward")(bottom, weights), None]


@register_grad(AbstractConv_gradInputs)
def conv_grad_inputs_grad(op, inputs, outputs, output_grads):
    weights, top, _ = inputs
    bottom = output_grads[0]
    return [sibling(op, "weights")(bottom, top, weights.shape[2:]),
            sibling(op, "forward")(bottom, weights), None]
