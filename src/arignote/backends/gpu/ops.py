"""The GPU ops: each mirrors a tensor op and runs its kernel from ``render.py``.

Every name starts with ``Gpu`` (so ``'Gpu' in type(node.op).__name__`` tells
the truth about where a node runs). Outputs are new contiguous arrays, reused
on the next call when the executor left them in their cell; views
(DimShuffle, basic indexing) only change shape, strides and offset.
"""
from __future__ import annotations

import weakref
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.backends.kernels import render
from arignote.backends.gpu.array import GpuArray, c_strides
from arignote.backends.gpu.type import GpuArrayType, context_of
from arignote.compile.output_copies import CopyRule, DeepCopyOp, register_copy
from arignote.graph.basic import Apply, Op, Variable, user_variable
from arignote.scalar.ops import TABLE, Cast, ScalarOp
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

    def gpu_kernels(self, node: Apply) -> list[render.Kernel]:
        """The kernels this node's calls will launch (as far as its types tell), built
        with the rest of its function's at link time; others are built on first use."""
        return []

    @staticmethod
    def output(cell: list, context: Any, shape: tuple, dtype: np.dtype) -> GpuArray:
        """The previous call's buffer when it fits (what the host knew of its values
        forgotten: the op writes new ones), else a new one."""
        out = cell[0]
        if (isinstance(out, GpuArray) and out.shape == shape and out.dtype == dtype
                and out.is_c_contiguous):
            out.bounds = None
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
    """An elementwise kernel; inputs are GPU arrays, or host 0-d values passed by value."""

    __props__ = ("scalar_op", "context_name")

    def __init__(self, scalar_op: ScalarOp, context_name: str | None = None):
        self.scalar_op = scalar_op
        self.context_name = context_name

    def __str__(self) -> str:
        return f"GpuElemwise{{{self.scalar_op}}}"

    def make_node(self, *inputs: Variable) -> Apply:
        dtype = self.scalar_op.output_dtype(*[i.type.dtype for i in inputs])
        ndim = inputs[0].type.ndim  # host inputs of one element have the same rank
        broadcastable = tuple(all(bs) for bs in zip(*[i.type.broadcastable for i in inputs])) if ndim else ()
        return Apply(self, list(inputs), [self.out_type(dtype, broadcastable)()])

    def gpu_kernels(self, node: Apply) -> list[render.Kernel]:
        ctx = context_of(node)
        out = node.outputs[0].type
        scalars = tuple(not isinstance(i.type, GpuArrayType) for i in node.inputs)
        arrays = [i for i, s in zip(node.inputs, scalars) if not s]
        # Inputs of the output's own pattern, none a view: the contiguous form; a broadcast
        # or a view (a transpose, a slice): the strided one.
        plain = all(a.type.broadcastable == out.broadcastable and not
                    (a.owner is not None and a.owner.op.view_map) for a in arrays)
        forms = [True] if plain else [False]
        return [ctx.elemwise_kernel(self.scalar_op, [i.type.dtype for i in node.inputs], out.dtype,
                                    out.ndim, contiguous, scalars) for contiguous in forms]

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        cell = output_storage[0]
        memo = _kernels(node)
        again = memo.get("again")
        out = cell[0]
        if (again is not None and out is not None and again[0]() is out and _same(again[1], inputs)
                and context_of(node).device.relaunch(*again[2])):
            # The same arrays as the last call (a GpuArray never changes its shape, strides
            # or buffer), and the kernel still holds that call's arguments.
            out.bounds = None
        else:
            first = inputs[0].shape
            shape = first if all(i.shape == first for i in inputs) else Elemwise.shape_rule(node)(
                *[i.shape for i in inputs])
            ctx = context_of(node)
            out = self.output(cell, ctx, shape, np.dtype(node.outputs[0].type.dtype))
            launch = ctx.elemwise_launch(memo, self.scalar_op, out, inputs)
            if launch is not None:
                kernel, global_size, local_size, args = launch
                # Host values (passed by value) may change in place: only arrays are known again.
                if ctx.device.relaunch is not None and all(type(i) is GpuArray for i in inputs):
                    token = object()
                    memo["again"] = (weakref.ref(out), [weakref.ref(i) for i in inputs],
                                     (kernel, global_size, local_size, token))
                    ctx.device.launch(kernel, global_size, local_size, args, token)
                else:
                    ctx.device.launch(*launch)
        if type(self.scalar_op) is Cast and type(inputs[0]) is GpuArray and inputs[0].bounds:
            out.bounds = cast_bounds(inputs[0].bounds, out.dtype)
        cell[0] = out


def _same(refs: list, inputs: list) -> bool:
    """Whether ``inputs`` are the very arrays ``refs`` point to (weak: a launch remembered
    keeps no array alive)."""
    if len(refs) != len(inputs):
        return False
    for ref, value in zip(refs, inputs):
        if ref() is not value:
            return False
    return True


def cast_bounds(bounds: tuple, dtype: np.dtype) -> tuple | None:
    """The bounds of values in ``bounds`` cast to integer ``dtype`` (C truncates toward
    zero, as numpy: monotone), or None where a value may not fit (C leaves it undefined)."""
    if dtype.kind not in "iu":
        return None
    info = np.iinfo(dtype)
    lo, hi, exact = bounds
    if not info.min <= lo <= hi <= info.max:
        return None
    return int(lo), int(hi), exact


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
    """CAReduce over any set of axes (``square``: of the squares, for SumOfSquares), in
    the form ``reduction_plan`` picks from the shapes and the device."""

    __props__ = ("scalar_op", "axis", "dtype", "acc_dtype", "context_name", "square")

    def __init__(self, scalar_op: ScalarOp, axis: Sequence[int], dtype: str, acc_dtype: str,
                 context_name: str | None = None, square: bool = False):
        self.scalar_op = scalar_op
        self.axis = tuple(axis)
        self.dtype = dtype
        self.acc_dtype = acc_dtype
        self.context_name = context_name
        self.square = bool(square)

    def __str__(self) -> str:
        what = "sum of squares" if self.square else self.scalar_op
        return f"GpuCAReduce{{{what}, axis={self.axis}}}"

    def make_node(self, x: Variable) -> Apply:
        broadcastable = [b for i, b in enumerate(x.type.broadcastable) if i not in self.axis]
        return Apply(self, [x], [self.out_type(self.dtype, broadcastable)()])

    def kernel(self, ctx: Any, n_kept: int, in_dtype: str, out_dtype: str, per_thread: bool,
               square: bool) -> render.Kernel:
        return render.reduce(ctx.dialect, self.scalar_op.name, in_dtype, self.acc_dtype, out_dtype,
                             n_kept, len(self.axis), per_thread, square)

    def gpu_kernels(self, node: Apply) -> list[render.Kernel]:
        ctx = context_of(node)
        n_kept = node.outputs[0].type.ndim
        x = node.inputs[0].type.dtype
        return [self.kernel(ctx, n_kept, x, self.dtype, per_thread, self.square)
                for per_thread in ((True,) if ctx.device.on_cpu else (False, True))]

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        kept = [i for i in range(x.ndim) if i not in self.axis]
        reduced = [x.shape[a] for a in self.axis]
        if self.scalar_op.name in ("maximum", "minimum") and 0 in reduced:
            raise ValueError(f"{self}: {host_variable(node.inputs[0]).describe()} has shape {x.shape}, and the "
                             f"{'max' if self.scalar_op.name == 'maximum' else 'min'} of no "
                             "elements is undefined: reduce only non-empty axes")
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, tuple(x.shape[i] for i in kept), np.dtype(self.dtype))
        if out.size:
            kept_dims = [(x.shape[i], x.strides[i], out.strides[k]) for k, i in enumerate(kept)]
            red_dims = _merged([(x.shape[a], x.strides[a]) for a in self.axis], max(len(self.axis), 1))
            reduce_into(self, node, ctx, out, x, kept_dims, red_dims)
        output_storage[0][0] = out


def _merged(dims: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """Reduced (length, stride) pairs, innermost (smallest stride) last, neighbours merged
    where their strides chain, padded in front with (1, 0) to ``n`` entries."""
    dims = sorted((d for d in dims if d[0] != 1), key=lambda d: -abs(d[1]))
    merged: list[tuple[int, int]] = []
    for length, stride in dims:
        if merged and merged[-1][1] == stride * length:
            merged[-1] = (merged[-1][0] * length, stride)
        else:
            merged.append((length, stride))
    if any(length == 0 for length, _ in dims):
        merged = [(0, 0)]
    return [(1, 0)] * (n - len(merged)) + merged


# Elements one unit of a reduction reduces at most: long serial float sums lose accuracy,
# and more units keep more of the device busy.
MAX_SHARE = 1 << 15


def reduction_plan(device: Any, n_out: int, n_red: int, inner_stride: int,
                   kept_strides: Sequence[int]) -> tuple[bool, int]:
    """(per_thread, splits) of a reduction of ``n_red`` elements into each of ``n_out``.

    On a CPU device (PoCL) a work-item is an iteration of a loop on one core: one
    thread per unit, and enough units to keep every core busy. On a GPU: one thread
    per output when outputs lie side by side in memory and the reduced axis is
    strided (adjacent threads read adjacent elements) and there are enough of them;
    otherwise a work-group per unit, with several units per output (two stages)
    when there are fewer outputs than the device has compute units to fill.
    """
    units = 4 * max(getattr(device, "compute_units", 1), 1)
    longest = -(-n_red // MAX_SHARE)
    if device.on_cpu:
        return True, max(1, min(-(-units // n_out), -(-n_red // 4096)), longest)
    side_by_side = bool(kept_strides) and min(abs(s) for s in kept_strides) < abs(inner_stride)
    if side_by_side and n_out >= 8 * render.LOCAL_SIZE:
        return True, longest
    if n_out < units:
        return False, max(1, min(-(-units // n_out), -(-n_red // (8 * render.LOCAL_SIZE))))
    return False, 1


def reduce_into(op: GpuCAReduce, node: Apply, ctx: Any, out: GpuArray, x: GpuArray,
                kept: list[tuple[int, int, int]], red: list[tuple[int, int]]) -> None:
    """Launch the reduction of ``x`` into ``out``: in one stage, or into partial results
    (a buffer the node keeps between calls) that a second launch reduces."""
    n_out = out.size
    n_red = int(np.prod([length for length, _ in red]))
    per_thread, splits = reduction_plan(ctx.device, n_out, n_red, red[-1][1], [s for _, s, _ in kept])
    memo = _kernels(node)

    def launch(form: bool, in_dtype: str, out_dtype: str, square: bool, dst: GpuArray, src: GpuArray,
               kept_dims: list, red_dims: list, count: int, parts: int, split_stride: int) -> None:
        key = ("reduce", form, in_dtype, out_dtype, square)
        kernel = memo.get(key)
        if kernel is None:
            kernel = memo[key] = ctx.kernel(op.kernel(ctx, len(kept), in_dtype, out_dtype, form, square))
        args = [dst.buffer, dst.offset, src.buffer, src.offset, count, n_out * parts, parts,
                -(-count // parts) if count else 0, split_stride]
        for dim in kept_dims:
            args += dim
        for dim in red_dims:
            args += dim
        units = n_out * parts
        if not form:
            ctx.launch(kernel, (units * render.LOCAL_SIZE,), (render.LOCAL_SIZE,), args)
        elif ctx.device.on_cpu:
            ctx.launch(kernel, (units,), (1,), args)
        else:
            ctx.launch(kernel, (-(-units // render.LOCAL_SIZE) * render.LOCAL_SIZE,), (render.LOCAL_SIZE,), args)

    if splits == 1:
        launch(per_thread, x.dtype.name, out.dtype.name, op.square, out, x, kept, red, n_red, 1, 0)
        return
    acc = op.acc_dtype
    partial = memo.get("partial")
    if partial is None or partial.size != n_out * splits:
        partial = memo["partial"] = GpuArray(ctx, (n_out * splits,), acc)
    dense = c_strides([k for k, _, _ in kept])
    first = [(k, s, c * splits) for (k, s, _), c in zip(kept, dense)]
    launch(per_thread, x.dtype.name, acc, op.square, partial, x, first, red, n_red, splits, 1)
    second = [(k, c * splits, o) for (k, _, o), c in zip(kept, dense)]
    pad = [(1, 0)] * (len(red) - 1)
    launch(ctx.device.on_cpu, acc, out.dtype.name, False, out, partial, second, pad + [(splits, 1)],
           splits, 1, 0)


def softmax_per_thread(ctx: Any) -> bool:
    """Whether (log)softmax runs a work-item per slice (an OpenCL device that is the CPU,
    PoCL: see ``render.softmax``) rather than a work-group per slice (a GPU)."""
    return bool(ctx.device.on_cpu)


class _GpuSoftmaxBase(GpuOp):
    __props__ = ("axis", "context_name")
    log = False

    def __init__(self, axis: int, context_name: str | None = None):
        self.axis = axis
        self.context_name = context_name

    def make_node(self, x: Variable, dtype: str) -> Apply:
        return Apply(self, [x], [self.out_type(dtype, x.type.broadcastable)()])

    def gpu_kernels(self, node: Apply) -> list[render.Kernel]:
        out = node.outputs[0].type
        return [render.softmax(out.context.dialect, node.inputs[0].type.dtype, out.dtype, out.ndim - 1,
                               self.log, per_thread=softmax_per_thread(out.context))]

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        ctx = context_of(node)
        dtype = np.dtype(node.outputs[0].type.dtype)
        out = self.output(output_storage[0], ctx, x.shape, dtype)
        kept = [i for i in range(x.ndim) if i != self.axis]
        groups = int(np.prod([x.shape[i] for i in kept]))
        if out.size:
            memo = _kernels(node)
            if "softmax" not in memo:
                memo["softmax"] = ctx.kernel(self.gpu_kernels(node)[0])
            args = [out.buffer, np.int64(out.offset), x.buffer, np.int64(x.offset),
                    np.int64(x.shape[self.axis]), np.int64(x.strides[self.axis]),
                    np.int64(out.strides[self.axis])]
            for i in kept:
                args += [np.int64(x.shape[i]), np.int64(x.strides[i]), np.int64(out.strides[i])]
            if softmax_per_thread(ctx):
                row = render.CPU_GROUP
                ctx.launch(memo["softmax"], (-(-groups // row) * row,), (row,), args + [np.int64(groups)])
            else:
                ctx.launch(memo["softmax"], (groups * render.LOCAL_SIZE,), (render.LOCAL_SIZE,), args)
        output_storage[0][0] = out


class GpuSoftmax(_GpuSoftmaxBase):
    pass


class GpuLogSoftmax(_GpuSoftmaxBase):
    log = True


def gemm_tiled(ctx: Any) -> bool:
    """Whether ``ctx`` runs the tiled GEMM (a GPU) or its row form (an OpenCL device that
    is the CPU, PoCL: see ``render.gemm``)."""
    return not ctx.device.on_cpu


def gemm_kernel(ctx: Any, dtype: str, n_batch: int = 0) -> render.Kernel:
    return render.gemm(ctx.dialect, dtype, n_batch, tiled=gemm_tiled(ctx))


def launch_gemm_kernel(ctx: Any, kernel: Any, m: int, n: int, count: int, args: list) -> None:
    """Launch a :func:`gemm_kernel` over an ``m`` x ``n`` output, ``count`` times (batches)."""
    if gemm_tiled(ctx):
        tile = render.TILE
        ctx.launch(kernel, (-(-n // tile) * tile, -(-m // tile) * tile, count), (tile, tile, 1), args)
    else:
        row = render.CPU_GROUP
        ctx.launch(kernel, (-(-n // row) * row, m, count), (row, 1, 1), args)


class GpuDot(GpuOp):
    """numpy.dot of matrices and vectors: cuBLAS on CUDA, the tiled GEMM kernel on OpenCL."""

    def make_node(self, a: Variable, b: Variable) -> Apply:
        bc = a.type.broadcastable[:-1] + (b.type.broadcastable[-1:] if b.type.ndim == 2 else ())
        return Apply(self, [a, b], [self.out_type(a.type.dtype, bc)()])

    def gpu_kernels(self, node: Apply) -> list[render.Kernel]:
        ctx = context_of(node)
        return [] if ctx.device.gemm is not None else [gemm_kernel(ctx, node.inputs[0].type.dtype)]

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b = inputs
        k_a, k_b = a.shape[-1], b.shape[0]
        if k_a != k_b:
            raise _mismatch("dot", HostNames(node), a, b, a.ndim - 1, 0)
        ctx = context_of(node)
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
                    memo["gemm"] = ctx.kernel(gemm_kernel(ctx, a.dtype.name))
                args = [c2.buffer, np.int64(c2.offset), np.int64(c2.strides[0]), np.int64(c2.strides[1])]
                for x in (a2, b2):
                    args += [x.buffer, np.int64(x.offset), np.int64(x.strides[0]), np.int64(x.strides[1])]
                args += [np.int64(m), np.int64(n), np.int64(k_a), a.dtype.type(1), a.dtype.type(0)]
                launch_gemm_kernel(ctx, memo["gemm"], m, n, 1, args)
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

    def gpu_kernels(self, node: Apply) -> list[render.Kernel]:
        value, out = node.inputs[0], node.outputs[0].type
        scalar = not isinstance(value.type, GpuArrayType)
        return [out.context.elemwise_kernel(TABLE["identity"], [value.type.dtype], out.dtype, out.ndim,
                                            scalar, (scalar,))]

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        value, *dims = inputs
        shape = tuple(int(s) for s in dims)
        if any(n < 0 for n in shape):
            raise ValueError(f"alloc: negative length in shape {shape}")
        tail = shape[len(shape) - value.ndim:] if value.ndim else ()
        if any(v != 1 and v != s for v, s in zip(value.shape, tail)):
            raise ValueError(f"alloc: the value {host_variable(node.inputs[0]).describe()} of shape "
                             f"{value.shape} does not broadcast to the shape {shape}")
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, shape, value.dtype)
        ctx.copy_into(out, value)
        output_storage[0][0] = out


class GpuDeepCopyOp(GpuOp, DeepCopyOp):
    """The copy a function puts on a GPU output that would share memory the caller may not
    hold (compile/output_copies.py): a new array made on the device, never through the host."""

    __props__ = ("context_name",)
    stays_on_cpu = None

    def make_node(self, x: Variable) -> Apply:
        if not isinstance(x.type, GpuArrayType):
            raise TypeError(f"GpuDeepCopyOp copies a GPU array, got {x.type} ({x}): use deep_copy_op")
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        out = self.output(output_storage[0], context_of(node), x.shape, x.dtype)
        context_of(node).copy_into(out, x)
        output_storage[0][0] = out


register_copy(GpuArrayType, CopyRule(op=lambda ttype: GpuDeepCopyOp(ttype.context_name)))
