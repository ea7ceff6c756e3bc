"""Gradients of the dot family: Dot, TensorDot, MatMul, BatchedTensordot.

Each is a contraction, so each gradient is another contraction of the
output gradient with the other operand, followed by a transpose that puts
the axes back in the operand's order. ``outer`` is a Dot of DimShuffles.
"""
from __future__ import annotations

from collections.abc import Sequence

from arignote.gradient import register_grad
from arignote.tensor.blas import BatchedTensordot, Dot, MatMul, TensorDot, matmul
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.reduction import sum as _sum


def _transpose_to(var, labels: Sequence[int]):
    """``var``, whose axis k is axis ``labels[k]`` of the target, in the target's order."""
    order = [labels.index(axis) for axis in range(len(labels))]
    if order == list(range(len(order))):
        return var
    return DimShuffle(var.broadcastable, order)(var)


def _contraction_grads(a, b, gz, a_axes: Sequence[int], b_axes: Sequence[int], first: int, make):
    """Gradients of ``make(a, b, axes)``: ``first`` leading axes (the batch) are shared.

    The output holds the batch axes, then a's free axes, then b's free axes.
    """
    a_free = [i for i in range(first, a.ndim) if i not in a_axes]
    b_free = [j for j in range(first, b.ndim) if j not in b_axes]
    batch = list(range(first))
    gz_b = list(range(first + len(a_free), gz.ndim))   # gz's axes of b's free axes
    gz_a = list(range(first, first + len(a_free)))     # gz's axes of a's free axes
    # ga: contract gz's b-free axes with b's free axes; what is left of b is b_axes, in b's order.
    ga = make(gz, b, (gz_b, b_free))
    a_labels = batch + a_free + [a_axes[b_axes.index(j)] for j in sorted(b_axes)]
    gb = make(a, gz, (a_free, gz_a))
    b_labels = batch + [b_axes[a_axes.index(i)] for i in sorted(a_axes)] + b_free
    return [_transpose_to(ga, a_labels), _transpose_to(gb, b_labels)]


def _tensordot(x, y, axes):
    return TensorDot((tuple(axes[0]), tuple(axes[1])))(x, y)


def _batched(x, y, axes):
    """BatchedTensordot, also when an operand has nothing but its batch axis.

    Such an operand gets a length-1 free axis, dropped again from the result.
    """
    pads = [x.ndim == 1, y.ndim == 1]
    if pads[0]:
        x = x.dimshuffle(0, "x")
    if pads[1]:
        y = y.dimshuffle(0, "x")
    out = BatchedTensordot((tuple(axes[0]), tuple(axes[1])))(x, y)
    x_free = x.ndim - 1 - len(axes[0])
    drop = ([x_free] if pads[0] else []) + ([out.ndim - 1] if pads[1] else [])
    if not drop:
        return out
    return DimShuffle(out.broadcastable, [k for k in range(out.ndim) if k not in drop])(out)


@register_grad(TensorDot)
def tensordot_grad(op, inputs, outputs, output_grads):
    a, b = inputs
    return _contraction_grads(a, b, output_grads[0], list(op.axes[0]), list(op.axes[1]), 0,
                              _tensordot)


@register_grad(Dot)
def dot_grad(op, inputs, outputs, output_grads):
    # numpy.dot is tensordot over a's last axis and b's second-to-last (its only one for a vector).
    a, b = inputs
    gz = output_grads[0]
    if a.ndim <= 2 and b.ndim <= 2:
        return _matrix_dot_grads(a, b, gz)
    b_axis = b.ndim - 2 if b.ndim > 1 else 0
    return _contraction_grads(a, b, gz, [a.ndim - 1], [b_axis], 0, _tensordot)


def _matrix_dot_grads(a, b, gz):
    """Vector and matrix products: Dots of transposed views, which BLAS reads without a copy."""
    if a.ndim == 1 and b.ndim == 1:
        return [gz * b, gz * a]
    if a.ndim == 2 and b.ndim == 2:
        return [Dot()(gz, b.T), Dot()(a.T, gz)]
    if a.ndim == 1:  # (k,) . (k, n): gz is (n,)
        return [Dot()(b, gz), Dot()(a.dimshuffle(0, "x"), gz.dimshuffle("x", 0))]
    # (m, k) . (k,): gz is (m,)
    return [Dot()(gz.dimshuffle(0, "x"), b.dimshuffle("x", 0)), Dot()(a.T, gz)]


@register_grad(BatchedTensordot)
def batched_tensordot_grad(op, inputs, outputs, output_grads):
    a, b = inputs
    return _contraction_grads(a, b, output_grads[0], list(op.axes[0]), list(op.axes[1]), 1,
                              _batched)


@register_grad(MatMul)
def matmul_grad(op, inputs, outputs, output_grads):
    """Vectors act as matrices (a row for ``a``, a column for ``b``); batch axes that
    were broadcast (missing, or of length 1) are summed away."""
    a, b, gz = inputs[0], inputs[1], output_grads[0]
    a2 = a.dimshuffle("x", 0) if a.ndim == 1 else a
    b2 = b.dimshuffle(0, "x") if b.ndim == 1 else b
    if a.ndim == 1:
        gz = _insert_axis(gz, gz.ndim - (1 if b.ndim > 1 else 0))
    if b.ndim == 1:
        gz = _insert_axis(gz, gz.ndim)
    ga = matmul(gz, _swap_last(b2))
    gb = matmul(_swap_last(a2), gz)
    ga, gb = _unbatch(ga, a2), _unbatch(gb, b2)
    if a.ndim == 1:
        ga = DimShuffle(ga.broadcastable, [1])(ga)
    if b.ndim == 1:
        gb = DimShuffle(gb.broadcastable, [0])(gb)
    return [ga, gb]


def _insert_axis(var, at: int):
    order: list = list(range(var.ndim))
    order.insert(at, "x")
    return DimShuffle(var.broadcastable, order)(var)


def _swap_last(var):
    order = list(range(var.ndim))
    order[-2], order[-1] = order[-1], order[-2]
    return DimShuffle(var.broadcastable, order)(var)


def _unbatch(g, x):
    """``g`` summed over the batch axes ``x`` did not have or broadcast along."""
    extra = g.ndim - x.ndim
    if extra:
        g = _sum(g, list(range(extra)))
    axes = [d for d in range(x.ndim - 2) if x.broadcastable[d] and not g.broadcastable[d]]
    if axes:
        g = _sum(g, axes, keepdims=True)
    # A vector operand's added axis has length 1; make its gradient know it, to drop it.
    for d in range(x.ndim - 2, x.ndim):
        if x.broadcastable[d] and not g.broadcastable[d]:
            g = _sum(g, [d], keepdims=True)
    return g
