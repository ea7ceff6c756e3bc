"""Matrix products beyond GpuDot's vectors and matrices: numpy.dot of any rank,
numpy.matmul with broadcast batches, and BLAS's Gemm.

All run the one GEMM kernel of ``render.py`` (tiled; its row form on a CPU device)
with its batch dimension: each product is a stack of ``C = alpha * A @ B + beta * C``
over matrix views, whose batch strides are 0 where an operand is shared or broadcast. (cuBLAS
serves GpuDot's single products on CUDA; these use the kernel on both runtimes.)
"""
from __future__ import annotations

import math
from typing import NamedTuple
from collections.abc import Callable

import numpy as np

from arignote.backends.gpu.array import GpuArray, c_strides
from arignote.backends.gpu.context import GpuContext
from arignote.backends.gpu.ops import GpuDot, GpuOp, HostNames, _kernels, gemm_kernel, launch_gemm_kernel
from arignote.backends.gpu.placement import _check_dot, _check_dtypes, register_lowering
from arignote.backends.gpu.type import context_of
from arignote.graph.basic import Apply, Variable
from arignote.tensor.blas import Dot, MatMul, TensorDot, _mismatch
from arignote.tensor.gemm import Gemm, Gemv


class Batch(NamedTuple):
    length: int
    a: int  # element strides of each operand along this batch dimension (0: shared)
    b: int
    c: int


def launch_gemm(node: Apply, c: GpuArray, a: GpuArray, b: GpuArray, batch: list[Batch],
                alpha: float = 1, beta: float = 0) -> None:
    """``c = alpha * a @ b + beta * c`` for 2-d views, once per batch index."""
    m, n = c.shape
    count = math.prod(d.length for d in batch)
    if not (m and n and count):
        return
    ctx = c.context
    memo = _kernels(node)
    key = ("gemm", len(batch))
    if key not in memo:
        memo[key] = ctx.kernel(gemm_kernel(ctx, c.dtype.name, len(batch)))
    args = [c.buffer, np.int64(c.offset), np.int64(c.strides[0]), np.int64(c.strides[1])]
    for x in (a, b):
        args += [x.buffer, np.int64(x.offset), np.int64(x.strides[0]), np.int64(x.strides[1])]
    args += [np.int64(m), np.int64(n), np.int64(a.shape[1]), c.dtype.type(alpha), c.dtype.type(beta)]
    for d in batch:
        args += [np.int64(d.length), np.int64(d.a), np.int64(d.b), np.int64(d.c)]
    launch_gemm_kernel(ctx, memo[key], m, n, count, args)


def _matrix(x: GpuArray, vector_as_row: bool) -> GpuArray:
    """The last two axes of ``x`` as a matrix view; a vector as a 1-row or 1-column one."""
    if x.ndim == 1:
        shape, strides = ((1, x.shape[0]), (0, x.strides[0])) if vector_as_row else \
            ((x.shape[0], 1), (x.strides[0], 0))
        return x.view(shape, strides, x.offset)
    return x.view(x.shape[-2:], x.strides[-2:], x.offset)


class GpuMatMul(GpuOp):
    """numpy.matmul: batched over the broadcast leading axes in one launch."""

    def gpu_kernels(self, node: Apply) -> list:
        a, b = node.inputs
        return _gemm_kernels(node, max(a.type.ndim, b.type.ndim, 2) - 2)

    def make_node(self, a: Variable, b: Variable, out_type) -> Apply:
        return Apply(self, [a, b], [self.out_type(out_type.dtype, out_type.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b = inputs
        a2, b2 = _matrix(a, True), _matrix(b, False)
        batch_a, batch_b = a.shape[:-2], b.shape[:-2]
        try:
            if a2.shape[1] != b2.shape[0]:
                raise ValueError
            batch = np.broadcast_shapes(batch_a, batch_b)
        except ValueError:
            raise _mismatch("matmul", HostNames(node), a, b, a.ndim - 1, max(b.ndim - 2, 0),
                            "; the batch dimensions must match or be 1") from None
        full = batch + (a2.shape[0], b2.shape[1])
        shape = batch + (a.shape[-2:-1] if a.ndim > 1 else ()) + (b.shape[-1:] if b.ndim > 1 else ())
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, shape, np.dtype(node.outputs[0].type.dtype))
        strides = c_strides(full)
        c2 = out.view(full[-2:], strides[-2:], out.offset)
        dims = []
        for k, length in enumerate(batch):
            dims.append(Batch(length, _batch_stride(a, batch_a, len(batch), k),
                              _batch_stride(b, batch_b, len(batch), k), strides[k]))
        launch_gemm(node, c2, a2, b2, dims)
        output_storage[0][0] = out


def _batch_stride(x: GpuArray, batch: tuple, n: int, k: int) -> int:
    """Stride of ``x`` along output batch axis ``k`` of ``n``; 0 where it broadcasts."""
    d = k - (n - len(batch))
    return 0 if d < 0 or batch[d] == 1 else x.strides[d]


class GpuDotNd(GpuOp):
    """numpy.dot with an operand of rank > 2: ``a``'s leading axes are the rows of
    one matrix, ``b``'s leading axes a batch of matrices sharing it."""

    def gpu_kernels(self, node: Apply) -> list:
        return _gemm_kernels(node, max(node.inputs[1].type.ndim - 2, 0))

    def make_node(self, a: Variable, b: Variable, out_type) -> Apply:
        return Apply(self, [a, b], [self.out_type(out_type.dtype, out_type.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b = inputs
        b2 = _matrix(b, False)
        if a.shape[-1] != b2.shape[0]:
            raise _mismatch("dot", HostNames(node), a, b, a.ndim - 1, max(b.ndim - 2, 0))
        lead, jdims = a.shape[:-1], b.shape[:-2]
        shape = lead + jdims + b.shape[-1:] if b.ndim > 1 else lead
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, shape, np.dtype(node.outputs[0].type.dtype))
        a = a if a.is_c_contiguous else a.copy()
        m, k, n = math.prod(lead), a.shape[-1], b2.shape[1]
        a2 = a.view((m, k), (k, 1), a.offset)
        strides = c_strides(shape)
        row = math.prod(jdims) * n
        c2 = out.view((m, n), (row, 1), out.offset)
        dims = [Batch(length, 0, b.strides[i], strides[len(lead) + i]) for i, length in enumerate(jdims)]
        launch_gemm(node, c2, a2, b2, dims)
        output_storage[0][0] = out


def _as_matrix(x: GpuArray, split: int) -> GpuArray:
    """``x`` as a (rows, columns) matrix: axes before ``split`` are rows, the rest
    columns; a view when each group's strides chain, else a contiguous copy."""
    def merged(dims: range) -> tuple[int, int] | None:
        kept = [d for d in dims if x.shape[d] != 1]
        if any(x.strides[d] != x.strides[e] * x.shape[e] for d, e in zip(kept, kept[1:])):
            return None
        return math.prod(x.shape[d] for d in dims), (x.strides[kept[-1]] if kept else 0)
    rows, cols = merged(range(split)), merged(range(split, x.ndim))
    if rows is None or cols is None:
        return _as_matrix(x.copy(), split)
    return x.view((rows[0], cols[0]), (rows[1], cols[1]), x.offset)


class GpuTensorDot(GpuOp):
    """numpy.tensordot over any axes: both operands viewed as matrices (copied only
    where their axes cannot be merged), then one GEMM."""

    __props__ = ("axes", "context_name")

    def __init__(self, axes: tuple, context_name: str | None = None):
        self.axes = (tuple(axes[0]), tuple(axes[1]))
        self.context_name = context_name

    def make_node(self, a: Variable, b: Variable, out_type) -> Apply:
        return Apply(self, [a, b], [self.out_type(out_type.dtype, out_type.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b = inputs
        axes_a, axes_b = self.axes
        if [a.shape[i] for i in axes_a] != [b.shape[i] for i in axes_b]:
            raise _mismatch("tensordot", HostNames(node), a, b, axes_a, axes_b)
        free_a = [i for i in range(a.ndim) if i not in axes_a]
        free_b = [i for i in range(b.ndim) if i not in axes_b]
        a2 = _as_matrix(_transpose(a, free_a + list(axes_a)), len(free_a))
        b2 = _as_matrix(_transpose(b, list(axes_b) + free_b), len(axes_b))
        shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, shape, np.dtype(node.outputs[0].type.dtype))
        c2 = out.view((a2.shape[0], b2.shape[1]), (b2.shape[1], 1), out.offset)
        launch_gemm(node, c2, a2, b2, [])
        output_storage[0][0] = out


def _transpose(x: GpuArray, order: list[int]) -> GpuArray:
    return x.view([x.shape[i] for i in order], [x.strides[i] for i in order], x.offset)


def _gemm_kernels(node: Apply, n_batch: int) -> list:
    out = node.outputs[0].type
    return [gemm_kernel(out.context, out.dtype, n_batch)]


class _GpuBlasUpdate(GpuOp):
    """``Z * beta + alpha * dot(X, Y)`` into a copy of Z (host scalars alpha, beta) by the
    GEMM kernel; a subclass names its host op (whose shape check it uses) and gives the
    kernel its matrices."""

    host: type

    def gpu_kernels(self, node: Apply) -> list:
        return _gemm_kernels(node, 0)

    def make_node(self, z: Variable, alpha: Variable, x: Variable, y: Variable, beta: Variable) -> Apply:
        return Apply(self, [z, alpha, x, y, beta], [self.out_type(z.type.dtype, z.type.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        z, alpha, x, y, beta = inputs
        self.host.check_shapes(z, x, y)
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, z.shape, z.dtype)
        if out is z:
            out = GpuArray(ctx, z.shape, z.dtype)
        if float(beta) != 0:
            ctx.copy_into(out, z)
        launch_gemm(node, *self._matrices(out, x, y), [], float(alpha), float(beta))
        output_storage[0][0] = out


class GpuGemm(_GpuBlasUpdate):
    """``Z * beta + alpha * dot(X, Y)`` for matrices (BLAS's gemm)."""

    host = Gemm

    def _matrices(self, out: GpuArray, x: GpuArray, y: GpuArray) -> tuple:
        return out, x, y


class GpuGemv(_GpuBlasUpdate):
    """``y * beta + alpha * dot(A, x)``: the GEMM kernel on the vectors seen as columns."""

    host = Gemv

    def _matrices(self, out: GpuArray, a: GpuArray, x: GpuArray) -> tuple:
        return _column(out), a, _column(x)


def _column(v: GpuArray) -> GpuArray:
    return v.view((v.shape[0], 1), (v.strides[0], 1), v.offset)


# ------------------------------------------------------------------ lowerings
@register_lowering(MatMul)
def _matmul(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    a, b = node.inputs
    _check_dot(ctx, a, b)
    return [GpuMatMul().make_node(on_gpu(a), on_gpu(b), node.outputs[0].type).outputs[0]]


@register_lowering(TensorDot)
def _tensordot(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    a, b = node.inputs
    _check_dot(ctx, a, b)
    op = GpuTensorDot(node.op.axes)
    return [op.make_node(on_gpu(a), on_gpu(b), node.outputs[0].type).outputs[0]]


@register_lowering(Gemm)
def _gemm(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    z, alpha, x, y, beta = node.inputs
    _check_dtypes(ctx, [z, x, y])
    return [GpuGemm()(on_gpu(z), alpha, on_gpu(x), on_gpu(y), beta)]


@register_lowering(Gemv)
def _gemv(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    y, alpha, a, x, beta = node.inputs
    _check_dtypes(ctx, [y, a, x])
    return [GpuGemv()(on_gpu(y), alpha, on_gpu(a), on_gpu(x), beta)]


@register_lowering(Dot)
def _dot(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    """Vectors and matrices: GpuDot (cuBLAS on CUDA); any higher rank: GpuDotNd."""
    a, b = node.inputs
    _check_dot(ctx, a, b)
    if a.type.ndim > 2 or b.type.ndim > 2:
        return [GpuDotNd().make_node(on_gpu(a), on_gpu(b), node.outputs[0].type).outputs[0]]
    return [GpuDot()(on_gpu(a), on_gpu(b))]
