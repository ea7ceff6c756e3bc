"""GPU ops that pick by position: argmax/argmin, rows taken at an index vector,
and set/increment at a basic index or at an index vector, with their lowerings.

Index vectors and basic-index entries stay host values: the ops check them on
the host (so errors read as the CPU ops' do) and upload only int64 rows.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from arignote.backends.kernels import render, render_index
from arignote.backends.gpu.array import GpuArray, to_gpu
from arignote.backends.gpu.context import GpuContext
from arignote.backends.gpu.ops import GpuOp, HostNames, _kernels, basic_view, host_variable
from arignote.backends.gpu.placement import _check_dtypes, register_lowering
from arignote.backends.gpu.type import context_of
from arignote.graph.basic import Apply, Variable
from arignote.scalar.ops import TABLE
from arignote.tensor.reduction import Argmax, Argmin
from arignote.tensor.subtensor import (AdvancedIncSubtensor1, AdvancedSubtensor1, IncSubtensor,
                                       _index_error, _numpy_index)


class GpuArgmax(GpuOp):
    """int64 positions of the maxima over ``axis`` (flattened in C order), as Argmax."""

    __props__ = ("axis", "context_name")
    largest = True
    what = "argmax"

    def __init__(self, axis: Sequence[int], context_name: str | None = None):
        self.axis = tuple(axis)
        self.context_name = context_name

    def make_node(self, x: Variable) -> Apply:
        broadcastable = [b for i, b in enumerate(x.type.broadcastable) if i not in self.axis]
        return Apply(self, [x], [self.out_type("int64", broadcastable)()])

    def gpu_kernels(self, node: Apply) -> list:
        out = node.outputs[0].type
        return [render_index.argreduce(out.context.dialect, node.inputs[0].type.dtype, out.ndim,
                                       len(self.axis), self.largest)]

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        if any(x.shape[a] == 0 for a in self.axis):
            raise ValueError(f"{self.what} of {host_variable(node.inputs[0]).describe()} (shape "
                             f"{x.shape}) over axes {self.axis}: there are no elements to choose from")
        kept = [i for i in range(x.ndim) if i not in self.axis]
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, tuple(x.shape[i] for i in kept), np.dtype("int64"))
        if out.size:
            memo = _kernels(node)
            if "argreduce" not in memo:
                memo["argreduce"] = ctx.kernel(self.gpu_kernels(node)[0])
            args = [out.buffer, np.int64(out.offset), x.buffer, np.int64(x.offset),
                    np.int64(int(np.prod([x.shape[a] for a in self.axis])))]
            for k, i in enumerate(kept):
                args += [np.int64(x.shape[i]), np.int64(x.strides[i]), np.int64(out.strides[k])]
            for a in self.axis:
                args += [np.int64(x.shape[a]), np.int64(x.strides[a])]
            ctx.launch(memo["argreduce"], (out.size * render.LOCAL_SIZE,), (render.LOCAL_SIZE,), args)
        output_storage[0][0] = out


class GpuArgmin(GpuArgmax):
    """int64 positions of the minima over ``axis``; see GpuArgmax."""

    largest = False
    what = "argmin"


def _rows(node: Apply, x: GpuArray, ilist: np.ndarray) -> np.ndarray:
    """``ilist`` as int64 rows of ``x`` in range, or the CPU op's IndexError."""
    n = x.shape[0]
    bad = (ilist < -n) | (ilist >= n)
    if bad.any():
        err = IndexError(f"index {int(ilist[bad][0])} is out of bounds for axis 0 with size {n}")
        raise _index_error(HostNames(node), x, (ilist,), err)
    return np.where(ilist < 0, ilist + n, ilist).astype("int64")


def _grid(size: int) -> tuple[tuple[int], tuple[int]]:
    groups = min(-(-size // render.LOCAL_SIZE), 4096)
    return (groups * render.LOCAL_SIZE,), (render.LOCAL_SIZE,)


class GpuAdvancedSubtensor1(GpuOp):
    """``x[ilist]`` on the first axis (numpy.take) for a host integer vector ``ilist``."""

    def make_node(self, x: Variable, ilist: Variable) -> Apply:
        return Apply(self, [x, ilist], [self.out_type(x.type.dtype, (False,) + x.type.broadcastable[1:])()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, ilist = inputs
        rows = _rows(node, x, ilist)
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, (len(rows),) + x.shape[1:], x.dtype)
        if out.size:
            memo = _kernels(node)
            if "take" not in memo:
                memo["take"] = ctx.kernel(render_index.take(ctx.dialect, x.dtype.name, x.ndim))
            inner = int(np.prod(x.shape[1:]))
            args = [out.buffer, np.int64(out.offset), x.buffer, np.int64(x.offset),
                    np.int64(x.strides[0]), to_gpu(ctx, rows).buffer, np.int64(out.size),
                    np.int64(inner)]
            for d in range(1, x.ndim):
                args += [np.int64(x.shape[d]), np.int64(x.strides[d])]
            ctx.launch(memo["take"], *_grid(out.size), args)
        output_storage[0][0] = out


def _fresh_copy(op: GpuOp, cell: list, ctx: GpuContext, x: GpuArray) -> GpuArray:
    out = op.output(cell, ctx, x.shape, x.dtype)
    if out is x:  # never write into the input
        out = GpuArray(ctx, x.shape, x.dtype)
    ctx.copy_into(out, x)
    return out


def _check_value(node: Apply, x: GpuArray, index: tuple, target: tuple, y: GpuArray) -> None:
    """The CPU ops' error (naming ``x`` and the index) when ``y`` does not fit ``x[index]``."""
    if not _broadcasts(target, y.shape):
        err = ValueError(f"could not broadcast the value {host_variable(node.inputs[1]).describe()} "
                         f"of shape {y.shape} into the indexed shape {target}")
        raise _index_error(HostNames(node), x, index, err)


def _broadcasts(target: tuple, shape: tuple) -> bool:
    try:
        return np.broadcast_shapes(target, shape) == target
    except ValueError:
        return False


class GpuIncSubtensor(GpuOp):
    """A copy of ``x`` with ``y`` written (``set_instead_of_inc``) or added at a basic index."""

    __props__ = ("idx_list", "set_instead_of_inc", "context_name")

    def __init__(self, idx_list: Sequence, set_instead_of_inc: bool, context_name: str | None = None):
        self.idx_list = tuple(idx_list)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.context_name = context_name

    def make_node(self, x: Variable, y: Variable, *entries: Variable) -> Apply:
        return Apply(self, [x, y, *entries], [self.out_type(x.type.dtype, x.type.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, y, *entries = inputs
        ctx = context_of(node)
        index = _numpy_index(self.idx_list, entries)
        try:
            basic_view(x, index)
        except IndexError as err:
            raise _index_error(HostNames(node), x, index, err) from None
        out = _fresh_copy(self, output_storage[0], ctx, x)
        view = basic_view(out, index)
        _check_value(node, x, index, view.shape, y)
        memo = _kernels(node).setdefault("write", {})
        if self.set_instead_of_inc:
            ctx.run_elemwise(memo, TABLE["identity"], view, [y])
        else:  # each element reads and writes only its own place, so in place is safe
            ctx.run_elemwise(memo, TABLE["add"], view, [view, y])
        output_storage[0][0] = out


class GpuAdvancedIncSubtensor1(GpuOp):
    """A copy of ``x`` with rows ``ilist`` set to, or incremented by, ``y``;
    repeated indices accumulate in order (numpy.add.at), with no atomics."""

    __props__ = ("set_instead_of_inc", "context_name")

    def __init__(self, set_instead_of_inc: bool, context_name: str | None = None):
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.context_name = context_name

    def make_node(self, x: Variable, y: Variable, ilist: Variable) -> Apply:
        return Apply(self, [x, y, ilist], [self.out_type(x.type.dtype, x.type.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, y, ilist = inputs
        ctx = context_of(node)
        rows = _rows(node, x, ilist)
        target = (len(rows),) + x.shape[1:]
        _check_value(node, x, (ilist,), target, y)
        out = _fresh_copy(self, output_storage[0], ctx, x)
        order = np.argsort(rows, kind="stable")
        distinct, starts = np.unique(rows[order], return_index=True)
        inner = int(np.prod(x.shape[1:]))
        size = len(distinct) * inner
        if size:
            memo = _kernels(node)
            if "inc_rows" not in memo:
                memo["inc_rows"] = ctx.kernel(render_index.inc_rows(
                    ctx.dialect, x.dtype.name, y.dtype.name, x.ndim, self.set_instead_of_inc))
            pad = x.ndim - y.ndim
            ystrides = [0 if d < pad or y.shape[d - pad] == 1 else y.strides[d - pad]
                        for d in range(x.ndim)]
            starts = np.append(starts, len(rows)).astype("int64")
            args = [out.buffer, np.int64(out.offset), np.int64(out.strides[0]), y.buffer,
                    np.int64(y.offset), np.int64(ystrides[0])]
            args += [to_gpu(ctx, a.astype("int64")).buffer for a in (distinct, order, starts)]
            args += [np.int64(size), np.int64(inner)]
            for d in range(1, x.ndim):
                args += [np.int64(x.shape[d]), np.int64(out.strides[d]), np.int64(ystrides[d])]
            ctx.launch(memo["inc_rows"], *_grid(size), args)
        output_storage[0][0] = out


# ------------------------------------------------------------------ lowerings
def _argreduce(cls: type) -> Callable:
    def lower(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
        x = node.inputs[0]
        _check_dtypes(ctx, [x])
        return [cls(node.op.axis)(on_gpu(x))]
    return lower


register_lowering(Argmax)(_argreduce(GpuArgmax))
register_lowering(Argmin)(_argreduce(GpuArgmin))


@register_lowering(AdvancedSubtensor1)
def _take(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    x, ilist = node.inputs
    _check_dtypes(ctx, [x])
    return [GpuAdvancedSubtensor1()(on_gpu(x), ilist)]


@register_lowering(IncSubtensor)
def _inc_subtensor(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    x, y, *entries = node.inputs
    _check_dtypes(ctx, [x, y])
    op = GpuIncSubtensor(node.op.idx_list, node.op.set_instead_of_inc)
    return [op(on_gpu(x), on_gpu(y), *entries)]


@register_lowering(AdvancedIncSubtensor1)
def _inc_rows(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    x, y, ilist = node.inputs
    _check_dtypes(ctx, [x, y])
    return [GpuAdvancedIncSubtensor1(node.op.set_instead_of_inc)(on_gpu(x), on_gpu(y), ilist)]

