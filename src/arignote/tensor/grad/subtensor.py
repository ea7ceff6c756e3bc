"""Gradients of indexing: reading scatters the gradient back, writing gathers it.

``x[idx]`` sends its gradient into zeros of ``x``'s shape at ``idx`` (adding
where an index repeats). ``inc_subtensor(x[idx], y)`` passes ``x`` the whole
gradient and ``y`` the gradient at ``idx``; ``set_subtensor`` does the same
except that ``x`` gets zero where it was overwritten. ``y``'s gradient is
summed over the dimensions it was broadcast along.
"""
from __future__ import annotations

import numpy as np

from arignote.gradient import register_grad
from arignote.tensor.alloc import zeros_like
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.subtensor import (AdvancedIncSubtensor, AdvancedIncSubtensor1,
                                       AdvancedSubtensor, AdvancedSubtensor1, IncSubtensor,
                                       Subtensor)
from arignote.tensor.variable import constant


@register_grad(Subtensor)
def subtensor_grad(op, inputs, outputs, output_grads):
    x, entries = inputs[0], inputs[1:]
    return [IncSubtensor(op.idx_list)(zeros_like(x), output_grads[0], *entries)] + [None] * len(entries)


@register_grad(AdvancedSubtensor)
def advanced_subtensor_grad(op, inputs, outputs, output_grads):
    x, entries = inputs[0], inputs[1:]
    scattered = AdvancedIncSubtensor(op.idx_list)(zeros_like(x), output_grads[0], *entries)
    return [scattered] + [None] * len(entries)


@register_grad(AdvancedSubtensor1)
def advanced_subtensor1_grad(op, inputs, outputs, output_grads):
    x, ilist = inputs
    return [AdvancedIncSubtensor1()(zeros_like(x), output_grads[0], ilist), None]


@register_grad(IncSubtensor, AdvancedIncSubtensor)
def inc_subtensor_grad(op, inputs, outputs, output_grads):
    y, entries = inputs[1], inputs[2:]
    gz = output_grads[0]
    read = (Subtensor if isinstance(op, IncSubtensor) else AdvancedSubtensor)(op.idx_list)
    gx = gz
    if op.set_instead_of_inc:
        gx = type(op)(op.idx_list, set_instead_of_inc=True)(gz, _zero(gz), *entries)
    return [gx, _to_value_shape(read(gz, *entries), y)] + [None] * len(entries)


@register_grad(AdvancedIncSubtensor1)
def advanced_inc_subtensor1_grad(op, inputs, outputs, output_grads):
    x, y, ilist = inputs
    gz = output_grads[0]
    gx = AdvancedIncSubtensor1(set_instead_of_inc=True)(gz, _zero(gz), ilist) if op.set_instead_of_inc else gz
    return [gx, _to_value_shape(AdvancedSubtensor1()(gz, ilist), y), None]


def _zero(like):
    return constant(np.zeros((), dtype=like.dtype))


def _to_value_shape(g, y):
    """The indexed gradient ``g`` summed over the leading axes ``y`` was broadcast to."""
    extra = g.ndim - y.ndim
    return _sum(g, list(range(extra))) if extra else g
