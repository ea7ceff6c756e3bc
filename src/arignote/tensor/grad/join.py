"""Gradients of Join, MakeVector, Split, Repeat and Roll."""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.tensor import math as tm
from arignote.tensor.alloc import arange, zeros_like
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.join import Join, MakeVector, Repeat, Roll, Split, stack
from arignote.tensor.shape import flatten, reshape, shape_i
from arignote.tensor.shape import shape as _shape
from arignote.tensor.subtensor import AdvancedIncSubtensor1


@register_grad(Join)
def join_grad(op, inputs, outputs, output_grads):
    """Each input gets its own stretch of the output gradient (the axis gets none)."""
    axis, tensors = inputs[0], inputs[1:]
    known = op.static_axis(outputs[0].owner)
    if known is None:
        along = tm.cast(axis, "int64") % outputs[0].ndim
        sizes = [stack([shape_i(x, d) for d in range(x.ndim)])[along] for x in tensors]
    else:
        sizes = [shape_i(x, known) for x in tensors]
    pieces = Split(len(tensors))(output_grads[0], axis, sizes)
    return [None] + (list(pieces) if len(tensors) > 1 else [pieces])


@register_grad(Split)
def split_grad(op, inputs, outputs, output_grads):
    x, axis, _ = inputs
    gz = Join()(axis, *output_grads) if len(output_grads) > 1 else output_grads[0]
    return [gz, None, None]


@register_grad(MakeVector)
def make_vector_grad(op, inputs, outputs, output_grads):
    """Each scalar gets its entry of the output gradient."""
    return [output_grads[0][k] for k in range(len(inputs))]


@register_grad(Repeat)
def repeat_grad(op, inputs, outputs, output_grads):
    """Each element collects the gradients of its copies: an indexed sum."""
    x, repeats = inputs
    gz = output_grads[0]
    if op.axis is None:
        flat_x = flatten(x)
        owner = Repeat(0)(arange(shape_i(flat_x, 0), dtype="int64"), repeats)
        flat_g = AdvancedIncSubtensor1()(zeros_like(flat_x), gz, owner)
        return [reshape(flat_g, _shape(x), ndim=x.ndim), None]
    axis = op.axis_of(x)
    order = [axis] + [d for d in range(x.ndim) if d != axis]
    back = [order.index(d) for d in range(x.ndim)]
    moved_x = DimShuffle(x.broadcastable, order)(x)
    moved_g = DimShuffle(gz.broadcastable, order)(gz)
    owner = Repeat(0)(arange(shape_i(x, axis), dtype="int64"), repeats)
    total = AdvancedIncSubtensor1()(zeros_like(moved_x), moved_g, owner)
    return [DimShuffle(total.broadcastable, back)(total), None]


@register_grad(Roll)
def roll_grad(op, inputs, outputs, output_grads):
    shift = tm.neg(tm.cast(inputs[1], "int64"))
    return [Roll(op.axis)(output_grads[0], shift), None]
