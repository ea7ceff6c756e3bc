"""Gradients of softmax and log_softmax, of Theano's compound nnet ops, and stable
gradients of the log-losses.

Neither softmax rule divides by a softmax, so saturated (0 or 1) probabilities
give finite gradients. ``log(sigmoid(z))``, ``log(1 - sigmoid(z))`` (the sigmoid
also written out, as ``1 / (1 + exp(-z))``: ``rewrites.utils.sigmoid_argument``) and
``log(softmax(z))`` (also of an indexed softmax, as in the class-index form of
categorical_crossentropy, and ``CrossentropyCategorical1Hot`` of a softmax) are
differentiated as ``-softplus(-z)``, ``-softplus(z)`` and ``log_softmax(z)``: the textbook
chain would multiply an infinite ``1 / p`` by a zero derivative where ``p`` rounds to 0 or 1.
A softmax is any form ``nnet.softmax_logits`` reads (the op, ``SoftmaxWithBias``, the
written-out ``exp(z) / sum(exp(z))``, which is itself differentiated as ``softmax(z)``).
"""
from __future__ import annotations


from arignote.gradient import register_grad, register_stable_form
from arignote.tensor import math as tm
from arignote.tensor.nnet import basic as _nnet
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.grad.elemwise import c, rule
from arignote.tensor.nnet import LogSoftmax, Softmax
from arignote.tensor.nnet.compound import (CrossentropyCategorical1Hot, CrossentropySoftmax1HotWithBiasDx,
                                           CrossentropySoftmaxArgmax1HotWithBias, SoftmaxGrad,
                                           LOWERED, SoftmaxWithBias, crossentropy_categorical_1hot_grad,
                                           crossentropy_softmax_1hot_with_bias_dx, one_hot_rows,
                                           softmax_backward)
from arignote.tensor.nnet.prepend import Prepend_scalar_constant_to_each_row, Prepend_scalar_to_each_row
from arignote.tensor.shape import shape_padright
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.rewrites.utils import is_scalar_constant, op_name, sigmoid_argument
from arignote.tensor.subtensor import AdvancedSubtensor, AdvancedSubtensor1, Subtensor


@register_grad(Softmax)
def softmax_grad(op, inputs, outputs, output_grads):
    return [softmax_backward(output_grads[0], outputs[0], op.axis)]


# ------------------------------------------------- Theano's compound ops (nnet.compound)
@register_grad(SoftmaxWithBias)
def _softmax_with_bias(op, inputs, outputs, output_grads):
    dx = softmax_backward(output_grads[0], outputs[0], 1)
    return [dx, _sum(dx, 0)]


@register_grad(SoftmaxGrad)
def _softmax_grad_op(op, inputs, outputs, output_grads):
    """dx = dy*sm - s*sm with s = sum(dy*sm): linear in dy (the same map, applied to g), and
    d/dsm = g*dy - g*s - sum(g*sm)*dy."""
    dy, sm = inputs
    g = output_grads[0]
    s = _sum(dy * sm, op.axis, keepdims=True)
    return [softmax_backward(g, sm, op.axis), g * dy - g * s - _sum(g * sm, op.axis, keepdims=True) * dy]


@register_grad(CrossentropySoftmaxArgmax1HotWithBias)
def _crossentropy_softmax_argmax(op, inputs, outputs, output_grads):
    g_nll, g_sm = output_grads[:2]
    y_idx, sm = inputs[2], outputs[1]
    dx = crossentropy_softmax_1hot_with_bias_dx(g_nll, sm, y_idx) + softmax_backward(g_sm, sm, 1)
    return [dx, _sum(dx, 0), None]


@register_grad(CrossentropySoftmax1HotWithBiasDx)
def _crossentropy_softmax_dx(op, inputs, outputs, output_grads):
    """dx = dy[:, None] * (sm - onehot(y)): linear in dy and in sm."""
    dy, sm, y_idx = inputs
    g = output_grads[0]
    per_row = _sum(g * (sm - one_hot_rows(y_idx, sm)), 1)
    g_dy = per_row if dy.ndim == 1 else _sum(per_row)
    return [g_dy, (shape_padright(dy) if dy.ndim == 1 else dy) * g, None]


@register_grad(CrossentropyCategorical1Hot)
def _crossentropy_categorical_1hot(op, inputs, outputs, output_grads):
    coding, y = inputs
    return [crossentropy_categorical_1hot_grad(output_grads[0], coding, y), None]


# ---------------------------------------------------------- Theano's prepend ops
@register_grad(Prepend_scalar_constant_to_each_row)
def _prepend_constant(op, inputs, outputs, output_grads):
    return [output_grads[0][:, 1:]]


@register_grad(Prepend_scalar_to_each_row)
def _prepend_scalar(op, inputs, outputs, output_grads):
    g = output_grads[0]
    return [_sum(g[:, 0]), g[:, 1:]]


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
    if node.op.scalar_op.name != "log":
        return None
    logits = _nnet.softmax_logits(p)
    if logits is not None:
        return _nnet.stable_log(p), logits.sources
    index = p.owner
    if index is not None and isinstance(index.op, (Subtensor, AdvancedSubtensor, AdvancedSubtensor1)):
        logits = _nnet.softmax_logits(index.inputs[0])
        if logits is not None:
            return index.op(_nnet.stable_log(index.inputs[0]), *index.inputs[1:]), logits.sources
    return None


@register_stable_form
def _written_out_softmax(node):
    """``exp(w) / sum(exp(w))`` as ``softmax(w)``: its textbook gradient reads ``exp(w)``,
    which overflows for large logits."""
    logits = _nnet.exp_ratio_logits(node.outputs[0])
    if logits is None:
        return None
    return Softmax(logits.axis)(logits.z), logits.sources


@register_stable_form
def _crossentropy_of_softmax(node):
    """``CrossentropyCategorical1Hot`` of a softmax (in any form) as ``-log_softmax(z)`` at the
    labels: the op's own gradient divides by the probability, ``inf`` where it underflowed."""
    if not isinstance(node.op, CrossentropyCategorical1Hot):
        return None
    logits = _nnet.softmax_logits(node.inputs[0])
    if logits is None:
        return None
    return LOWERED[CrossentropyCategorical1Hot](node)[0], logits.sources


def _log_sigmoid(w, negate: bool, complement: bool):
    """``log(sigmoid(z))`` (``log(1 - sigmoid(z))`` if ``complement``), ``z = -w`` if ``negate``,
    as ``-softplus(-z)`` (``-softplus(z)``), with ``w`` the source the gradient flows to."""
    z = tm.neg(w) if negate else w
    return tm.neg(tm.softplus(z if complement else tm.neg(z))), [w]
