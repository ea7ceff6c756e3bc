"""Gradients of ``tensor/extra_ops.py`` and ``tensor/sort.py``.

``cumsum`` sends back the reversed cumulative sum of its output gradient;
``cumprod`` Theano's formula (which divides by the input, so it is NaN where
an input is 0); ``diff`` the adjoint difference; ``sort`` puts each output
gradient at the position its value came from, and ``topk`` each of its values'
gradients at that value's position (zeros elsewhere); ``fill_diagonal`` zeros the
filled entries' gradients and sums them for the value; ``bincount`` gathers
the weights' gradients. Integer-valued ops (``argsort``, ``searchsorted``,
``unravel_index``, ...) pass no gradient back, so they need no rule.
"""
from __future__ import annotations

from arignote.gradient import grad_undefined, register_grad
from arignote.graph.basic import Constant
from arignote.tensor import math as tm
from arignote.tensor.alloc import arange, zeros, zeros_like
from arignote.tensor.diagonal import ExtractDiag
from arignote.tensor.extra_ops import (Bartlett, BinCount, CpuContiguous, CumOp, DiffOp, FillDiagonal,
                                       FillDiagonalOffset, cumsum, fill_diagonal, fill_diagonal_offset,
                                       take_along_axis)
from arignote.tensor.join import concatenate
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.shape import reshape, shape_i
from arignote.tensor.shape import shape as _shape
from arignote.tensor.sort import SortOp, TopKOp, argsort
from arignote.tensor.type_other import NoneTypeT
from arignote.tensor.subtensor import AdvancedSubtensor1, inc_subtensor


def _reversed(x, axis):
    index = [slice(None)] * x.ndim
    index[axis] = slice(None, None, -1)
    return x[tuple(index)]


@register_grad(CpuContiguous)
def cpu_contiguous_grad(op, inputs, outputs, output_grads):
    return [output_grads[0]]


@register_grad(CumOp)
def cum_grad(op, inputs, outputs, output_grads):
    x, g = inputs[0], output_grads[0]
    if op.mode == "mul":
        g = g * op.__class__(op.axis, "mul")(x)
    if op.axis is None:
        total = reshape(_reversed(cumsum(_reversed(g, 0)), 0), _shape(x), ndim=x.ndim)
    else:
        total = _reversed(cumsum(_reversed(g, op.axis), op.axis), op.axis)
    return [total / x if op.mode == "mul" else total]


@register_grad(DiffOp)
def diff_grad(op, inputs, outputs, output_grads):
    """Each differencing step's adjoint: ``[0, g] - [g, 0]`` along the axis."""
    g = output_grads[0]
    axis = op.axis % g.ndim
    for _ in range(op.n):
        pad = zeros([1 if d == axis else shape_i(g, d) for d in range(g.ndim)], dtype=g.dtype)
        g = concatenate([pad, g], axis=axis) - concatenate([g, pad], axis=axis)
    return [g]


@register_grad(BinCount)
def bincount_grad(op, inputs, outputs, output_grads):
    if len(inputs) < 3:
        return [None, None]
    return [None, None, AdvancedSubtensor1()(output_grads[0], tm.cast(inputs[0], "int64"))]


@register_grad(FillDiagonal)
def fill_diagonal_grad(op, inputs, outputs, output_grads):
    a, g = inputs[0], output_grads[0]
    if a.ndim == 2:
        on_diagonal = ExtractDiag()(g)
    else:
        k = arange(shape_i(g, 0), dtype="int64")
        on_diagonal = g[(k,) * g.ndim]
    return [fill_diagonal(g, 0), _sum(on_diagonal)]


@register_grad(FillDiagonalOffset)
def fill_diagonal_offset_grad(op, inputs, outputs, output_grads):
    _, _, offset = inputs
    g = output_grads[0]
    height, width = shape_i(g, 0), shape_i(g, 1)
    offset = tm.cast(offset, "int64")
    above = tm.ge(offset, 0)
    start = tm.switch(above, offset, -offset * width)
    count = tm.maximum(tm.minimum(height - tm.maximum(-offset, 0), width - tm.maximum(offset, 0)), 0)
    step = width + 1
    on_diagonal = g.flatten()[start:start + step * count:step]
    return [fill_diagonal_offset(g, 0, inputs[2]), _sum(on_diagonal),
            grad_undefined(op, 2, inputs[2], "the offset is an integer")]


@register_grad(Bartlett)
def bartlett_grad(op, inputs, outputs, output_grads):
    return [None]


@register_grad(TopKOp)
def topk_grad(op, inputs, outputs, output_grads):
    x, kth = inputs
    if not op.return_values:  # the positions alone are integers: nothing flows back
        return [None, None]
    if op.return_indices:
        positions = outputs[1]
    else:
        positions = TopKOp(op.axis, op.sorted, op.idx_dtype, False, True)(x, kth)
    axis = op.axis % x.ndim
    index = tuple(positions if d == axis else
                  arange(shape_i(x, d)).dimshuffle(*(["x"] * d), 0, *(["x"] * (x.ndim - d - 1)))
                  for d in range(x.ndim))
    return [inc_subtensor(zeros_like(x)[index], output_grads[0]), None]


@register_grad(SortOp)
def sort_grad(op, inputs, outputs, output_grads):
    """Entry i of the input went to position rank[i] = argsort(argsort(x))[i]."""
    x, axis = inputs
    g = output_grads[0]
    if isinstance(axis.type, NoneTypeT):
        rank = argsort(argsort(x.flatten(), kind="stable"), kind="stable")
        return [reshape(AdvancedSubtensor1()(g, rank), _shape(x), ndim=x.ndim), None]
    rank = argsort(argsort(x, axis, kind="stable"), axis, kind="stable")
    if isinstance(axis, Constant):
        return [take_along_axis(g, rank, int(axis.data)), None]
    # A symbolic axis: gather with the rank on that axis and plain positions on the others.
    axis = tm.switch(tm.lt(axis, 0), axis + x.ndim, axis)
    index = tuple(tm.switch(tm.eq(axis, d), rank, arange(shape_i(x, d)).dimshuffle(
        *(["x"] * d), 0, *(["x"] * (x.ndim - d - 1)))) for d in range(x.ndim))
    return [g[index], None]
