"""Gradients of the allocating ops: Alloc sums back to the value's shape; ARange
differentiates in its start and step; Eye, Tri and AllocEmpty have nothing to differentiate.

``fill``/``second`` and ``zeros_like`` are Elemwise ops, whose rule is in
``elemwise.py``.
"""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.tensor import math as tm
from arignote.tensor.alloc import Alloc, AllocEmpty, ARange, Eye, Tri, arange
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.shape import shape_i


@register_grad(Alloc)
def alloc_grad(op, inputs, outputs, output_grads):
    """The value was broadcast to the shape: sum over the axes it was added or broadcast along."""
    value, dims = inputs[0], inputs[1:]
    gz = output_grads[0]
    extra = gz.ndim - value.ndim
    g = _sum(gz, list(range(extra))) if extra else gz
    axes = [d for d in range(value.ndim) if value.broadcastable[d] and not g.broadcastable[d]]
    if axes:
        g = _sum(g, axes, keepdims=True)
    return [g] + [None] * len(dims)


@register_grad(ARange)
def arange_grad(op, inputs, outputs, output_grads):
    """``start + k * step`` for k < n: the length n does not vary smoothly, so stop gets none."""
    gz = output_grads[0]
    positions = tm.cast(arange(shape_i(gz, 0), dtype="int64"), gz.dtype)
    return [_sum(gz), None, _sum(gz * positions)]


@register_grad(Eye, Tri)
def eye_grad(op, inputs, outputs, output_grads):
    return [None, None, None]


@register_grad(AllocEmpty)
def alloc_empty_grad(op, inputs, outputs, output_grads):
    return [None] * len(inputs)
