"""Pictures of graphs: ``pydotprint`` (Theano's name), drawn by Graphviz.

Apply nodes are ellipses filled by where they run: the CPU, a GPU, or a
transfer between the two (a red octagon, its edges red and dashed, so the
copies a graph makes stand out). A fused node shows its scalar expression,
its inputs' edges labelled ``i0, i1, ...`` as in that expression. Variables
are boxes: inputs, shared variables, constants, outputs and updates; an
intermediate variable is drawn only when it has a name (``compact=False``:
always), else it is the edge between two nodes, labelled with its type.

The graph is built with the ``pydot`` package (``pip install
"arignote[graphviz]"``); ``pydot_graph`` gives it without drawing, and
drawing needs Graphviz's ``dot`` program.
"""
from __future__ import annotations

import logging
import os
import shutil
from typing import Any
from collections.abc import Sequence

from arignote.backends.gpu.ops import GpuOp
from arignote.backends.gpu.placement import TRANSFERS
from arignote.config import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.traversal import graph_inputs, io_toposort
from arignote.ifelse import IfElse

_logger = logging.getLogger("arignote.printing")

# Fill colours: apply nodes by where they run, variables by their role.
COLORS = {"cpu": "#9ECAE1", "gpu": "#A1D99B", "transfer": "#FC9272", "input": "#FFED6F",
          "shared": "#FDB462", "constant": "#FFFFFF", "output": "#DECBE4",
          "update": "#DECBE4", "variable": "#D9D9D9",
          # cond_highlight: the nodes only one part of an ifelse needs
          "condition": "#BEBADA", "true branch": "#B3DE69", "false branch": "#FB8072"}
TRANSFER_EDGE = {"color": "#CB181D", "style": "dashed", "penwidth": "2"}
LEGEND = ('"blue: runs on the CPU; green: on a GPU; red octagons and dashed edges: transfers '
          'between the two; boxes: inputs (yellow), shared variables (orange), outputs and '
          'updates (purple)"')


class GraphvizMissing(RuntimeError):
    """pydot or Graphviz's dot program is not installed; the message says how to install it."""


def pydotprint(fct: Any, outfile: str | None = None, compact: bool = True, format: str = "png",
               with_ids: bool = False, high_contrast: bool = True, cond_highlight: bool | None = None,
               colorCodes: dict | None = None, max_label_size: int = 70, scan_graphs: bool = False,
               var_with_name_simple: bool = False, print_output_file: bool = True,
               return_image: bool = False) -> Any:
    """Draw ``fct`` (a compiled function, a FunctionGraph, a variable or a list of them)
    into ``outfile`` in Graphviz ``format`` (png, svg, pdf, ...), Theano's signature.

    ``outfile`` defaults to ``arignote.pydotprint.<device>.<format>`` in the current
    directory. ``colorCodes`` maps op class names to fill colours (over the device
    colours); ``high_contrast=False`` colours outlines instead of fills. ``scan_graphs``
    also draws each loop's inner graph into ``<outfile>_<op>_<position>.<format>``.
    ``return_image=True`` returns the drawing's bytes instead of writing a file. A
    profiled function that has been called shows each node's time and share of the calls'.
    ``cond_highlight=True`` colours the nodes that only an ``ifelse`` condition, only its
    true branch or only its false branch needs (a warning on the ``arignote.printing``
    logger, which the alias's ``theano`` logger receives, when the graph has no ifelse).
    """
    graph = pydot_graph(fct, compact=compact, with_ids=with_ids, high_contrast=high_contrast,
                        colorCodes=colorCodes, max_label_size=max_label_size,
                        var_with_name_simple=var_with_name_simple, cond_highlight=cond_highlight)
    if shutil.which("dot") is None:
        raise GraphvizMissing(
            f"pydotprint needs Graphviz's dot program to draw {format!r}, and it is not on the "
            "PATH: install Graphviz (Debian/Ubuntu: apt-get install graphviz; Fedora: dnf install "
            "graphviz; macOS: brew install graphviz; conda: conda install graphviz)")
    image = graph.create(prog="dot", format=format)
    if return_image:
        return image
    if outfile is None:
        outfile = os.path.join(os.getcwd(), f"arignote.pydotprint.{config.device}.{format}")
    with open(outfile, "wb") as handle:
        handle.write(image)
    if print_output_file:
        print(f"The output file is available at {outfile}")
    if scan_graphs:
        base, ext = os.path.splitext(outfile)
        for position, node in enumerate(_nodes(_graph_of(fct)[0])):
            inner = getattr(node.op, "inner_function", None)
            if inner is not None:
                pydotprint(inner(), f"{base}_{type(node.op).__name__}_{position}{ext}", compact,
                           format, with_ids, high_contrast, cond_highlight, colorCodes, max_label_size,
                           True, var_with_name_simple, print_output_file)
    return None


def pydot_graph(fct: Any, compact: bool = True, with_ids: bool = False, high_contrast: bool = True,
                colorCodes: dict | None = None, max_label_size: int = 70,
                var_with_name_simple: bool = False, cond_highlight: bool | None = None) -> Any:
    """The ``pydot.Dot`` that ``pydotprint`` draws, to inspect or to draw yourself."""
    try:
        import pydot  # an optional extra: only drawing needs it
    except ImportError as err:
        raise GraphvizMissing(f"pydotprint needs the pydot package ({err}): "
                              'pip install "arignote[graphviz]"') from None
    graph, roles = _graph_of(fct)
    drawing = pydot.Dot(graph_type="digraph", rankdir="TB", fontsize="10", label=LEGEND)
    ids: dict[Any, str] = {}
    style = _Style(high_contrast, colorCodes or {}, max_label_size)

    def variable_id(var: Variable, role: str) -> str:
        if var not in ids:
            ids[var] = f"v{len(ids)}"
            label = _variable_label(var, role, roles, var_with_name_simple)
            drawing.add_node(pydot.Node(ids[var], shape="box", **style.fill(role),
                                        label=style.quote(label)))
        return ids[var]

    nodes = _nodes(graph)
    sides = _branch_sides(nodes) if cond_highlight else {}
    if cond_highlight and not any(isinstance(n.op, IfElse) for n in nodes):
        _logger.warning("pydotprint: cond_highlight is set but there is no IfElse node in the graph")
    profile = getattr(fct, "profile", None)
    times = profile.apply_time if profile is not None and profile.fct_callcount else {}
    for position, node in enumerate(nodes):
        kind = sides.get(node) or _where(node)
        ids[node] = f"n{position}"
        label = _node_label(node, position if with_ids else None)
        if node in times:  # a profiled function's node: its seconds and share of the calls' time
            label += f"\n{times[node]:.3g}s, {100 * times[node] / (profile.fct_call_time or 1):.1f}%"
        attributes = dict(shape="octagon" if kind == "transfer" else
                          "box3d" if getattr(node.op, "inner_function", None) else "ellipse",
                          **style.fill(kind, type(node.op).__name__))
        drawing.add_node(pydot.Node(ids[node], label=style.quote(label), **attributes))
    drawn = set(nodes)
    for node in nodes:
        fused = _is_fused(node)
        for i, var in enumerate(node.inputs):
            edge = _edge_style(var.owner if var.owner in drawn else None, node)
            label = f"i{i}" if fused else ""
            if var.owner in drawn and not _shown(var, roles, compact):
                text = ", ".join(filter(None, [label, _type_text(var)]))
                drawing.add_edge(pydot.Edge(ids[var.owner], ids[node], label=style.quote(text), **edge))
                continue
            role = roles.get(var) or _role(var)
            source = variable_id(var, role)
            if var.owner in drawn:
                drawing.add_edge(pydot.Edge(ids[var.owner], source, **_edge_style(var.owner, None)))
            drawing.add_edge(pydot.Edge(source, ids[node], label=style.quote(label), **edge))
    for var, role in roles.items():
        if role in ("output", "update") and var not in ids:
            target = variable_id(var, role)
            if var.owner in drawn:
                drawing.add_edge(pydot.Edge(ids[var.owner], target, **_edge_style(var.owner, None)))
    return drawing


# -------------------------------------------------------------- the graph
def _graph_of(fct: Any) -> tuple[FunctionGraph | list[Variable], dict[Variable, str]]:
    """(what to draw, the role of each output: 'output' or 'update' with its target's label)."""
    maker = getattr(fct, "maker", None)
    if maker is not None:
        fgraph = maker.fgraph
        n_out = len(maker.outputs)
        roles = {out: "output" for out in fgraph.outputs[:n_out]}
        for (target, _), var in zip(maker.updates, fgraph.outputs[n_out:]):
            roles.setdefault(var, "update")
            roles[("update", var)] = getattr(target, "name", None) or str(target)
        return fgraph, roles
    if isinstance(fct, FunctionGraph):
        return fct, {out: "output" for out in fct.outputs}
    outputs = list(fct) if isinstance(fct, (list, tuple)) else [fct]
    if not all(isinstance(v, Variable) for v in outputs):
        raise TypeError(f"pydotprint() draws a compiled function, a FunctionGraph or variables, "
                        f"got {type(fct).__name__}")
    return outputs, {out: "output" for out in outputs}


def _nodes(graph: FunctionGraph | Sequence[Variable]) -> list[Apply]:
    if isinstance(graph, FunctionGraph):
        return graph.toposort()
    outputs = list(graph)
    return io_toposort(graph_inputs(outputs), outputs)


def _branch_sides(nodes: list[Apply]) -> dict[Apply, str]:
    """Each node that only the condition, only the true or only the false branch of an ifelse
    needs -> that part's colour name."""
    def needed(variables: list[Variable]) -> set[Apply]:
        found: set[Apply] = set()
        stack = [v.owner for v in variables if v.owner is not None]
        while stack:
            node = stack.pop()
            if node not in found:
                found.add(node)
                stack.extend(v.owner for v in node.inputs if v.owner is not None)
        return found

    sides: dict[Apply, str] = {}
    for node in nodes:
        if isinstance(node.op, IfElse):
            true_side, false_side = node.op.branch_inputs(node)
            parts = {"condition": needed([node.inputs[0]]),
                     "true branch": needed([node.inputs[i] for i in true_side]),
                     "false branch": needed([node.inputs[i] for i in false_side])}
            for name, found in parts.items():
                others = set().union(*(f for n, f in parts.items() if n != name))
                sides.update((n, name) for n in found - others)
    return sides


def _where(node: Apply) -> str:
    if isinstance(node.op, TRANSFERS):
        return "transfer"
    return "gpu" if isinstance(node.op, GpuOp) else "cpu"


def _is_fused(node: Apply) -> bool:
    return hasattr(getattr(node.op, "scalar_op", None), "expression")


def _role(var: Variable) -> str:
    if isinstance(var, Constant):
        return "constant"
    if var.owner is None:
        return "shared" if hasattr(var, "storage") and hasattr(var, "get_value") else "input"
    return "variable"


def _shown(var: Variable, roles: dict, compact: bool) -> bool:
    """Whether a computed variable gets a box of its own (else it is an edge)."""
    return var in roles or not compact or bool(var.name)


# ---------------------------------------------------------------- labels
def _node_label(node: Apply, position: int | None) -> str:
    op = node.op
    if _is_fused(node):
        name = str(op).split("{", 1)[0]
        text = f"{name}{{Composite}}\n{op.scalar_op.expression()}"
    else:
        text = str(op)
    return text if position is None else f"{position}: {text}"


def _variable_label(var: Variable, role: str, roles: dict, name_only: bool) -> str:
    if role == "update":
        return f"update of {roles[('update', var)]}"
    if role == "constant":
        return str(var) if var.name else _constant_text(var)
    name = var.name or ("output" if role == "output" else var.auto_name)
    if name_only and var.name:
        return name
    return f"{name}\n{_type_text(var)}"


def _constant_text(var: Constant) -> str:
    text = str(getattr(var, "host", var.data)).replace("\n", " ")
    return text if len(text) <= 20 else text[:17] + "..."


def _type_text(var: Variable) -> str:
    """``float32 matrix``: where the value lives is the colour of the nodes around it."""
    ttype = var.type.host_type() if hasattr(var.type, "host_type") else var.type
    describe = getattr(ttype, "describe", None)
    return describe() if describe is not None else str(ttype)


def _edge_style(source: Apply | None, target: Apply | None) -> dict:
    moving = any(n is not None and isinstance(n.op, TRANSFERS) for n in (source, target))
    return dict(TRANSFER_EDGE) if moving else {}


class _Style:
    def __init__(self, high_contrast: bool, codes: dict, max_label_size: int):
        self.high_contrast = high_contrast
        self.codes = codes
        self.max_label_size = max_label_size

    def fill(self, kind: str, class_name: str | None = None) -> dict:
        color = self.codes.get(class_name, COLORS[kind]) if class_name else COLORS[kind]
        if self.high_contrast:
            return {"style": "filled", "fillcolor": color}
        return {"color": color, "penwidth": "3"}

    def quote(self, text: str) -> str:
        lines = [line if len(line) <= self.max_label_size else line[:self.max_label_size - 3] + "..."
                 for line in text.splitlines() or [""]]
        body = "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)
        return f'"{body}"'
