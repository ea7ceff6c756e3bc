"""The graph ``d3viz`` shows: nodes, edges and nested graphs, independent of any drawing tool.

One node per apply node, per graph input (``input``, ``shared_input``,
``constant_input``, Theano's kinds) and per output (a graph output or an
update, and any output nobody reads, marked ``unused``). An unnamed
intermediate variable is the edge between two apply nodes; a named one
(``compact=False``: every one) is a ``variable`` node of its own. An edge into
an input a node returns a view of is a ``view`` edge, into one it overwrites a
``destroy`` edge. An ``OpFromGraph`` node holds its inner function's graph,
built the same way. The same model gives the HTML page, pydot graphs and DOT text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arignote.compile.builders import OpFromGraph
from arignote.graph.basic import Apply, Variable
from arignote.pictures import _constant_text, _graph_of, _node_label, _nodes, _role, _type_text

KINDS = ("apply", "input", "shared_input", "constant_input", "variable", "output")


@dataclass
class Node:
    id: str
    kind: str
    label: str
    info: dict[str, str] = field(default_factory=dict)  # what the page shows of the node
    profile: tuple[float, float] | None = None  # an apply node's seconds and share of the calls
    subgraph: Graph | None = None


@dataclass
class Edge:
    source: str
    target: str
    label: str = ""
    kind: str = ""  # "", "view" or "destroy"


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    # an OpFromGraph node's inner graph: (outer input id, inner input id) pairs, and outputs
    input_map: list[tuple[str, str]] = field(default_factory=list)
    output_map: list[tuple[str, str]] = field(default_factory=list)

    def node(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.id == node_id)


def build(fct: Any, compact: bool = True) -> Graph:
    """The model of ``fct``: a compiled function, a FunctionGraph, a variable or a list of them
    (or an apply node: its outputs)."""
    return _build(fct, compact, "")[0]


def _build(fct: Any, compact: bool, prefix: str) -> tuple[Graph, dict[Any, str]]:
    """The model, and the id of each drawn variable and apply node."""
    if isinstance(fct, Apply):
        fct = list(fct.outputs)
    source, roles = _graph_of(fct)
    applies = _nodes(source)
    read = {var for node in applies for var in node.inputs}
    profile = getattr(fct, "profile", None)
    times = profile.apply_time if profile is not None and profile.fct_callcount else {}
    total = (profile.fct_call_time or 1.0) if times else 1.0
    graph = Graph()
    ids: dict[Any, str] = {}

    def add(key: Any, kind: str, label: str, info: dict[str, str], **extra: Any) -> Node:
        ids[key] = f"{prefix}n{len(ids) + 1}"
        where = getattr(key.outputs[0] if isinstance(key, Apply) else key, "tag", None)
        where = getattr(where, "trace", None)
        graph.nodes.append(Node(ids[key], kind, label, {**info, **({"defined at": str(where)} if where else {})},
                                **extra))
        return graph.nodes[-1]

    def variable_node(var: Variable, kind: str, **info: str) -> str:
        return add(var, kind, _label(var, kind), {"type": _type_text(var), **info}).id

    drawn = set(applies)
    for node in applies:
        op_text = _node_label(node, None)
        info = {"op": op_text, "class": type(node.op).__name__}
        seconds = times.get(node)
        if seconds is not None:
            info["time"] = f"{seconds:.3g} s ({100 * seconds / total:.1f}% of the calls)"
        box = add(node, "apply", _short(" ".join(op_text.splitlines())), info,
                  profile=None if seconds is None else (seconds, seconds / total))
        for i, var in enumerate(node.inputs):
            label = _type_text(var) if len(node.inputs) == 1 else f"{i} {_type_text(var)}"
            if var.owner in drawn and compact and not var.name and var not in roles:
                graph.edges.append(Edge(ids[var.owner], box.id, label, _edge_kind(node, i)))
                continue
            if var not in ids and var.owner in drawn:
                variable_node(var, "output" if var in roles else "variable")
                graph.edges.append(Edge(ids[var.owner], ids[var], _type_text(var)))
            elif var not in ids:
                variable_node(var, _INPUT_KINDS[_role(var)])
            graph.edges.append(Edge(ids[var], box.id, label, _edge_kind(node, i)))
        for var in node.outputs:
            if var not in ids and (var in roles or var not in read):
                variable_node(var, "output", **({} if var in roles else {"unused": "no node reads it"}))
                graph.edges.append(Edge(box.id, ids[var], _type_text(var)))
        if isinstance(node.op, OpFromGraph):
            _nest(box, node, ids, compact)
    for var in roles:  # outputs no node computes (an input returned as it is)
        if isinstance(var, Variable) and var not in ids:
            variable_node(var, "output")
    return graph, ids


def _nest(box: Node, apply: Apply, ids: dict, compact: bool) -> None:
    """Give an OpFromGraph node its inner function's graph, with the maps between the two."""
    function = apply.op.inner_function()
    inner, inner_ids = _build(function, compact, f"{box.id}_")
    fgraph = function.maker.fgraph
    inner.input_map = [(ids[outer], inner_ids[local]) for outer, local in zip(apply.inputs, fgraph.inputs)
                       if outer in ids and local in inner_ids]
    # an output that is an edge outside is the OpFromGraph node itself there
    inner.output_map = [(inner_ids[local], ids.get(outer, box.id))
                        for outer, local in zip(apply.outputs, fgraph.outputs) if local in inner_ids]
    box.subgraph = inner


_INPUT_KINDS = {"input": "input", "shared": "shared_input", "constant": "constant_input", "variable": "input"}


def _edge_kind(node: Apply, i: int) -> str:
    if any(i in inputs for inputs in getattr(node.op, "destroy_map", {}).values()):
        return "destroy"
    if any(i in inputs for inputs in getattr(node.op, "view_map", {}).values()):
        return "view"
    return ""


def _label(var: Variable, kind: str) -> str:
    if var.name:
        return var.name
    if kind == "output":
        return "output"
    if _role(var) == "constant":
        return _constant_text(var)
    return _type_text(var)


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[:width - 1] + "\u2026"
