"""Run-time checks inside a graph: ``Assert`` passes its value through unchanged and
raises AssertionError when a condition is false (Theano's ``tensor.opt.Assert``),
so a graph can refuse input that its types cannot describe (a length too long)."""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply, Op, Variable
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Assert", "assert_op"]


class Assert(Op):
    """``Assert(msg)(value, *conditions)``: ``value`` (a view, no copy) when every
    0-d condition is true when the function runs, else AssertionError(msg)."""

    __props__ = ("msg",)
    view_map = {0: [0]}

    def __init__(self, msg: str = "Assert failed!"):
        self.msg = str(msg)

    def make_node(self, value: Any, *conditions: Any) -> Apply:
        value = as_tensor_variable(value)
        conditions = [as_tensor_variable(c) for c in conditions]
        for c in conditions:
            if c.ndim != 0:
                raise TypeError(f"Assert: each condition must be a scalar, got {c.describe()} "
                                f"({c.type.describe()}): reduce it first, e.g. with all()")
        return Apply(self, [value, *conditions], [value.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        if not all(bool(c) for c in inputs[1:]):
            raise AssertionError(self.msg)
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def assert_op(value: Any, *conditions: Any) -> Variable:
    """``value``, checked when the function runs: AssertionError unless all ``conditions``."""
    return Assert()(value, *conditions)


