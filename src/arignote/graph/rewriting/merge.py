"""Merging: equal constants and equal nodes on equal inputs are computed once."""
from __future__ import annotations

from arignote.graph.basic import Constant
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter


class MergeRewriter(GraphRewriter):
    """Replace each node by the first equal one (same op by ``__props__``, same inputs)."""

    name = "merge"

    def apply(self, fgraph: FunctionGraph) -> int:
        if getattr(fgraph, "merged_at", None) == fgraph.edits:
            return 0  # nothing changed since a pass that found nothing to merge
        changes = 0
        constants: dict = {}
        for var in list(fgraph.variables):
            if isinstance(var, Constant) and var in fgraph.variables:
                key = var.signature()
                first = constants.setdefault(key, var)
                if first is not var:
                    fgraph.replace(var, first, reason="merge")
                    changes += 1
        seen: dict = {}
        for node in fgraph.toposort():
            if node not in fgraph.apply_nodes:
                continue
            # The output types join the key: a node rebuilt by clone_with_new_inputs keeps its
            # old, less specific types (an Alloc whose length became the constant 1), and
            # replacing one type by another would be refused.
            key = (node.op, tuple(node.inputs), tuple(o.type for o in node.outputs))
            first = seen.get(key)
            if first is None:
                seen[key] = node
                continue
            if node.op.destroy_map:
                continue  # two in-place nodes each need their own buffer
            for old, new in zip(node.outputs, first.outputs):
                fgraph.replace(old, new, reason="merge")
            changes += 1
        if not changes:
            fgraph.merged_at = fgraph.edits
        return changes
