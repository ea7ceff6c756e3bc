"""Whether a node may overwrite one of its inputs: the proof in-place rewrites need.

Overwriting ``var`` is safe only when nothing else can observe it: it is
computed inside the graph (never a shared variable's storage or a constant, nor
a function input unless ``In(mutable=True)`` put it in ``fgraph.destroyable_inputs``),
it is not a graph output, it is not itself a view of another
buffer, and the node is its only client, so no other node reads it (or a view
of it) before or after.
"""
from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph


def is_view(var: Variable) -> bool:
    node = var.owner
    if node is None:
        return False
    op = node.op
    return bool(op.view_map.get(var.index) or op.destroy_map.get(var.index))


def can_destroy(fgraph: FunctionGraph, node: Apply, index: int) -> bool:
    var = node.inputs[index]
    if var.owner is None and var not in getattr(fgraph, "destroyable_inputs", ()):
        return False  # an input may be overwritten only when In(mutable=True) allows it
    if is_view(var):
        return False
    if var in fgraph.outputs:
        return False
    clients = fgraph.clients.get(var, [])
    return len(clients) == 1 and clients[0] == (node, index) and node.inputs.count(var) == 1
