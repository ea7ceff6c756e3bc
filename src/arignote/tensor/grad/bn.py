"""Gradients of batch normalization's abstract ops, differentiated through the graphs
they stand for (``tensor.nnet.bn.lowered_*``).

The normalised output's gradient goes through AbstractBatchNormTrainGrad (Theano's
op); gradients reaching the batch mean, the inverse standard deviation or the new
running averages flow through their own graphs too (Theano dropped those), so every
output of ``batch_normalization_train`` is differentiable.
"""
from __future__ import annotations

import numpy as np

from arignote.gradient import backpropagate, register_grad
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.nnet.bn import (AbstractBatchNormInference, AbstractBatchNormTrain,
                                     AbstractBatchNormTrainGrad, lowered_inference, lowered_train,
                                     lowered_train_grad)
from arignote.tensor.shape import static_value
from arignote.tensor import math as tm


def _is_zero(g) -> bool:
    """``g`` is ``zeros_like(...)``: the output it belongs to reaches no cost."""
    node = g.owner
    if node is None or not isinstance(node.op, Elemwise) or node.op.scalar_op.name != "second":
        return False
    value = static_value(node.inputs[1])
    return value is not None and not np.any(value)


def _through(lowered: list, output_grads: list, wrt: list) -> list:
    """Gradients of ``wrt`` through the lowered graph, from the outputs that have one.

    Each of ``wrt`` is a leaf (an op's gradient treats its inputs as independent): the
    batch mean and std that AbstractBatchNormTrainGrad takes are themselves computed
    from its ``x``, and going on through them would count that path twice."""
    seeds = {out: g for out, g in zip(lowered, output_grads) if not _is_zero(g)}
    if not seeds:
        return [None] * len(wrt)
    grads = backpropagate(seeds, wrt, consider_constant=wrt)
    return [grads.get(v) for v in wrt]


def _add(a, b):
    return b if a is None else a if b is None else tm.add(a, b)


@register_grad(AbstractBatchNormTrain)
def batch_norm_train_grad(op, inputs, outputs, output_grads):
    x, scale, bias, epsilon, _, *running = inputs
    gx, gscale, gbias = AbstractBatchNormTrainGrad(op.axes)(x, output_grads[0], scale, outputs[1],
                                                            outputs[2], epsilon)
    lowered = lowered_train(outputs[0].owner)
    extra = _through(lowered[1:], output_grads[1:], [x] + running)
    return [_add(gx, extra[0]), gscale, gbias, None, None] + extra[1:]


@register_grad(AbstractBatchNormInference)
def batch_norm_inference_grad(op, inputs, outputs, output_grads):
    return _through(lowered_inference(outputs[0].owner), output_grads, inputs[:5]) + [None]


@register_grad(AbstractBatchNormTrainGrad)
def batch_norm_train_grad_grad(op, inputs, outputs, output_grads):
    return _through(lowered_train_grad(outputs[0].owner), output_grads, inputs[:5]) + [None]
