"""Convolution on the GPU: the abstract convolution ops as im2col + the device GEMM,
and cuDNN through CuPy where the CUDA runtime has it.

Each op keeps the abstract op it replaces (``conv``) for its parameters, its
checks (with the CPU's messages, naming the user's variables) and its
geometry. The layout is the CPU's (``tensor/nnet/im2col.py``): the window
matrix ``cols`` (C*K, B*O), one batched GEMM launch whose batch axis is the
groups, and strided copies between the (F, B*O) matrix and (B, F, *O) arrays.
``filter_flip`` is a kernel argument that reverses the window offsets.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from arignote.backends.gpu.array import GpuArray, c_strides
from arignote.backends.gpu.context import GpuContext
from arignote.backends.gpu.ops import GpuOp, HostNames, _kernels
from arignote.backends.gpu.ops_blas import Batch, launch_gemm
from arignote.backends.gpu.placement import StaysOnCpu, _check_dtypes, register_lowering
from arignote.backends.kernels import render, render_conv
from arignote.graph.basic import Apply, Variable
from arignote.tensor.nnet.abstract_conv import FAMILY, BaseAbstractConv
from arignote.tensor.nnet.corr import CORR_KINDS


def _grid(size: int) -> tuple[tuple[int], tuple[int]]:
    groups = min(-(-size // render.LOCAL_SIZE), 4096)
    return (groups * render.LOCAL_SIZE,), (render.LOCAL_SIZE,)


def _kernel(node: Apply, ctx: GpuContext, name: str, build: Callable) -> object:
    memo = _kernels(node)
    if name not in memo:
        memo[name] = ctx.kernel(build())
    return memo[name]


def _cols(node: Apply, conv: BaseAbstractConv, x: GpuArray, kernel: tuple, out: tuple) -> GpuArray:
    """The window matrix (C*K, B*O) of ``x`` (any strides)."""
    ctx = x.context
    nd = conv.convdim
    cols = GpuArray(ctx, (x.shape[1] * math.prod(kernel), x.shape[0] * math.prod(out)), x.dtype)
    if cols.size:
        k = _kernel(node, ctx, "im2col", lambda: render_conv.im2col(ctx.dialect, x.dtype.name, nd))
        args = [cols.buffer, x.buffer, np.int64(x.offset), np.int64(x.strides[0]), np.int64(x.strides[1]),
                np.int64(cols.size), np.int64(x.shape[1]), np.int64(x.shape[0]), np.int32(conv.filter_flip)]
        for a, (lo, _) in enumerate(conv.pads(kernel)):
            args += [np.int64(v) for v in (kernel[a], out[a], x.shape[2 + a], conv.subsample[a],
                                            conv.filter_dilation[a], lo, x.strides[2 + a])]
        ctx.launch(k, *_grid(cols.size), args)
    return cols


def _view(x: GpuArray, shape: tuple, strides: tuple, offset: int = 0) -> GpuArray:
    return x.view(shape, strides, x.offset + offset)


def _fbo(x: GpuArray) -> GpuArray:
    """(B, F, *O) as a contiguous (F, B*O) matrix (a strided copy)."""
    moved = _view(x, (x.shape[1], x.shape[0]) + x.shape[2:], (x.strides[1], x.strides[0]) + x.strides[2:])
    out = GpuArray(x.context, moved.shape, x.dtype)
    x.context.copy_into(out, moved)
    width = x.shape[0] * math.prod(x.shape[2:])  # B*O even when there are no filters (F = 0)
    return out.view((x.shape[1], width), (width, 1), 0)


def _groups_gemm(node: Apply, c: GpuArray, a: GpuArray, b: GpuArray, groups: int,
                 c_step: int, a_step: int, b_step: int) -> None:
    """``c_g = a_g @ b_g`` for each group, in one launch: ``c``, ``a``, ``b`` are group
    0's views, the steps the elements between one group's view and the next's."""
    launch_gemm(node, c, a, b, [Batch(groups, a_step, b_step, c_step)] if groups > 1 else [])


class _GpuCorr(GpuOp):
    __props__ = ("conv", "context_name")

    def __init__(self, conv: BaseAbstractConv, context_name: str | None = None):
        self.conv = conv
        self.context_name = context_name

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.conv}}}"

    def make_node(self, a: Variable, b: Variable, *rest: Variable, out_type=None) -> Apply:
        return Apply(self, [a, b, *rest], [self.out_type(out_type.dtype, out_type.broadcastable)()])

    def cudnn(self, ctx: GpuContext, pads: tuple) -> Callable | None:
        """The device's cuDNN convolution when it can run this one (symmetric padding)."""
        conv = getattr(ctx.device, "conv", None)
        return conv if conv is not None and all(lo == hi for lo, hi in pads) else None


def _flipped(x: GpuArray, nd: int) -> GpuArray:
    """A contiguous copy of ``x`` with its last ``nd`` axes reversed."""
    offset = sum((n - 1) * s for n, s in zip(x.shape[-nd:], x.strides[-nd:]))
    view = _view(x, x.shape, x.strides[:-nd] + tuple(-s for s in x.strides[-nd:]), offset)
    out = GpuArray(x.context, x.shape, x.dtype)
    x.context.copy_into(out, view)
    return out


class GpuCorrMM(_GpuCorr):
    """The forward convolution (2d or 3d) of ``conv``."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        img, kern = inputs
        conv, nd = self.conv, self.conv.convdim
        spatial = conv.check(HostNames(node).inputs, img, kern)
        ctx = node.outputs[0].type.context
        shape = (img.shape[0], kern.shape[0]) + spatial
        out = self.output(output_storage[0], ctx, shape, img.dtype)
        pads = conv.pads(kern.shape[2:])
        cudnn = self.cudnn(ctx, pads)
        if out.size and cudnn is not None:
            weights = _flipped(kern, nd) if conv.filter_flip else kern
            cudnn("forward", out, img, weights, pads, conv.subsample, conv.filter_dilation, conv.num_groups)
        elif out.size:
            cols = _cols(node, conv, img, kern.shape[2:], spatial)
            groups, n_filters = conv.num_groups, kern.shape[0]
            rows, per, width = cols.shape[0] // groups, n_filters // groups, cols.shape[1]
            fbo = GpuArray(ctx, (n_filters, width), img.dtype)
            weights = kern if kern.is_c_contiguous else kern.copy()
            launch = (_view(fbo, (per, width), (width, 1)), _view(weights, (per, rows), (rows, 1)),
                      _view(cols, (rows, width), (width, 1)))
            _groups_gemm(node, *launch, groups, per * width, per * rows, rows * width)
            moved = _view(fbo, shape, (width // img.shape[0] if img.shape[0] else 0, width) + c_strides(spatial))
            ctx.copy_into(out, moved)
        output_storage[0][0] = out


class GpuCorrMM_gradWeights(_GpuCorr):
    """The gradient of the filters of ``conv``; the third input is the host shape vector."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        img, top, shape = inputs
        conv, nd = self.conv, self.conv.convdim
        kernel = conv.check(HostNames(node).inputs, img, top, shape)
        ctx = node.outputs[0].type.context
        groups = conv.num_groups
        out_shape = (top.shape[1], img.shape[1] // groups) + kernel
        out = self.output(output_storage[0], ctx, out_shape, img.dtype)
        pads = conv.pads(kernel)
        cudnn = self.cudnn(ctx, pads)
        if out.size and cudnn is not None:
            cudnn("weights", out, img, top, pads, conv.subsample, conv.filter_dilation, groups)
            if conv.filter_flip:
                ctx.copy_into(out, _flipped(out, nd))
        elif out.size:
            cols = _cols(node, conv, img, kernel, top.shape[2:])
            grad = _fbo(top)
            rows, per, width = cols.shape[0] // groups, top.shape[1] // groups, cols.shape[1]
            launch = (_view(out, (per, rows), (rows, 1)), _view(grad, (per, width), (width, 1)),
                      _view(cols, (width, rows), (1, width)))
            # With no images (width 0) the GEMM's sums are empty: it writes zeros.
            _groups_gemm(node, *launch, groups, per * rows, per * width, rows * width)
        output_storage[0][0] = out


class GpuCorrMM_gradInputs(_GpuCorr):
    """The gradient of the input of ``conv``; the third input is the host shape vector."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        kern, top, shape = inputs
        conv, nd = self.conv, self.conv.convdim
        spatial = conv.check(HostNames(node).inputs, kern, top, shape)
        ctx = node.outputs[0].type.context
        groups = conv.num_groups
        out_shape = (top.shape[0], kern.shape[1] * groups) + spatial
        out = self.output(output_storage[0], ctx, out_shape, kern.dtype)
        pads = conv.pads(kern.shape[2:])
        cudnn = self.cudnn(ctx, pads)
        if out.size and cudnn is not None:
            weights = _flipped(kern, nd) if conv.filter_flip else kern
            cudnn("inputs", out, weights, top, pads, conv.subsample, conv.filter_dilation, groups)
        elif out.size:
            grad = _fbo(top)
            weights = kern if kern.is_c_contiguous else kern.copy()
            per, rows, width = kern.shape[0] // groups, kern.shape[1] * math.prod(kern.shape[2:]), grad.shape[1]
            dcols = GpuArray(ctx, (rows * groups, width), kern.dtype)
            launch = (_view(dcols, (rows, width), (width, 1)), _view(weights, (rows, per), (1, rows)),
                      _view(grad, (per, width), (width, 1)))
            _groups_gemm(node, *launch, groups, rows * width, per * rows, per * width)
            k = _kernel(node, ctx, "col2im", lambda: render_conv.col2im(ctx.dialect, kern.dtype.name, nd))
            args = [out.buffer, dcols.buffer, np.int64(out.size), np.int64(out.shape[1]),
                    np.int64(out.shape[0]), np.int32(conv.filter_flip)]
            for a, (lo, _) in enumerate(pads):
                args += [np.int64(v) for v in (kern.shape[2 + a], top.shape[2 + a], spatial[a],
                                                conv.subsample[a], conv.filter_dilation[a], lo)]
            ctx.launch(k, *_grid(out.size), args)
        output_storage[0][0] = out


# ------------------------------------------------------------------ lowerings
def _lower(gpu_class: type) -> Callable:
    def lower(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
        a, b, *shape = node.inputs
        _check_dtypes(ctx, [a, b])
        dtype = node.outputs[0].type.dtype
        if dtype not in ("float32", "float64"):
            raise StaysOnCpu(f"the GPU convolution computes float32 or float64, not {dtype}")
        if node.op.unshared:
            raise StaysOnCpu("unshared (locally connected) convolution has no GPU kernel yet: "
                             "it runs on the host")
        op = gpu_class(node.op)
        return [op.make_node(on_gpu(a), on_gpu(b), *shape, out_type=node.outputs[0].type).outputs[0]]
    return lower


_GPU_CLASS = {"forward": GpuCorrMM, "weights": GpuCorrMM_gradWeights, "inputs": GpuCorrMM_gradInputs}
for (_convdim, _kind), _class in FAMILY.items():
    register_lowering(_class)(_lower(_GPU_CLASS[_kind]))
for _class, _kind in CORR_KINDS.items():  # Theano's names of the same ops
    register_lowering(_class)(_lower(_GPU_CLASS[_kind]))
