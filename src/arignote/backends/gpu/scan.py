"""Scan on a GPU: the loop's buffers live on the device and its inner graph runs there.

The placement pass turns a ``Scan`` into a ``GpuScan`` whose outer sequences,
state buffers, carried values and non-sequences are GPU arrays, transferred
(if at all) once, at the loop's boundary. Each step then hands the inner
function views of those arrays (a row is a view: no copy) and copies the
step's results into the output buffers with a device kernel, so nothing
crosses the bus per step. The inner graph is rebuilt with GPU inputs and
outputs (``HostFromGpu`` of each new input, ``GpuFromHost`` of each output);
compiling it runs the placement pass on it, which moves its nodes to the
device and cancels those transfers wherever a node has a kernel.

Values that stay on the host: integer and bool scalars per step (indices,
counters and shapes, read by host code such as shape arguments and the
stopping condition), values of a dtype the device lacks, and non-array
values such as random generator states.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Sequence

from arignote.backends.gpu.array import GpuArray, to_gpu
from arignote.backends.gpu.context import GpuContext
from arignote.backends.gpu.ops import GpuOp
from arignote.backends.gpu.placement import StaysOnCpu, register_lowering
from arignote.backends.gpu.type import GpuArrayType, GpuFromHost, HostFromGpu
from arignote.graph.basic import Apply, Variable
from arignote.graph.traversal import clone_get_equiv
from arignote.scalar.dtypes import DISCRETE
from arignote.scan_module.op import Scan
from arignote.tensor.type import TensorType


class GpuScan(Scan, GpuOp):
    """A Scan whose arrays may be GPU arrays: the same loop, with device views and copies."""

    def __str__(self) -> str:
        return f"GpuScan{{{self.name}}}" if self.name else "GpuScan"

    @staticmethod
    def _is_array(t: Any) -> bool:
        return isinstance(t, (TensorType, GpuArrayType))

    @staticmethod
    def _array_type(like: Any, broadcastable: Sequence[bool]) -> Any:
        if isinstance(like, GpuArrayType):
            return GpuArrayType(like.dtype, broadcastable, like.context_name)
        return TensorType(like.dtype, broadcastable)

    @staticmethod
    def _empty(like: Any, shape: tuple, dtype: Any) -> Any:
        if isinstance(like, (GpuArray, GpuArrayType)):
            return GpuArray(like.context, shape, dtype)
        return Scan._empty(like, shape, dtype)

    @staticmethod
    def _row(a: Any, i: int) -> Any:
        if isinstance(a, GpuArray):
            return a.view(a.shape[1:], a.strides[1:], a.offset + i * a.strides[0])
        return a[i, ...]

    @staticmethod
    def _head(a: Any, k: int) -> Any:
        if isinstance(a, GpuArray):
            return a.view((k,) + a.shape[1:], a.strides, a.offset)
        return a[:k]

    @staticmethod
    def _write(dst: Any, value: Any) -> None:
        if isinstance(dst, GpuArray):
            dst.context.copy_into(dst, value if isinstance(value, GpuArray) else to_gpu(dst.context, value))
        else:
            dst[...] = value


def _stays_on_host(ctx: GpuContext, t: Any, step_ndim: int) -> bool:
    return (not isinstance(t, TensorType) or ctx.supports(t.dtype) is not None
            or (step_ndim == 0 and t.dtype in DISCRETE))


def _on_device(var: Variable) -> Variable:
    """An inner output as a GPU value: the GPU value it was copied from, else a transfer."""
    if var.owner is not None and isinstance(var.owner.op, HostFromGpu):
        return var.owner.inputs[0]
    return GpuFromHost()(var)


@register_lowering(Scan)
def _scan(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    op = node.op
    n_steps, seqs, inits, carries, nonseqs = op.split_outer_inputs(node.inputs)
    in_seqs, in_states, in_carries, in_nonseqs = op.split_inner_inputs()
    moved: dict[Variable, Variable] = {}  # inner input -> its GPU replacement

    def place(outer: Variable, inner: list[Variable], step_ndim: int) -> Variable:
        if _stays_on_host(ctx, outer.type, step_ndim):
            return outer
        for var in inner:
            moved[var] = GpuArrayType(var.type.dtype, var.type.broadcastable)(var.name)
            moved[var].tag.trace = var.tag.trace  # errors in the step point at the outer variable
        return on_gpu(outer)

    outer = [n_steps]
    outer += [place(s, vs, s.type.ndim - 1) for s, vs in zip(seqs, in_seqs)]
    outer += [place(i, vs, i.type.ndim - 1) for i, vs in zip(inits, in_states)]
    outer += [place(c, [v], getattr(c.type, "ndim", 0)) for c, v in zip(carries, in_carries)]
    outer += [place(x, [v], getattr(x.type, "ndim", 0)) for x, v in zip(nonseqs, in_nonseqs)]

    S, N, C = op.n_states, op.n_nit, op.n_carry
    outs = list(op.inner_outputs)
    to_device = [in_states[k][0] in moved for k in range(S)]
    to_device += [not _stays_on_host(ctx, o.type, o.type.ndim) for o in outs[S:S + N]]
    to_device += [v in moved for v in in_carries]
    to_device += [False] * (len(outs) - S - N - C)  # the stopping condition is read on the host
    if not moved and not any(to_device):
        raise StaysOnCpu("none of the loop's values can live on the device (host scalars, "
                         "non-array values or dtypes the device lacks); its inner graph is "
                         "placed on its own")
    replace = {old: HostFromGpu()(new) for old, new in moved.items()}
    kept = [v for v in op.inner_inputs if v not in moved]
    equiv = clone_get_equiv(kept + list(replace), outs, copy_inputs=False, replace=replace)
    new_outs = [_on_device(equiv[o]) if dev else equiv[o] for o, dev in zip(outs, to_device)]
    gpu_op = GpuScan([moved.get(v, v) for v in op.inner_inputs], new_outs, op.seq_taps,
                     op.state_taps, op.n_nit, op.n_carry, op.n_nonseq, op.as_while,
                     op.truncate_gradient, op.name, op.mode, op.allow_gc, op.profile, op.kept_rows)
    return gpu_op.make_node(*outer).outputs
