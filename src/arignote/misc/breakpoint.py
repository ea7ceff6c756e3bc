"""``PdbBreakpoint``: stop inside a compiled function, in a debugger, when a condition holds.

Theano's ``theano.tests.breakpoint.PdbBreakpoint``: an op that passes its
monitored variables through unchanged and, when its scalar condition is true at
run time, prints which breakpoint fired and opens the first debugger it finds
(pudb, ipdb, else pdb) in its ``perform``. There, the list ``monitored`` holds the
monitored values as numpy arrays; what the user changes in it is what the op
outputs when execution resumes. At least one output must be used, or the
function drops the op with the rest of the unused graph.
"""
from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.types import disconnected_type
from arignote.tensor.hostop import HostOp
from arignote.tensor.variable import as_tensor_variable

__all__ = ["PdbBreakpoint"]


def _set_trace() -> None:
    """Open the first debugger installed, in the caller's frame (``perform``)."""
    for name in ("pudb", "ipdb", "pdb"):
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).set_trace()
            return


class PdbBreakpoint(HostOp):
    """``breakpoint(condition, *monitored)`` returns the monitored variables; a call in
    which ``condition`` (a scalar) is true stops in a debugger first."""

    __props__ = ("name",)
    host_reason = "it stops the Python process in a debugger"

    def __init__(self, name: str):
        self.name = name

    def make_node(self, condition: Any, *monitored: Any) -> Apply:
        condition = as_tensor_variable(condition)
        if condition.ndim != 0:
            raise TypeError(f"PdbBreakpoint {self.name!r}: the condition must be a scalar, got "
                            f"{condition.describe()} of type {condition.type}")
        monitored_vars = [as_tensor_variable(v) for v in monitored]
        op = PdbBreakpoint(self.name)
        op.view_map = {k: [k + 1] for k in range(len(monitored_vars))}
        return Apply(op, [condition, *monitored_vars], [v.type() for v in monitored_vars])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        condition, *values = inputs
        if condition:
            monitored = [np.array(v) for v in values]  # the user may change these
            print(f"\n{'-' * 60}\nConditional breakpoint {self.name!r} activated.\n"
                  "The monitored values are in the list 'monitored', in order, as numpy arrays;\n"
                  "what you change there is what the function uses when it resumes.\n"
                  f"{'-' * 60}")
            _set_trace()
            values = [out.type.filter(v) for out, v in zip(node.outputs, monitored)]
        for cell, value in zip(output_storage, values):
            cell[0] = value

    def grad(self, inputs: list[Variable], output_grads: list) -> list:
        return [disconnected_type(), *output_grads]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        outputs = range(len(node.outputs))
        return [[False for _ in outputs]] + [[k == j for k in outputs] for j in outputs]

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return input_shapes[1:]
