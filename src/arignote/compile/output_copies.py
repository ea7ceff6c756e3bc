"""Copy nodes for outputs whose memory is a graph input's or a constant's.

``function([x], x)``, an output that a rewrite reduced to a constant, or a view
of an input (``x[1:]``) must not hand the caller memory it does not own. The
copy is a node of the graph (Theano's ``DeepCopyOp``), put in after the
rewrites, so that the graph shows what a call does and code written for
Theano, which looks for that node, finds it. Outputs aliasing a buffer the call
itself overwrites or another output are still copied by the executor.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from arignote.compile.callgen import copy_value
from arignote.compile.executor import _alias_roots, overwritten_roots
from arignote.compile.io import In, Out
from arignote.graph.basic import Apply, Constant, Op, Variable
from arignote.graph.fg import FunctionGraph

__all__ = ["DeepCopyOp", "deep_copy_op", "copy_aliased_outputs"]


class DeepCopyOp(Op):
    """A copy of its input, in memory of its own."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = copy_value(inputs[0])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return input_shapes

    def __str__(self) -> str:
        return "DeepCopyOp"


deep_copy_op = DeepCopyOp()


def copy_aliased_outputs(fgraph: FunctionGraph, inputs: Sequence[In], outputs: Sequence[Out]) -> None:
    """Make each of the first ``len(outputs)`` outputs of ``fgraph`` whose memory may be a
    constant's or a graph input's a copy, as the executor would have at each call: an
    explicit input's under ``In(borrow=False)``, a constant's or a shared variable's under
    ``Out(borrow=False)``. Inputs the graph overwrites are left to the executor."""
    specs = dict(zip(fgraph.inputs, inputs))
    roots_of = _alias_roots()
    overwritten = overwritten_roots(fgraph.apply_nodes, roots_of)
    for k, out in enumerate(outputs):
        var = fgraph.outputs[k]
        roots = {r for r in roots_of(var) if r.owner is None and r not in overwritten}
        if any(_copied(r, out.borrow, specs) for r in roots):
            fgraph.change_input("output", k, deep_copy_op(var), reason="copy_aliased_outputs")


def _copied(root: Variable, borrow: bool, specs: dict) -> bool:
    if root in specs and not isinstance(root, Constant):
        return not specs[root].borrow
    return not borrow
