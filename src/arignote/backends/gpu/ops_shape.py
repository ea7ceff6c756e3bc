"""Shape ops on GPU arrays: reading a shape and reshaping are metadata, so they
need no kernel (a reshape of a strided view copies it first, as numpy does).

They are lowered only when their input already lives on the GPU: moving a
host value there just to read its shape would cost a transfer and gain nothing.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arignote.backends.gpu.array import c_strides
from arignote.backends.gpu.context import GpuContext
from arignote.backends.gpu.ops import GpuOp, host_variable
from arignote.backends.gpu.placement import input_on_gpu, register_lowering
from arignote.graph.basic import Apply, Variable
from arignote.tensor.shape import Reshape, Shape, Shape_i
from arignote.tensor.type import TensorType


class GpuShape(GpuOp):
    """The shape of a GPU array as a host int64 vector; reads no device memory."""

    __props__ = ()

    def make_node(self, x: Variable) -> Apply:
        return Apply(self, [x], [TensorType("int64", (False,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype="int64")

    def infer_shape(self, fgraph, node: Apply, input_shapes: list) -> list:
        return [(node.inputs[0].type.ndim,)]


class GpuShape_i(GpuOp):
    """The length of dimension ``i`` of a GPU array, as a host int64 scalar."""

    __props__ = ("i",)

    def __init__(self, i: int):
        self.i = int(i)

    def make_node(self, x: Variable) -> Apply:
        return Apply(self, [x], [TensorType("int64", ())()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(inputs[0].shape[self.i], dtype="int64")

    def infer_shape(self, fgraph, node: Apply, input_shapes: list) -> list:
        return [()]


class GpuReshape(GpuOp):
    """``x`` with the shape given by a host int64 vector (one entry may be -1):
    a view of a contiguous ``x``, else of a contiguous copy."""

    __props__ = ("ndim", "context_name")
    view_map = {0: [0]}

    def __init__(self, ndim: int, context_name: str | None = None):
        self.ndim = int(ndim)
        self.context_name = context_name

    def make_node(self, x: Variable, shp: Variable, broadcastable: tuple) -> Apply:
        return Apply(self, [x, shp], [self.out_type(x.type.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, shp = inputs
        wanted = tuple(int(s) for s in shp)
        shape = _resolve(wanted, x.size)
        if len(wanted) != self.ndim or shape is None:
            raise ValueError(f"cannot reshape {host_variable(node.inputs[0]).describe()} of shape "
                             f"{x.shape} ({x.size} elements) to {wanted}: the new shape must have "
                             f"as many elements (one entry may be -1) and {self.ndim} entries")
        source = x if x.is_c_contiguous else x.copy()
        output_storage[0][0] = source.view(shape, c_strides(shape), source.offset)


def _resolve(wanted: tuple, size: int) -> tuple | None:
    """numpy's reading of a reshape target (one -1 inferred), or None if it does not fit."""
    if wanted.count(-1) > 1 or any(s < -1 for s in wanted):
        return None
    known = int(np.prod([s for s in wanted if s != -1]))
    if -1 not in wanted:
        return wanted if known == size else None
    if known == 0 or size % known:
        return None
    return tuple(size // known if s == -1 else s for s in wanted)


@register_lowering(Shape)
def _shape(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    return [GpuShape()(input_on_gpu(node.inputs[0]))]


@register_lowering(Shape_i)
def _shape_i(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    return [GpuShape_i(node.op.i)(input_on_gpu(node.inputs[0]))]


@register_lowering(Reshape)
def _reshape(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    x, shp = node.inputs
    op = GpuReshape(node.op.ndim)
    return [op.make_node(input_on_gpu(x), shp, node.outputs[0].type.broadcastable).outputs[0]]
