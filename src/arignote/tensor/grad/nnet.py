"""Gradients of softmax and log_softmax, and stable gradients of the log-losses.

Neither softmax rule divides by a softmax, so saturated (0 or 1) probabilities
give finite gradients. ``log(sigmoid(z))``, ``log(1 - sigmoid(z))`` (the sigmoid
also written out, as ``1 / (1 + exp(-z))``: ``rewrites.utils.sigmoid_argument``) and
``log(softmax(z))`` (also of an indexed softmax, as in the class-index form of
categorical_crossentropy) are differentiated as ``-softplus(-z)``,
``-softplus(z)`` and ``log_softmax(z)``: the textbook chain would multiply an
infinite ``1 / p`` by a zero derivative where ``p`` rounds to 0 or 1.
"""
from __future__ import annotations


from arignote.gradient import register_grad, register_stable_form
from arignote.tensor import math as tm
from arignote.tensor.nnet import basic as _nnet
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.grad.elemwise import c, rule
from arignote.tensor.nnet import LogSoftmax, Softmax
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.rewrites.utils import is_scalar_constant, op_name, sigmoid_argument
from arignote.tensor.subtensor import AdvancedSubtensor, AdvancedSubtensor1, Subtensor


@register_grad(Softmax)
def softmax_grad(op, inputs, outputs, output_grads):
    sm, gz = outputs[0], output_grads[0]
    return [(gz - _sum(gz * sm, op.axis, keepdims=True)) * sm]


@register_grad(LogSoftmax)
def log_softmax_grad(op, inputs, outputs, output_grads):
    gz = output_grads[0]
    return [gz - tm.exp(outputs[0]) * _sum(gz, op.axis, keepdims=True)]


@rule("ultra_fast_sigmoid")
def _ultra_fast_sigmoid(inputs, out, gz):
    """The derivative of the piecewise approximation itself (see tensor.nnet)."""
    x = inputs[0]
    t = tm.abs(x) * c(0.5, x)
    curve = c(1.5, x) / tm.sqr(c(1, x) + t)
    slope = tm.switch(tm.lt(t, c(_nnet._FLAT, x)), c(_nnet._LINE_SLOPE, x), c(0, x))
    return [gz * c(0.25, x) * tm.switch(tm.lt(t, c(_nnet._BEND, x)), curve, slope)]


# ------------------------------------------------------------------ stable forms
@register_stable_form
def _log_of_probability(node):
    if not isinstance(node.op, Elemwise) or node.op.scalar_op.name not in ("log", "log1p"):
        return None
    p = node.inputs[0]
    if node.op.scalar_op.name == "log1p":  # log1p(-sigmoid(z)) = log(1 - sigmoid(z))
        found = sigmoid_argument(p.owner.inputs[0]) if op_name(p) == "neg" else None
        return None if found is None else _log_sigmoid(*found, complement=True)
    found = sigmoid_argument(p)
    if found is not None:
        return _log_sigmoid(*found, complement=False)
    if op_name(p) == "sub" and is_scalar_constant(p.owner.inputs[0], 1):
        found = sigmoid_argument(p.owner.inputs[1])
        if found is not None:
            return _log_sigmoid(*found, complement=True)
    if p.owner is not None and isinstance(p.owner.op, Softmax):
        z = p.owner.inputs[0]
        return LogSoftmax(p.owner.op.axis)(z), [z]
    index = p.owner
    if index is not None and isinstance(index.op, (Subtensor, AdvancedSubtensor, AdvancedSubtensor1)):
        sm = index.inputs[0]
        if sm.owner is not None and isinstance(sm.owner.op, Softmax):
            z = sm.owner.inputs[0]
            return index.op(LogSoftmax(sm.owner.op.axis)(z), *index.inputs[1:]), [z]
    return None


def _log_sigmoid(w, negate: bool, complement: bool):
    """``log(sigmoid(z))`` (``log(1 - sigmoid(z))`` if ``complement``), ``z = -w`` if ``negate``,
    as ``-softplus(-z)`` (``-softplus(z)``), with ``w`` the source the gradient flows to."""
    z = tm.neg(w) if negate else w
    return tm.neg(tm.softplus(z if complement else tm.neg(z))), [w]
