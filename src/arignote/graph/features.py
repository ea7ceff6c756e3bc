"""Graph features that keep an index of a FunctionGraph up to date as rewrites edit it."""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply, Op


class NodeFinder:
    """Theano's ``toolbox.NodeFinder``: attached to a graph, it gives it
    ``fgraph.get_nodes(op)``, the nodes applying ``op`` (an equal op) now, kept current
    through every import and prune, in the order they entered the graph."""

    def __init__(self) -> None:
        self.fgraph: Any = None
        self.by_op: dict[Op, dict[Apply, None]] = {}

    def on_attach(self, fgraph: Any) -> None:
        if self.fgraph is not None:
            raise ValueError("this NodeFinder is attached to another graph already: make one per graph")
        if hasattr(fgraph, "get_nodes"):
            raise ValueError("the graph has a get_nodes already (another NodeFinder?)")
        self.fgraph = fgraph
        fgraph.get_nodes = self.get_nodes
        for node in fgraph.toposort():
            self.on_import(fgraph, node)

    def on_detach(self, fgraph: Any) -> None:
        del fgraph.get_nodes
        self.fgraph, self.by_op = None, {}

    def on_import(self, fgraph: Any, node: Apply, *reason: Any) -> None:
        self.by_op.setdefault(node.op, {})[node] = None

    def on_prune(self, fgraph: Any, node: Apply, *reason: Any) -> None:
        nodes = self.by_op.get(node.op)
        if nodes is not None:
            nodes.pop(node, None)
            if not nodes:
                del self.by_op[node.op]

    def get_nodes(self, op: Op) -> list[Apply]:
        return list(self.by_op.get(op, ()))
