"""Theano's ``d3viz.formatting``: ``PyDotFormatter``, the graph of ``d3viz`` as a ``pydot``
graph, to draw with any Graphviz tool (``formatter(f).write_png(...)``, which needs Graphviz).

Each node carries Theano's attributes: ``node_type`` (``apply``, ``input``,
``shared_input``, ``constant_input``, ``output``, and ``variable`` for a named
intermediate), ``label``, ``dtype`` of a variable, ``apply_op`` and
``profile`` (seconds and share) of an apply node. An OpFromGraph node's inner
graph is a cluster, named in the node's ``subg`` attribute, with
``subg_map_inputs``/``subg_map_outputs`` pairing outer and inner node ids.
"""
from __future__ import annotations

from typing import Any

from arignote.d3viz.graph import Graph, build
from arignote.d3viz.page import EDGE_COLORS, FILLS, quote

try:
    import pydot  # an optional extra: pip install "arignote[graphviz]"
    pydot_imported, pydot_imported_msg = True, ""
except ImportError as _err:
    pydot, pydot_imported = None, False
    pydot_imported_msg = f'pydot could not be imported ({_err}): pip install "arignote[graphviz]"'

__all__ = ["PyDotFormatter", "pydot_imported", "pydot_imported_msg"]

SHAPES = {"apply": "ellipse"}  # every variable is a box


class PyDotFormatter:
    """``PyDotFormatter(compact=True)(fct, graph=None)`` -> a ``pydot.Dot`` of ``fct``
    (``compact=False`` gives every intermediate variable a node); nodes are added to
    ``graph`` when it is given."""

    def __init__(self, compact: bool = True):
        if not pydot_imported:
            raise ImportError(pydot_imported_msg)
        self.compact = compact
        self.node_colors = dict(FILLS)

    def __call__(self, fct: Any, graph: Any = None) -> Any:
        drawing = pydot.Dot(graph_type="digraph") if graph is None else graph
        self._add(build(fct, self.compact), drawing)
        return drawing

    def _add(self, model: Graph, drawing: Any) -> None:
        for node in model.nodes:
            attributes = {"label": quote(node.label), "node_type": node.kind,
                          "shape": SHAPES.get(node.kind, "box"), "style": "filled",
                          "fillcolor": quote(self.node_colors[node.kind])}
            if node.kind == "apply":
                attributes["apply_op"] = quote(node.info["op"])
                if node.profile is not None:
                    attributes["profile"] = quote(str(list(node.profile)))
            else:
                attributes["dtype"] = quote(node.info["type"])
            if node.subgraph is not None:
                cluster = pydot.Cluster(node.id, label=quote(node.label))
                self._add(node.subgraph, cluster)
                drawing.add_subgraph(cluster)
                attributes["subg"] = cluster.get_name()
                attributes["subg_map_inputs"] = quote(str([list(p) for p in node.subgraph.input_map]))
                attributes["subg_map_outputs"] = quote(str([list(p) for p in node.subgraph.output_map]))
            drawing.add_node(pydot.Node(node.id, **attributes))
        for edge in model.edges:
            color = {"color": quote(EDGE_COLORS[edge.kind])} if edge.kind else {}
            drawing.add_edge(pydot.Edge(edge.source, edge.target, label=quote(edge.label), **color))

