"""The GPU ops: each mirrors a tensor op and runs its kernel from ``render.py``.

Every name starts with ``Gpu`` (so ``'Gpu' in type(node.op).__name__`` tells
the truth about where a node runs). Outputs are new contiguous arrays, reused
on the next call when the executor left them in their cell; views
(DimShuffle, basic indexing) only change shape, strides and offset.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.backends.kernels import render
from arignote.backends.gpu.array import GpuArray
from arignote.backends.gpu.type import GpuArrayType
from arignote.graph.basic import Apply, Op, Variable, user_variable
from arignote.scalar.ops import ScalarOp
from arignote.tensor.blas import _mismatch
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.subtensor import _index_error, _numpy_index


class GpuOp(Op):
    """A GPU op; ``context_name`` picks the context its output lives on.

    Ops whose identity is only their context use this ``__props__`` and
    constructor as they are; the others declare their own.
    """

    __props__: tuple[str, ...] = ("context_name",)
    context_name: str | None = None

    def __init__(self, context_name: str | None = None):
        self.context_name = context_name

    def out_type(self, dtype: str, broadcastable: Sequence[bool]) -> GpuArrayType:
        return GpuArrayType(dtype, broadcastable, self.context_name)

    @staticmethod
    def output(cell: list, context: Any, shape: tuple, dtype: np.dtype) -> GpuArray:
        """The previous call's buffer when it fits, else a new one."""
        out = cell[0]
        if (isinstance(out, GpuArray) and out.shape == shape and out.dtype == dtype
                and out.is_c_contiguous):
            return out
        return GpuArray(context, shape, dtype)


host_variable = user_variable  # the user's variable behind transfers, for error messages


class HostNames:
    """A GPU node as the tensor ops' error helpers see it: inputs are the user's variables."""

    def __init__(self, node: Apply):
        self.inputs = [host_variable(v) for v in node.inputs]


def _kernels(node: Apply) -> dict:
    memo = getattr(node.tag, "gpu_kernels", None)
    if memo is None:
        memo = node.tag.gpu_kernels = {}
    return memo


class GpuElemwise(GpuOp):
    __props__ = ("scalar_op", "context_name")

    def __init__(self, scalar_op: ScalarOp, context_name: str | None = None):
        self.scalar_op = scalar_op
        self.context_name = context_name

    def __str__(self) -> str:
        return f"GpuElemwise{{{self.scalar_op}}}"

    def make_node(self, *inputs: Variable) -> Apply:
        dtype = self.scalar_op.output_dtype(*[i.type.dtype for i in inputs])
        ndim = inputs[0].type.ndim
        broadcastable = tuple(all(bs) for bs in zip(*[i.type.broadcastable for i in inputs])) if ndim else ()
        return Apply(self, list(inputs), [self.out_type(dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        first = inputs[0].shape
        shape = first if all(i.shape == first for i in inputs) else Elemwise.shape_rule(node)(
            *[i.shape for i in inputs])
        ctx = node.outputs[0].type.context
        out = self.output(output_storage[0], ctx, shape, np.dtype(node.outputs[0].type.dtype))
        ctx.run_elemwise(_kernels(node), self.scalar_op, out, inputs)
        output_storage[0][0] = out


class GpuDimShuffle(GpuOp):
    """A view with dimensions permuted, dropped (length 1) or added (``'x'``)."""

    __props__ = ("input_broadcastable", "new_order", "context_name")
    view_map = {0: [0]}

    def __init__(self, input_broadcastable: Sequence[bool], new_order: Sequence[Any],
                 context_name: str | None = None):
        self.input_broadcastable = tuple(input_broadcastable)
        self.new_order = tuple(new_order)
        self.context_name = context_name
        kept = [i for i in self.new_order if i != "x"]
        self.passes_value = kept == sorted(kept)  # as DimShuffle's

    def __str__(self) -> str:
        return f"GpuDimShuffle{{{','.join(map(str, self.new_order))}}}"

    def make_node(self, x: Variable) -> Apply:
        broadcastable = tuple(True if i == "x" else x.type.broadcastable[i] for i in self.new_order)
        return Apply(self, [x], [self.out_type(x.type.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        shape = tuple(1 if i == "x" else x.shape[i] for i in self.new_order)
        strides = tuple(0 if i == "x" else x.strides[i] for i in self.new_order)
        output_storage[0][0] = x.view(shape, strides, x.offset)


class GpuCAReduce(GpuOp):
    """CAReduce over any set of axes: one work-group per output element."""

    __props__ = ("scalar_op", "axis", "dtype", "acc_dtype", "context_name")

    def __init__(self, scalar_op: ScalarOp, axis: Sequence[int], dtype: str, acc_dtype: str,
                 context_name: str | None = None):
        self.scalar_op = scalar_op
        self.axis = tuple(axis)
        self.dtype = dtype
        self.acc_dtype = acc_dtype
        self.context_name = context_name

    def __str__(self) -> str:
        return f"GpuCAReduce{{{self.scalar_op}, axis={self.axis}}}"

    def make_node(self, x: Variable) -> Apply:
        broadcastable = [b for i, b in enumerate(x.type.broadcastable) if i not in self.axis]
        return Apply(self, [x], [self.out_type(self.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        kept = [i for i in range(x.ndim) if i not in self.axis]
        reduced = [x.shape[a] for a in self.axis]
        if self.scalar_op.name in ("maximum", "minimum") and 0 in reduced:
            raise ValueError(f"{self}: {host_variable(node.inputs[0]).describe()} has shape {x.shape}, and the "
                             f"{'max' if self.scalar_op.name == 'maximum' else 'min'} of no "
                             "elements is undefined: reduce only non-empty axes")
        ctx = node.outputs[0].type.context
        out = self.output(output_storage[0], ctx, tuple(x.shape[i] for i in kept), np.dtype(self.dtype))
        if out.size:
            memo = _kernels(node)
            if "reduce" not in memo:
                memo["reduce"] = ctx.kernel(render.reduce(
                    ctx.dialect, self.scalar_op.name, x.dtype.name, self.acc_dtype, self.dtype,
                    len(kept), len(self.axis)))
            args = [out.buffer, np.int64(out.offset), x.buffer, np.int64(x.offset),
                    np.int64(int(np.prod(reduced)))]
            for k, i in enumerate(kept):
                args += [np.int64(x.shape[i]), np.int64(x.strides[i]), np.int64(out.strides[k])]
            for a in self.axis:
                args += [np.int64(x.shape[a]), np.int64(x.strides[a])]
            ctx.launch(memo["reduce"], (out.size * render.LOCAL_SIZE,), (render.LOCAL_SIZE,), args)
        output_storage[0][0] = out


class _GpuSoftmaxBase(GpuOp):
    __props__ = ("axis", "context_name")
    log = False

    def __init__(self, axis: int, context_name: str | None = None):
        self.axis = axis
        self.context_name = context_name

    def make_node(self, x: Variable, dtype: str) -> Apply:
        return Apply(self, [x], [self.out_type(dtype, x.type.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        ctx = node.outputs[0].type.context
        dtype = np.dtype(node.outputs[0].type.dtype)
        out = self.output(output_storage[0], ctx, x.shape, dtype)
        kept = [i for i in range(x.ndim) if i != self.axis]
        groups = int(np.prod([x.shape[i] for i in kept]))
        if out.size:
            memo = _kernels(node)
            if "softmax" not in memo:
                memo["softmax"] = ctx.kernel(render.softmax(ctx.dialect, x.dtype.name, dtype.name,
                                                            len(kept), self.log))
            args = [out.buffer, np.int64(out.offset), x.buffer, np.int64(x.offset),
                    np.int64(x.shape[self.axis]), np.int64(x.strides[self.axis]),
                    np.int64(out.strides[self.axis])]
            for i in kept:
                args += [np.int64(x.shape[i]), np.int64(x.strides[i]), np.int64(out.strides[i])]
            ctx.launch(memo["softmax"], (groups * render.LOCAL_SIZE,), (render.LOCAL_SIZE,), args)
        output_storage[0][0] = out


class GpuSoftmax(_GpuSoftmaxBase):
    pass


class GpuLogSoftmax(_GpuSoftmaxBase):
    log = True


class GpuDot(GpuOp):
    """numpy.dot of matrices and vectors: cuBLAS on CUDA, the tiled GEMM kernel on OpenCL."""

    def make_node(self, a: Variable, b: Variable) -> Apply:
        bc = a.type.broadcastable[:-1] + (b.type.broadcastable[-1:] if b.type.ndim == 2 else ())
        return Apply(self, [a, b], [self.out_type(a.type.dtype, bc)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b = inputs
        k_a, k_b = a.shape[-1], b.shape[0]
        if k_a != k_b:
            raise _mismatch("dot", HostNames(node), a, b, a.ndim - 1, 0)
        ctx = node.outputs[0].type.context
        shape = a.shape[:-1] + b.shape[1:]
        out = self.output(output_storage[0], ctx, shape, a.dtype)
        a2 = a if a.ndim == 2 else a.view((1, a.shape[0]), (0, a.strides[0]), a.offset)
        b2 = b if b.ndim == 2 else b.view((b.shape[0], 1), (b.strides[0], 0), b.offset)
        m, n = a2.shape[0], b2.shape[1]
        c2 = out.view((m, n), (n, 1), out.offset)
        if m and n:
            if ctx.device.gemm is not None:
                ctx.device.gemm(c2, a2, b2)
            else:
                memo = _kernels(node)
                if "gemm" not in memo:
                    memo["gemm"] = ctx.kernel(render.gemm(ctx.dialect, a.dtype.name))
                args = [c2.buffer, np.int64(c2.offset), np.int64(c2.strides[0]), np.int64(c2.strides[1])]
                for x in (a2, b2):
                    args += [x.buffer, np.int64(x.offset), np.int64(x.strides[0]), np.int64(x.strides[1])]
                args += [np.int64(m), np.int64(n), np.int64(k_a), a.dtype.type(1), a.dtype.type(0)]
                tile = render.TILE
                ctx.launch(memo["gemm"], (-(-n // tile) * tile, -(-m // tile) * tile), (tile, tile), args)
        output_storage[0][0] = out


class GpuSubtensor(GpuOp):
    """Basic indexing as a view: ints, slices and new axes move the offset and strides."""

    __props__ = ("idx_list", "context_name")
    view_map = {0: [0]}

    def __init__(self, idx_list: Sequence, context_name: str | None = None):
        self.idx_list = tuple(idx_list)
        self.context_name = context_name

    def make_node(self, x: Variable, out_type: Any, *entries: Variable) -> Apply:
        return Apply(self, [x, *entries], [self.out_type(x.type.dtype, out_type.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, *entries = inputs
        index = _numpy_index(self.idx_list, entries)
        try:
            output_storage[0][0] = basic_view(x, index)
        except IndexError as err:
            raise _index_error(HostNames(node), x, index, err) from None


def basic_view(x: GpuArray, index: Sequence) -> GpuArray:
    """``x[index]`` for a basic numpy index (ints, slices, None) as a view of ``x``."""
    shape, strides, offset, dim = [], [], x.offset, 0
    for item in index:
        if item is None:
            shape.append(1)
            strides.append(0)
            continue
        n = x.shape[dim]
        if isinstance(item, slice):
            start, stop, step = item.indices(n)
            shape.append(len(range(start, stop, step)))
            strides.append(x.strides[dim] * step)
            if shape[-1]:
                offset += start * x.strides[dim]
        else:
            i = int(item)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            offset += (i + n if i < 0 else i) * x.strides[dim]
        dim += 1
    shape += x.shape[dim:]
    strides += x.strides[dim:]
    return x.view(shape, strides, offset)


class GpuAlloc(GpuOp):
    """``value`` broadcast into a new array of the shape given by host scalars."""

    def make_node(self, value: Variable, broadcastable: Sequence[bool], *shape: Variable) -> Apply:
        return Apply(self, [value, *shape], [self.out_type(value.type.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        value, *dims = inputs
        shape = tuple(int(s) for s in dims)
        if any(n < 0 for n in shape):
            raise ValueError(f"alloc: negative length in shape {shape}")
        tail = shape[len(shape) - value.ndim:] if value.ndim else ()
        if any(v != 1 and v != s for v, s in zip(value.shape, tail)):
            raise ValueError(f"alloc: the value {host_variable(node.inputs[0]).describe()} of shape "
                             f"{value.shape} does not broadcast to the shape {shape}")
        ctx = node.outputs[0].type.context
        out = self.output(output_storage[0], ctx, shape, value.dtype)
        ctx.copy_into(out, value)
        output_storage[0][0] = out
