"""ElemwiseReduce: a reduction of an elementwise map, in one pass over the inputs.

``sum(exp(x))``, ``((x - y) ** 2).sum(axis)``, ``max(abs(x))``: the mapped
array is never stored. Only the late fusion rewrite builds this op, on nodes
the CPU runs, after GPU placement (so GPU placement still sees plain ops). Its
``perform`` is the two ops in turn, which is also the numpy path.
"""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply, Op
from arignote.scalar.ops import ScalarOp
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.reduction import Argmax, CAReduce


class ElemwiseReduce(Op):
    """``reducer(Elemwise(scalar_op)(*inputs))``; ``reducer`` is a CAReduce, Argmax or Argmin."""

    __props__ = ("scalar_op", "reducer")

    def __init__(self, scalar_op: ScalarOp, reducer: CAReduce | Argmax):
        self.scalar_op = scalar_op
        self.reducer = reducer
        self._map = Elemwise(scalar_op)

    def __str__(self) -> str:
        return f"{self.reducer}{{{self.scalar_op}}}"

    def make_node(self, *inputs: Any) -> Apply:
        mapped = self._map.make_node(*inputs)
        reduced = self.reducer.make_node(mapped.outputs[0])
        return Apply(self, mapped.inputs, [reduced.outputs[0].type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        mapped = self._map.make_node(*node.inputs)
        cell: list = [None]
        self._map.perform(mapped, inputs, [cell])
        reduced = self.reducer.make_node(mapped.outputs[0])
        self.reducer.perform(reduced, [cell[0]], output_storage)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        mapped = self._map.make_node(*node.inputs)
        shape = self._map.infer_shape(fgraph, mapped, input_shapes)[0]
        axes = self.reducer.axis
        return [tuple(s for i, s in enumerate(shape) if i not in axes)]
