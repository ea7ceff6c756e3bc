"""Gradients of the block-sparse products: each is the other op on the same block indices
(the gradient of a gemv with respect to ``W`` is an outer product into zeros, with respect to
``h`` a gemv through the transposed blocks), so they stay block-sparse to any order."""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.tensor.alloc import zeros_like
from arignote.tensor.nnet.blocksparse import (SparseBlockGemv, SparseBlockOuter, sparse_block_gemv,
                                              sparse_block_outer)
from arignote.tensor.reduction import sum as _sum


@register_grad(SparseBlockGemv)
def _sparse_block_gemv(op, inputs, outputs, output_grads):
    o, W, h, i_idx, o_idx = inputs
    go = output_grads[0]
    g_W = sparse_block_outer(zeros_like(W), h, go, i_idx, o_idx)
    g_h = sparse_block_gemv(zeros_like(h), W.dimshuffle(1, 0, 3, 2), go, o_idx, i_idx)
    return [go, g_W, g_h, None, None]


@register_grad(SparseBlockOuter)
def _sparse_block_outer(op, inputs, outputs, output_grads):
    o, x, y, x_idx, y_idx, alpha = inputs
    go = output_grads[0]
    g_x = sparse_block_gemv(zeros_like(x), go.dimshuffle(1, 0, 3, 2), y, y_idx, x_idx)
    g_y_unscaled = sparse_block_gemv(zeros_like(y), go, x, x_idx, y_idx)
    return [go, g_x * alpha, g_y_unscaled * alpha, None, None, _sum(g_y_unscaled * y)]
