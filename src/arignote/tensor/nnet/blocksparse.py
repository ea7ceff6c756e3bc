"""Block-sparse products (Theano's ``tensor.nnet.blocksparse``).

A layer whose weight ``W`` is a grid of ``iBlocks x oBlocks`` matrices, of which each example
uses only a few: ``h[b]`` holds ``iWin`` input blocks (which ones: ``iIdx[b]``), and only
``oWin`` output blocks (``oIdx[b]``) are computed. ``SparseBlockGemv`` adds the products of
the selected blocks into ``o``; ``SparseBlockOuter``, its gradient with respect to ``W``, adds
the outer products of the selected pieces into the selected blocks. Both gather the blocks
with one fancy index and contract them with ``einsum`` (BLAS), one example at a time, so the
memory they take is one example's blocks. ``inplace=True`` writes into ``o`` (declared in
``destroy_map``); the in-place rewrite picks it where the destroy check allows.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable, user_variable
from arignote.scalar.dtypes import DISCRETE, FLOAT
from arignote.tensor.hostop import HostOp
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["SparseBlockGemv", "SparseBlockOuter", "sparse_block_gemv", "sparse_block_gemv_inplace",
           "sparse_block_outer", "sparse_block_outer_inplace", "sparse_block_dot"]


def _operand(x: Any, ndim: int, what: str, name: str, layout: str, kind: tuple) -> Variable:
    """``x`` as a tensor of ``ndim`` dimensions of a dtype in ``kind`` (floats or integers)."""
    x = as_tensor_variable(x)
    if x.ndim != ndim or x.dtype not in kind or x.dtype == "bool":
        kinds = "floats" if kind is FLOAT else "integer block indices"
        raise TypeError(f"{what}: {name} must be a {ndim}-d tensor of {kinds} ({layout}), got "
                        f"{x.describe()} ({x.type.describe()})")
    return x


def _check_blocks(node: Apply, idx: np.ndarray, i: int, n_blocks: int, what: str, axis: str) -> None:
    """Raise a ValueError naming input ``i`` when a block index is not in ``[0, n_blocks)``."""
    if idx.size and (idx.min() < 0 or idx.max() >= n_blocks):
        bad = idx[(idx < 0) | (idx >= n_blocks)].flat[0]
        raise ValueError(f"{what}: {user_variable(node.inputs[i]).describe()} holds the block index "
                         f"{bad}, but there are {n_blocks} {axis} blocks: each must be in "
                         f"0 .. {n_blocks - 1}")


def _check_shapes(what: str, got: tuple, want: tuple, names: str) -> None:
    if got != want:
        raise ValueError(f"{what}: the shapes of {names} do not agree: got {got}, expected {want} "
                         "(see the layouts in the op's docstring)")


class SparseBlockGemv(HostOp):
    """``o[b, j] + sum_i dot(h[b, i], W[iIdx[b, i], oIdx[b, j]])`` for each example ``b`` and
    output window ``j``. Layouts: ``o`` (batch, oWin, oSize), ``W`` (iBlocks, oBlocks, iSize,
    oSize), ``h`` (batch, iWin, iSize), ``iIdx`` (batch, iWin), ``oIdx`` (batch, oWin)."""

    __props__ = ("inplace",)
    what = "sparse_block_gemv"

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def make_node(self, o: Any, W: Any, h: Any, inputIdx: Any, outputIdx: Any) -> Apply:
        o = _operand(o, 3, self.what, "o", "batch, oWin, oSize", FLOAT)
        W = _operand(W, 4, self.what, "W", "iBlocks, oBlocks, iSize, oSize", FLOAT)
        h = _operand(h, 3, self.what, "h", "batch, iWin, iSize", FLOAT)
        inputIdx = _operand(inputIdx, 2, self.what, "inputIdx", "batch, iWin", DISCRETE)
        outputIdx = _operand(outputIdx, 2, self.what, "outputIdx", "batch, oWin", DISCRETE)
        return Apply(self, [o, W, h, inputIdx, outputIdx], [o.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        o, W, h, iIdx, oIdx = inputs
        batch, o_win, o_size = o.shape
        i_blocks, o_blocks, i_size, _ = W.shape
        _check_shapes(self.what, (h.shape[0], iIdx.shape, oIdx.shape, W.shape[3]),
                      (batch, h.shape[:2], (batch, o_win), o_size), "o, W, h, inputIdx, outputIdx")
        _check_shapes(self.what, (h.shape[2],), (i_size,), "h and W (iSize)")
        _check_blocks(node, iIdx, 3, i_blocks, self.what, "input")
        _check_blocks(node, oIdx, 4, o_blocks, self.what, "output")
        out = o if self.inplace else o.copy()
        for b in range(batch):
            blocks = W[iIdx[b][:, None], oIdx[b][None, :]]  # (iWin, oWin, iSize, oSize)
            out[b] += np.einsum("is,ijst->jt", h[b], blocks, optimize=True).astype(out.dtype, copy=False)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class SparseBlockOuter(HostOp):
    """``o[xIdx[b, i], yIdx[b, j]] + alpha * outer(x[b, i], y[b, j])``, summed over every
    example ``b`` and window pair ``(i, j)`` (a block chosen twice gets both terms).
    Layouts: ``o`` (xBlocks, yBlocks, xSize, ySize), ``x`` (batch, xWin, xSize), ``y``
    (batch, yWin, ySize), ``xIdx`` (batch, xWin), ``yIdx`` (batch, yWin); ``alpha`` a scalar,
    1 by default."""

    __props__ = ("inplace",)
    what = "sparse_block_outer"

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def make_node(self, o: Any, x: Any, y: Any, xIdx: Any, yIdx: Any, alpha: Any = None) -> Apply:
        o = _operand(o, 4, self.what, "o", "xBlocks, yBlocks, xSize, ySize", FLOAT)
        x = _operand(x, 3, self.what, "x", "batch, xWin, xSize", FLOAT)
        y = _operand(y, 3, self.what, "y", "batch, yWin, ySize", FLOAT)
        xIdx = _operand(xIdx, 2, self.what, "xIdx", "batch, xWin", DISCRETE)
        yIdx = _operand(yIdx, 2, self.what, "yIdx", "batch, yWin", DISCRETE)
        alpha = constant(np.asarray(1, dtype=o.dtype)) if alpha is None else _operand(
            alpha, 0, self.what, "alpha", "a scalar", FLOAT)
        return Apply(self, [o, x, y, xIdx, yIdx, alpha], [o.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        o, x, y, xIdx, yIdx, alpha = inputs
        x_blocks, y_blocks, x_size, y_size = o.shape
        _check_shapes(self.what, (x.shape[2], y.shape[2], y.shape[0], xIdx.shape, yIdx.shape),
                      (x_size, y_size, x.shape[0], x.shape[:2], y.shape[:2]), "o, x, y, xIdx, yIdx")
        _check_blocks(node, xIdx, 3, x_blocks, self.what, "x")
        _check_blocks(node, yIdx, 4, y_blocks, self.what, "y")
        out = o if self.inplace else o.copy()
        for b in range(x.shape[0]):
            pieces = np.einsum("is,jt->ijst", x[b] * alpha, y[b]).astype(out.dtype, copy=False)
            np.add.at(out, (xIdx[b][:, None], yIdx[b][None, :]), pieces)  # repeated blocks add up
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


sparse_block_gemv = SparseBlockGemv(False)
sparse_block_gemv_inplace = SparseBlockGemv(True)
sparse_block_outer = SparseBlockOuter(False)
sparse_block_outer_inplace = SparseBlockOuter(True)


def sparse_block_dot(W: Any, h: Any, inputIdx: Any, b: Any, outputIdx: Any) -> Variable:
    """The selected output blocks ``b[oIdx[n, j]] + sum_i dot(h[n, i], W[iIdx[n, i], oIdx[n, j]])``
    (the bias added once per output block), shape (batch, oWin, oSize). ``h`` may be a matrix
    (iWin, iSize) with index vectors: one example, and the result has a batch of one."""
    W, h, b = (as_tensor_variable(v) for v in (W, h, b))
    inputIdx, outputIdx = as_tensor_variable(inputIdx), as_tensor_variable(outputIdx)
    if h.ndim not in (2, 3) or inputIdx.ndim != h.ndim - 1 or outputIdx.ndim != inputIdx.ndim:
        raise TypeError(f"sparse_block_dot: h must be (batch, iWin, iSize) with index matrices "
                        f"(batch, iWin) and (batch, oWin), or one example (iWin, iSize) with index "
                        f"vectors; got h {h.type.describe()}, inputIdx {inputIdx.type.describe()}, "
                        f"outputIdx {outputIdx.type.describe()}")
    if h.ndim == 2:
        h = h.dimshuffle("x", 0, 1)
        inputIdx, outputIdx = inputIdx.dimshuffle("x", 0), outputIdx.dimshuffle("x", 0)
    return sparse_block_gemv(b.take(outputIdx, axis=0), W, h, inputIdx, outputIdx)
