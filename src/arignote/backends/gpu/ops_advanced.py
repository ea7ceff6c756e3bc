"""Integer-range and integer-array indexing on the device: ``arange``, ``x[i0, i1, ...]``
and its gradient (``add.at`` at those indices), with their lowerings.

The index arrays are device arrays (``log(p)[arange(n), y]`` with the labels
on the device moves nothing). An index out of range raises numpy's IndexError,
naming the user's variables, as on the CPU, before any shared variable
changes: from the host, where it knows the index arrays' ranges
(``GpuArray.bounds``: labels uploaded from the host, ``arange``, slices and
integer casts of a shared label vector), and nothing is read back; else from
a status the checking form of the kernel writes and the op reads back.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from arignote.backends import linking
from arignote.backends.cpu.thunks import make_thunk
from arignote.backends.gpu.array import GpuArray
from arignote.backends.gpu.context import GpuContext
from arignote.backends.gpu.ops import GpuOp, HostNames, _kernels
from arignote.backends.gpu.prebuild import _gpu_thunk
from arignote.backends.gpu.placement import StaysOnCpu, _check_dtypes, register_lowering
from arignote.backends.gpu.type import GpuArrayType, context_of
from arignote.backends.kernels import render_index
from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import INTEGER
from arignote.tensor.alloc import ARange
from arignote.tensor.subtensor import (AdvancedBooleanIncSubtensor, AdvancedBooleanSubtensor,
                                       AdvancedIncSubtensor, AdvancedSubtensor, index_error)
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
            last = start + (size - 1) * step
            out.bounds = (min(start, last), max(start, last), True)
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
    """Shared by the read and the write: the index arguments and the bounds check.

    Where the host knows the range of every index array (``GpuArray.bounds``)
    the check is done there, before the launch, and the kernel checks nothing;
    otherwise the checking form writes a bad index into the status (``Statuses``)
    read back once per call."""

    def _host_check(self, node: Apply, x: GpuArray, indices: list[GpuArray]) -> bool:
        """True when the host proves every index in range; IndexError when it proves one
        out; False when it cannot tell (the kernel then checks)."""
        proved = True
        for m, i in enumerate(indices):
            bounds = i.bounds
            if bounds is None:
                proved = False
                continue
            lo, hi, exact = bounds
            n = x.shape[m]
            if -n <= lo and hi < n:
                continue
            if not exact:
                proved = False
                continue
            self._raise(node, x, m, hi if hi >= n else lo)
        return proved

    def _raise(self, node: Apply, x: GpuArray, axis: int, value: int) -> None:
        err = IndexError(f"index {value} is out of bounds for axis {axis} with size {x.shape[axis]}")
        names = HostNames(node)
        raise index_error(names, x, tuple(names.inputs[self.first_index:]), err)

    def _index_args(self, x: GpuArray, indices: list[GpuArray], shape: tuple, status: tuple | None,
                    size: int, inner: int) -> list:
        args = [size, inner] if status is None else [*status, size, inner]
        for i in indices:
            args += [i.buffer, i.offset, *_strides_over(shape, i)]
        args += list(shape)
        k = len(indices)
        args += [v for m in range(k) for v in (x.shape[m], x.strides[m])]
        args += [v for d in range(k, x.ndim) for v in (x.shape[d], x.strides[d])]
        return args

    def _status(self, node: Apply, ctx: GpuContext, x: GpuArray) -> tuple:
        """(buffer, element offset) of this node's slots in its status, which this call
        will read back (now, or with the rest of its Function's, after its thunks)."""
        found = getattr(node.tag, "statuses", None)
        if found is None:  # not linked in a Function: a status of its own, read at once
            statuses = Statuses(ctx)
            found = node.tag.statuses = (statuses, statuses.add(node), False)
        statuses, slot, _ = found
        statuses.launched.append((slot, x))
        return statuses.buffer(), slot

    def _checked(self, node: Apply) -> None:
        statuses, _, deferred = node.tag.statuses
        if not deferred:
            statuses.check()


class Statuses:
    """The bounds statuses of the checking index kernels of one Function on one context,
    read back as one, once per call (by the call check the Function runs after its thunks:
    before any output or update is written), and only in a call where such a kernel ran.

    Each node has a (flag, value) pair per index array: a kernel that meets an index out
    of range sets the flag and writes the index; all writers of a pair write values of
    the same array, so the message always matches its axis."""

    def __init__(self, ctx: GpuContext):
        self.ctx = ctx
        self.nodes: list[Apply] = []
        self.slots: list[int] = []  # each node's first element in the status
        self.size = 0
        self.status: GpuArray | None = None
        self.launched: list[tuple[int, GpuArray]] = []  # (slot, indexed array) of this call

    def add(self, node: Apply) -> int:
        slot = self.size
        self.nodes.append(node)
        self.slots.append(slot)
        self.size += 2 * (len(node.inputs) - node.op.first_index)
        return slot

    def buffer(self) -> Any:
        if self.status is None:
            self.status = GpuArray(self.ctx, (self.size,), "int64")
            self._reset()
        return self.status.buffer

    def _reset(self) -> None:
        self.ctx.copy_into(self.status, np.zeros((), "int64"))

    def discard(self) -> None:
        """Forget a failed call's launches: flags they may have set are no later call's."""
        if self.launched:
            self.launched = []
            self._reset()

    def check(self) -> None:
        """Raise numpy's IndexError for the first bad index this call's kernels met."""
        if not self.launched:
            return
        launched, self.launched = self.launched, []
        found = self.ctx.read_status(self.status)
        bad = np.flatnonzero(found[0::2])
        if not bad.size:
            return
        self._reset()
        k = int(np.searchsorted(self.slots, 2 * bad[0], side="right")) - 1
        node, slot = self.nodes[k], self.slots[k]
        x = next(x for s, x in reversed(launched) if s == slot)
        try:
            node.op._raise(node, x, (2 * int(bad[0]) - slot) // 2, int(found[2 * bad[0] + 1]))
        except IndexError as err:
            err.failed_node = node  # the Function's report names this node, not the check's
            raise


@make_thunk.register(_IndexArrays)
def _index_thunk(op: _IndexArrays, node: Apply, input_cells: list[list], output_cells: list[list]):
    """The GPU thunk; in a linking Function, the node's slots in the Function's status."""
    memo = linking.link_memo()
    if memo is not None:
        ctx = context_of(node)
        statuses = memo.get(("gpu statuses", ctx))
        if statuses is None:
            statuses = memo["gpu statuses", ctx] = Statuses(ctx)
            linking.add_call_check(node, statuses.check, statuses.discard)
        node.tag.statuses = (statuses, statuses.add(node), True)
    return _gpu_thunk(op, node, input_cells, output_cells)


class GpuAdvancedSubtensor(_IndexArrays):
    """``x[i0, i1, ...]`` with integer index arrays on the leading axes (a gather)."""

    first_index = 1  # inputs from here on are the index arrays

    def make_node(self, x: Variable, out_type, *indices: Variable) -> Apply:
        return Apply(self, [x, *indices], [self.out_type(x.type.dtype, out_type.broadcastable)()])

    def _kernel(self, node: Apply, checked: bool):
        x, *indices = node.inputs
        b_ndim = max(i.type.ndim for i in indices)
        return render_index.gather(context_of(node).dialect, x.type.dtype,
                                   [i.type.dtype for i in indices], b_ndim, x.type.ndim, checked)

    def gpu_kernels(self, node: Apply) -> list:
        return [self._kernel(node, checked) for checked in (False, True)]

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, *indices = inputs
        shape = _broadcast(node, x, indices)
        ctx = context_of(node)
        rest = x.shape[len(indices):]
        out = self.output(output_storage[0], ctx, shape + rest, x.dtype)
        if out.size:
            checked = not self._host_check(node, x, indices)
            memo = _kernels(node)
            kernel = memo.get(("gather", checked))
            if kernel is None:
                kernel = memo["gather", checked] = ctx.kernel(self._kernel(node, checked))
            status = self._status(node, ctx, x) if checked else None
            args = [out.buffer, out.offset, x.buffer, x.offset]
            args += self._index_args(x, indices, _padded(shape, node.inputs[1:]), status, out.size,
                                     int(np.prod(rest)))
            ctx.launch(kernel, *_grid(out.size), args)
            if checked:
                self._checked(node)
        output_storage[0][0] = out


def _padded(shape: tuple, index_vars: list[Variable]) -> tuple:
    """The index arrays' broadcast shape with as many dimensions as the kernel was built for."""
    n = max(v.type.ndim for v in index_vars)
    return (1,) * (n - len(shape)) + tuple(shape)


class GpuAdvancedIncSubtensor(_IndexArrays):
    """A copy of ``x`` with ``y`` added at ``x[i0, i1, ...]`` (repeats add up, as
    ``numpy.add.at``; atomic additions, so repeated float indices add in any order)."""

    first_index = 2

    def make_node(self, x: Variable, y: Variable, *indices: Variable) -> Apply:
        return Apply(self, [x, y, *indices], [self.out_type(x.type.dtype, x.type.broadcastable)()])

    def _kernel(self, node: Apply, checked: bool):
        x, y, *indices = node.inputs
        b_ndim = max(i.type.ndim for i in indices)
        return render_index.scatter_add(context_of(node).dialect, x.type.dtype, y.type.dtype,
                                        [i.type.dtype for i in indices], b_ndim, x.type.ndim, checked)

    def gpu_kernels(self, node: Apply) -> list:
        return [self._kernel(node, checked) for checked in (False, True)]

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
            checked = not self._host_check(node, x, indices)
            memo = _kernels(node)
            kernel = memo.get(("scatter", checked))
            if kernel is None:
                kernel = memo["scatter", checked] = ctx.kernel(self._kernel(node, checked))
            status = self._status(node, ctx, x) if checked else None
            padded = _padded(shape, node.inputs[2:])
            ystrides = _strides_over(padded + x.shape[len(indices):], y)
            args = [out.buffer, out.offset, y.buffer, y.offset]
            args += self._index_args(out, indices, padded, status, size, size // max(int(np.prod(shape)), 1))
            args += ystrides
            ctx.launch(kernel, *_grid(size), args)
            if checked:
                self._checked(node)
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


@register_lowering(AdvancedBooleanSubtensor)  # to say why a boolean mask stays on the CPU
@register_lowering(AdvancedSubtensor)
def _advanced_subtensor(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    x, *entries = node.inputs
    _integer_arrays(node, node.op.idx_list, entries)
    _check_dtypes(ctx, [x, *entries])
    op = GpuAdvancedSubtensor()
    return [op.make_node(on_gpu(x), node.outputs[0].type, *[on_gpu(e) for e in entries]).outputs[0]]


@register_lowering(AdvancedBooleanIncSubtensor)
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
