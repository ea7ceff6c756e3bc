"""Integer-range and integer-array indexing on the device: ``arange``, ``x[i0, i1, ...]``
and its gradient (``add.at`` at those indices), with their lowerings.

The index arrays are device arrays (``log(p)[arange(n), y]`` with the labels
on the device moves nothing): the kernels check them there, and report the
first bad one in a two-element status the op reads back after the launch
(sixteen bytes), so an index out of range raises numpy's IndexError, naming
the user's variables, as on the CPU.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arignote.backends.gpu.array import GpuArray
from arignote.backends.gpu.context import GpuContext
from arignote.backends.gpu.ops import GpuOp, HostNames, _kernels
from arignote.backends.gpu.placement import StaysOnCpu, _check_dtypes, register_lowering
from arignote.backends.gpu.type import GpuArrayType, context_of
from arignote.backends.kernels import render_index
from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import INTEGER
from arignote.tensor.alloc import ARange
from arignote.tensor.subtensor import AdvancedIncSubtensor, AdvancedSubtensor, index_error
from arignote.tensor.subtensor.index import ARRAY


def _grid(size: int) -> tuple[tuple[int], tuple[int]]:
    from arignote.backends.kernels.render import LOCAL_SIZE
    groups = min(-(-size // LOCAL_SIZE), 4096)
    return (groups * LOCAL_SIZE,), (LOCAL_SIZE,)


class GpuARange(GpuOp):
    """``numpy.arange(start, stop, step)`` of an integer dtype, from host scalars."""

    __props__ = ("dtype", "context_name")

    def __init__(self, dtype: str, context_name: str | None = None):
        self.dtype = dtype
        self.context_name = context_name

    def make_node(self, start: Variable, stop: Variable, step: Variable) -> Apply:
        return Apply(self, [start, stop, step], [self.out_type(self.dtype, (False,))()])

    def gpu_kernels(self, node: Apply) -> list:
        return [render_index.arange(context_of(node).dialect, self.dtype)]

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        start, stop, step = (int(v) for v in inputs)
        if step == 0:
            raise ValueError(f"arange: the step {node.inputs[2].describe()} is 0; use a nonzero step")
        size = len(range(start, stop, step))
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, (size,), np.dtype(self.dtype))
        if size:
            memo = _kernels(node)
            if "arange" not in memo:
                memo["arange"] = ctx.kernel(self.gpu_kernels(node)[0])
            ctx.launch(memo["arange"], *_grid(size), [out.buffer, out.offset, start, step, size])
        output_storage[0][0] = out


def _broadcast(node: Apply, x: GpuArray, indices: list[GpuArray]) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*[i.shape for i in indices])
    except ValueError as err:
        raise index_error(HostNames(node), x, tuple(indices), IndexError(
            "shape mismatch: indexing arrays could not be broadcast together with shapes "
            + " ".join(str(i.shape) for i in indices))) from err


def _strides_over(shape: tuple, a: GpuArray) -> list[int]:
    """``a``'s element strides over ``shape`` (it broadcasts to it): 0 where it repeats."""
    pad = len(shape) - a.ndim
    return [0 if d < pad or a.shape[d - pad] == 1 else a.strides[d - pad] for d in range(len(shape))]


class _IndexArrays(GpuOp):
    """Shared by the read and the write: the index arguments and the status check."""

    def _index_args(self, x: GpuArray, indices: list[GpuArray], shape: tuple, status: GpuArray,
                    size: int, inner: int) -> list:
        args = [status.buffer, size, inner]
        for i in indices:
            args += [i.buffer, i.offset, *_strides_over(shape, i)]
        args += list(shape)
        k = len(indices)
        args += [v for m in range(k) for v in (x.shape[m], x.strides[m])]
        args += [v for d in range(k, x.ndim) for v in (x.shape[d], x.strides[d])]
        return args

    @staticmethod
    def _status(node: Apply, ctx: GpuContext) -> GpuArray:
        memo = _kernels(node)
        status = memo.get("status")
        if status is None:
            status = memo["status"] = GpuArray(ctx, (2,), "int64")
            ctx.copy_into(status, np.zeros((), "int64"))
        return status

    def _check(self, node: Apply, ctx: GpuContext, x: GpuArray, indices: list, status: GpuArray,
               first: int) -> None:
        """Read the status the kernel wrote; raise numpy's IndexError for a bad index."""
        found = ctx.read_status(status)
        if found[0]:
            ctx.copy_into(status, np.zeros((), "int64"))
            axis = int(found[0]) - 1
            err = IndexError(f"index {int(found[1])} is out of bounds for axis {axis} with size "
                             f"{x.shape[axis]}")
            raise index_error(HostNames(node), x, tuple(HostNames(node).inputs[first:]), err)


class GpuAdvancedSubtensor(_IndexArrays):
    """``x[i0, i1, ...]`` with integer index arrays on the leading axes (a gather)."""

    def make_node(self, x: Variable, out_type, *indices: Variable) -> Apply:
        return Apply(self, [x, *indices], [self.out_type(x.type.dtype, out_type.broadcastable)()])

    def _kernel(self, node: Apply):
        x, *indices = node.inputs
        b_ndim = max(i.type.ndim for i in indices)
        return render_index.gather(context_of(node).dialect, x.type.dtype,
                                   [i.type.dtype for i in indices], b_ndim, x.type.ndim)

    def gpu_kernels(self, node: Apply) -> list:
        return [self._kernel(node)]

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, *indices = inputs
        shape = _broadcast(node, x, indices)
        ctx = context_of(node)
        rest = x.shape[len(indices):]
        out = self.output(output_storage[0], ctx, shape + rest, x.dtype)
        if out.size:
            memo = _kernels(node)
            if "gather" not in memo:
                memo["gather"] = ctx.kernel(self._kernel(node))
            status = self._status(node, ctx)
            args = [out.buffer, out.offset, x.buffer, x.offset]
            args += self._index_args(x, indices, _padded(shape, node.inputs[1:]), status, out.size,
                                     int(np.prod(rest)))
            ctx.launch(memo["gather"], *_grid(out.size), args)
            self._check(node, ctx, x, indices, status, 1)
        output_storage[0][0] = out


def _padded(shape: tuple, index_vars: list[Variable]) -> tuple:
    """The index arrays' broadcast shape with as many dimensions as the kernel was built for."""
    n = max(v.type.ndim for v in index_vars)
    return (1,) * (n - len(shape)) + tuple(shape)


class GpuAdvancedIncSubtensor(_IndexArrays):
    """A copy of ``x`` with ``y`` added at ``x[i0, i1, ...]`` (repeats add up, as
    ``numpy.add.at``; atomic additions, so repeated float indices add in any order)."""

    def make_node(self, x: Variable, y: Variable, *indices: Variable) -> Apply:
        return Apply(self, [x, y, *indices], [self.out_type(x.type.dtype, x.type.broadcastable)()])

    def _kernel(self, node: Apply):
        x, y, *indices = node.inputs
        b_ndim = max(i.type.ndim for i in indices)
        return render_index.scatter_add(context_of(node).dialect, x.type.dtype, y.type.dtype,
                                        [i.type.dtype for i in indices], b_ndim, x.type.ndim)

    def gpu_kernels(self, node: Apply) -> list:
        return [self._kernel(node)]

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, y, *indices = inputs
        shape = _broadcast(node, x, indices)
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, x.shape, x.dtype)
        if out is x:
            out = GpuArray(ctx, x.shape, x.dtype)
        ctx.copy_into(out, x)
        target = shape + x.shape[len(indices):]
        try:
            if np.broadcast_shapes(target, y.shape) != target:
                raise ValueError
        except ValueError:
            err = ValueError(f"could not broadcast the value of shape {y.shape} into the indexed "
                             f"shape {target}")
            raise index_error(HostNames(node), x, tuple(HostNames(node).inputs[2:]), err) from None
        size = int(np.prod(target))
        if size:
            memo = _kernels(node)
            if "scatter" not in memo:
                memo["scatter"] = ctx.kernel(self._kernel(node))
            status = self._status(node, ctx)
            padded = _padded(shape, node.inputs[2:])
            ystrides = _strides_over(padded + x.shape[len(indices):], y)
            args = [out.buffer, out.offset, y.buffer, y.offset]
            args += self._index_args(out, indices, padded, status, size, size // max(int(np.prod(shape)), 1))
            args += ystrides
            ctx.launch(memo["scatter"], *_grid(size), args)
            self._check(node, ctx, x, indices, status, 2)
        output_storage[0][0] = out


# ------------------------------------------------------------------ lowerings
@register_lowering(ARange)
def _arange(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    raise StaysOnCpu("its bounds are host scalars: it moves to the device only where a device "
                     "node needs its values (then it is computed there, not uploaded)")


def gpu_arange(node: Apply, ctx: GpuContext) -> Variable | None:
    """The device twin of an integer ARange node (None for other dtypes)."""
    if node.op.dtype not in INTEGER or ctx.supports(node.op.dtype) is not None:
        return None
    return GpuARange(node.op.dtype)(*node.inputs)


def _integer_arrays(node: Apply, idx_list: tuple, entries: list) -> None:
    if any(item != ARRAY for item in idx_list) or not entries:
        raise StaysOnCpu("only integer index arrays on the leading axes have a GPU kernel "
                         "(no slices, new axes or boolean masks among them)")
    if any(e.type.dtype not in INTEGER for e in entries):
        raise StaysOnCpu("only integer index arrays have a GPU kernel (a boolean mask: no)")


@register_lowering(AdvancedSubtensor)
def _advanced_subtensor(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    x, *entries = node.inputs
    _integer_arrays(node, node.op.idx_list, entries)
    _check_dtypes(ctx, [x, *entries])
    op = GpuAdvancedSubtensor()
    return [op.make_node(on_gpu(x), node.outputs[0].type, *[on_gpu(e) for e in entries]).outputs[0]]


@register_lowering(AdvancedIncSubtensor)
def _advanced_inc_subtensor(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    x, y, *entries = node.inputs
    if node.op.set_instead_of_inc:
        raise StaysOnCpu("setting at index arrays has no GPU kernel (only adding: the gradient)")
    _integer_arrays(node, node.op.idx_list, entries)
    _check_dtypes(ctx, [x, y, *entries])
    if x.type.dtype not in render_index.ATOMIC_DTYPES:
        raise StaysOnCpu(f"no atomic addition of {x.type.dtype} on the device")
    if not isinstance(y.type, GpuArrayType) and y.type.ndim > x.type.ndim:
        raise StaysOnCpu("the value has more dimensions than the indexed array")
    return [GpuAdvancedIncSubtensor()(on_gpu(x), on_gpu(y), *[on_gpu(e) for e in entries])]
