"""Gradients of the nnet scalar ops defined outside the scalar table: softsign and the
sigmoid cross-entropy of logits (exactly ``sigmoid(x) - target``, zero logits included)."""
from __future__ import annotations

from arignote.tensor import math as tm
from arignote.tensor.grad.elemwise import c, rule


@rule("softsign")
def _softsign(inputs, out, gz):
    x = inputs[0]
    return [gz / tm.sqr(c(1, x) + tm.abs(x))]


@rule("sigmoid_binary_crossentropy")
def _sigmoid_binary_crossentropy(inputs, out, gz):
    output, target = inputs
    return [gz * (tm.sigmoid(output) - target), gz * tm.neg(output)]
