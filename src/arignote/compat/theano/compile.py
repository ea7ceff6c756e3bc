"""Names ``theano.compile`` carried that ``arignote.compile`` does not re-export."""
from typing import Any

import numpy as np

from arignote.compat.theano.optdb import optdb
from arignote.compile.builders import OpFromGraph
from arignote.config import config
from arignote.graph.basic import Apply, Op

__all__ = ["config", "OpFromGraph", "optdb", "DeepCopyOp", "deep_copy_op"]


class DeepCopyOp(Op):
    """A copy of its input (Theano put one where an output would alias an input; arignote's
    functions copy such outputs themselves, so its graphs hold none, and Theano code that
    filters nodes of this class finds nothing to filter)."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        value = inputs[0]
        output_storage[0][0] = value.copy() if hasattr(value, "copy") else np.copy(value)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return input_shapes


deep_copy_op = DeepCopyOp()
