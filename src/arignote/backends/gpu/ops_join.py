"""GpuJoin: concatenate (and so stack) on the device; each input is copied into
its slice of the output by the strided copy kernel, converting its dtype."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arignote.backends.gpu.context import GpuContext
from arignote.backends.gpu.ops import GpuOp, basic_view, host_variable
from arignote.backends.gpu.placement import StaysOnCpu, _check_dtypes, register_lowering
from arignote.backends.gpu.type import GpuArrayType, HostFromGpu, context_of
from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import DISCRETE
from arignote.tensor.join import Join


class GpuJoin(GpuOp):
    """Concatenate GPU arrays of equal rank along ``axis`` into ``dtype``."""

    __props__ = ("axis", "context_name")

    def __init__(self, axis: int, context_name: str | None = None):
        self.axis = int(axis)
        self.context_name = context_name

    def make_node(self, out_type, *tensors: Variable) -> Apply:
        return Apply(self, list(tensors), [self.out_type(out_type.dtype, out_type.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        axis = self.axis
        first = inputs[0].shape
        if any(a.shape[:axis] + a.shape[axis + 1:] != first[:axis] + first[axis + 1:] for a in inputs):
            shapes = ", ".join(f"{host_variable(v).describe()}: {a.shape}"
                               for v, a in zip(node.inputs, inputs))
            raise ValueError(f"join along axis {axis}: the shapes differ outside that axis "
                             f"({shapes})")
        shape = first[:axis] + (sum(a.shape[axis] for a in inputs),) + first[axis + 1:]
        ctx = context_of(node)
        out = self.output(output_storage[0], ctx, shape, np.dtype(node.outputs[0].type.dtype))
        start = 0
        for a in inputs:
            stop = start + a.shape[axis]
            ctx.copy_into(basic_view(out, (slice(None),) * axis + (slice(start, stop),)), a)
            start = stop
        output_storage[0][0] = out


@register_lowering(Join)
def _join(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    tensors = node.inputs[1:]
    _check_dtypes(ctx, tensors)
    if all(t.type.dtype in DISCRETE and not _from_gpu(t) for t in tensors):
        raise StaysOnCpu("it joins integers that are all on the host (shape arithmetic): "
                         "there is nothing on the GPU to join")
    axis = node.op.static_axis(node)
    if axis is None:
        raise StaysOnCpu("its axis is chosen when the function runs (GpuJoin's is fixed)")
    op = GpuJoin(axis)
    return [op.make_node(node.outputs[0].type, *[on_gpu(t) for t in tensors]).outputs[0]]


def _from_gpu(var: Variable) -> bool:
    return isinstance(var.type, GpuArrayType) or (
        var.owner is not None and isinstance(var.owner.op, HostFromGpu))
