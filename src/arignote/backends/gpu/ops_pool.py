"""Pooling on the GPU: Pool, its gradients and the gradient of the max-pool gradient as
gather kernels (``render_conv.py``), one thread per element written, no atomics.

Each op keeps the CPU op it replaces (``pool``) for its mode and geometry, so
window sizes, strides and pads (host int vectors) are checked on the host with
the CPU's messages. Inputs are made contiguous first; the leading axes are
flattened.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arignote.backends.gpu.array import GpuArray
from arignote.backends.gpu.context import GpuContext
from arignote.backends.gpu.ops import GpuOp, HostNames, _kernels
from arignote.backends.gpu.ops_conv import _grid
from arignote.backends.gpu.placement import StaysOnCpu, _check_dtypes, register_lowering
from arignote.backends.kernels import render_conv
from arignote.graph.basic import Apply, Variable
from arignote.tensor.signal.pool import (AveragePoolGrad, DownsampleFactorMaxGradGrad, MaxPoolGrad,
                                         Pool)
from arignote.tensor.signal.windows import Geometry


def _contiguous(x: GpuArray) -> GpuArray:
    """``x`` as the kernels read it: contiguous from the buffer's start (a copy otherwise)."""
    return x if x.is_c_contiguous and x.offset == 0 else x.copy()


def _geometry_args(g: Geometry) -> list:
    args = []
    for a in range(len(g.ws)):
        args += [np.int64(v) for v in (g.shape[a], g.out[a], g.ws[a], g.stride[a], g.pad[a])]
    return args


class _GpuPoolOp(GpuOp):
    __props__ = ("pool", "context_name")

    def __init__(self, pool: object, context_name: str | None = None):
        self.pool = pool
        self.context_name = context_name

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.pool.mode}, ignore_border={self.pool.ignore_border}}}"

    def make_node(self, *inputs: Variable, out_type=None) -> Apply:
        return Apply(self, list(inputs), [self.out_type(out_type.dtype, out_type.broadcastable)()])

    def launch(self, node: Apply, name: str, build: Callable, out: GpuArray, arrays: list[GpuArray],
               g: Geometry) -> None:
        if not out.size:
            return
        ctx = out.context
        memo = _kernels(node)
        if name not in memo:
            memo[name] = ctx.kernel(build(ctx.dialect, out.dtype.name, len(g.ws)))
        args = [out.buffer] + [a.buffer for a in arrays] + [np.int64(out.size)] + _geometry_args(g)
        ctx.launch(memo[name], *_grid(out.size), args)


def _host_params(inputs: list) -> list[np.ndarray]:
    return [np.asarray(p) for p in inputs]


class GpuPool(_GpuPoolOp):
    """``pool``'s mode over the last ``ndim`` axes; inputs ``x``, ``ws``, ``stride``, ``pad``."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, *params = inputs
        g = self.pool.geometry(x.shape, *_host_params(params))
        ctx = node.outputs[0].type.context
        out = self.output(output_storage[0], ctx, x.shape[:-len(g.ws)] + g.out, x.dtype)
        mode = self.pool.mode
        self.launch(node, "pool", lambda d, t, nd: render_conv.pool(d, t, nd, mode), out,
                    [_contiguous(x)], g)
        output_storage[0][0] = out


class GpuMaxPoolGrad(_GpuPoolOp):
    """Inputs ``x``, ``maxout``, ``gz`` and the pooling parameters; see MaxPoolGrad."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, maxout, gz, *params = inputs
        g = self.pool.geometry(x.shape, *_host_params(params))
        names = HostNames(node)  # as the CPU op's checks read a node: the user's variables
        self.pool.check_pooled(names, x, maxout, g, "the pooled value")
        self.pool.check_pooled(names, x, gz, g, "the gradient")
        ctx = node.outputs[0].type.context
        out = self.output(output_storage[0], ctx, x.shape, x.dtype)
        self.launch(node, "grad", lambda d, t, nd: render_conv.pool_grad(d, t, nd, "max"), out,
                    [_contiguous(v) for v in (x, maxout, gz)], g)
        output_storage[0][0] = out


class GpuAveragePoolGrad(_GpuPoolOp):
    """Inputs ``x``, ``gz`` and the pooling parameters; see AveragePoolGrad."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, gz, *params = inputs
        g = self.pool.geometry(x.shape, *_host_params(params))
        self.pool.check_pooled(HostNames(node), x, gz, g, "the gradient")
        ctx = node.outputs[0].type.context
        out = self.output(output_storage[0], ctx, x.shape, x.dtype)
        mode = self.pool.mode
        gz = _contiguous(gz)  # the kernel's x and maxout arguments are unused here
        self.launch(node, "grad", lambda d, t, nd: render_conv.pool_grad(d, t, nd, mode), out,
                    [gz, gz, gz], g)
        output_storage[0][0] = out


class GpuDownsampleFactorMaxGradGrad(_GpuPoolOp):
    """Inputs ``x``, ``maxout``, ``ggx`` and the pooling parameters; the result has
    ``maxout``'s shape."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, maxout, ggx, *params = inputs
        g = self.pool.geometry(x.shape, *_host_params(params))
        self.pool.check_pooled(HostNames(node), x, maxout, g, "the pooled value")
        if ggx.shape != x.shape:
            raise ValueError(f"{type(self.pool).__name__}: the gradient has shape {ggx.shape}, but "
                             f"{HostNames(node).inputs[0].describe()} has shape {x.shape}")
        ctx = node.outputs[0].type.context
        out = self.output(output_storage[0], ctx, maxout.shape, maxout.dtype)
        self.launch(node, "grad_grad", render_conv.pool_max_grad_grad, out,
                    [_contiguous(v) for v in (x, maxout, ggx)], g)
        output_storage[0][0] = out


# ------------------------------------------------------------------ lowerings
def _lower(gpu_class: type, n_arrays: int) -> Callable:
    def lower(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
        arrays, params = node.inputs[:n_arrays], node.inputs[n_arrays:]
        _check_dtypes(ctx, arrays)
        dtype = node.outputs[0].type.dtype
        if dtype not in ("float32", "float64") or any(a.type.dtype != dtype for a in arrays):
            raise StaysOnCpu(f"the GPU pooling kernels take float32 or float64 arrays of one dtype, "
                             f"got {', '.join(a.type.dtype for a in arrays)}")
        op = gpu_class(node.op)
        return [op.make_node(*[on_gpu(a) for a in arrays], *params,
                             out_type=node.outputs[0].type).outputs[0]]
    return lower


register_lowering(Pool)(_lower(GpuPool, 1))
register_lowering(MaxPoolGrad)(_lower(GpuMaxPoolGrad, 3))
register_lowering(AveragePoolGrad)(_lower(GpuAveragePoolGrad, 2))
register_lowering(DownsampleFactorMaxGradGrad)(_lower(GpuDownsampleFactorMaxGradGrad, 3))
