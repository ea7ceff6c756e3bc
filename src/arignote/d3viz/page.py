"""``d3viz``: a compiled function as one self-contained, interactive HTML page.

The page holds the graph (``d3viz.graph``), laid out here (``d3viz.layout``),
as JSON, and its own short script and style sheet: it needs no network, no
library and no Graphviz, and can be mailed or archived as one file. In it one
can drag the view and the nodes, zoom with the wheel, read a node's op, types,
source line and time (hover or click), rename a node, colour the nodes by their
share of a profiled function's time, and open the inner graph of an
``OpFromGraph`` node. ``d3write`` writes the same graph as DOT text, for
Graphviz's own tools.
"""
from __future__ import annotations

import html
import json
import os
from collections import Counter
from typing import Any

from arignote.d3viz.graph import Graph, build
from arignote.d3viz.layout import layout, size

__all__ = ["d3viz", "d3write", "page_data", "dot_source", "quote"]

FILLS = {"apply": "#9ECAE1", "input": "#FFED6F", "shared_input": "#FDB462", "constant_input": "#FFFFFF",
         "variable": "#D9D9D9", "output": "#DECBE4"}
EDGE_COLORS = {"view": "#3182BD", "destroy": "#CB181D"}  # into an input returned as a view, or overwritten


def d3viz(fct: Any, outfile: str, copy_deps: bool = True, *args: Any, **kwargs: Any) -> None:
    """Write ``outfile``, an HTML page showing the graph of ``fct`` (a compiled function, a
    FunctionGraph, or variables); Theano's signature. ``args``/``kwargs`` go to the graph
    builder (``compact``). The page needs no other file, so ``copy_deps`` has no effect."""
    data = page_data(build(fct, *args, **kwargs), title=_title(fct))
    directory = os.path.dirname(outfile)
    if directory:
        os.makedirs(directory, exist_ok=True)
    payload = json.dumps(data, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e")
    with open(outfile, "w", encoding="utf-8") as handle:
        handle.write(_TEMPLATE.format(title=html.escape(data["title"]), style=_STYLE, data=payload,
                                      script=_SCRIPT))


def d3write(fct: Any, path: str, *args: Any, **kwargs: Any) -> None:
    """Write the graph of ``fct`` to ``path`` as DOT text (Theano's name), to draw with
    Graphviz (``dot -Tsvg path``)."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(dot_source(build(fct, *args, **kwargs)))


def page_data(graph: Graph, title: str = "graph") -> dict:
    """What the page's script reads: each graph (the function's, then each nested one, keyed
    by the id of its OpFromGraph node) with its nodes placed."""
    graphs: dict[str, dict] = {}

    def add(key: str, model: Graph, parent: str | None) -> None:
        positions = layout(model)
        nodes = []
        for node in model.nodes:
            width, height = size(node.label)
            x, y = positions[node.id]
            nodes.append({"id": node.id, "kind": node.kind, "label": node.label, "info": node.info,
                          "share": None if node.profile is None else node.profile[1],
                          "subgraph": node.id if node.subgraph is not None else None,
                          "x": x, "y": y, "w": width, "h": height, "fill": FILLS[node.kind]})
        readers = Counter(edge.target for edge in model.edges)
        # a label sits where its edge is apart from the others: nearer the source when the
        # target has several inputs (the edges converge there), else nearer the target
        edges = [{**vars(edge), "at": 0.35 if readers[edge.target] > 1 else 0.65} for edge in model.edges]
        graphs[key] = {"parent": parent, "nodes": nodes, "edges": edges}
        for node in model.nodes:
            if node.subgraph is not None:
                add(node.id, node.subgraph, key)

    add("main", graph, None)
    return {"title": title, "graphs": graphs}


def dot_source(graph: Graph, name: str = "G") -> str:
    """``graph`` in the DOT language, each nested graph a cluster."""
    lines = [f"digraph {name} {{"]
    _dot_lines(graph, lines, "  ")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_lines(graph: Graph, lines: list[str], indent: str) -> None:
    for node in graph.nodes:
        shape = "ellipse" if node.kind == "apply" else "box"
        lines.append(f'{indent}{quote(node.id)} [label={quote(node.label)}, shape={shape}, '
                     f'style=filled, fillcolor="{FILLS[node.kind]}", node_type={node.kind}];')
        if node.subgraph is not None:
            lines.append(f"{indent}subgraph {quote('cluster_' + node.id)} {{")
            lines.append(f"{indent}  label={quote(node.label)};")
            _dot_lines(node.subgraph, lines, indent + "  ")
            lines.append(f"{indent}}}")
    for edge in graph.edges:
        color = f", color={quote(EDGE_COLORS[edge.kind])}" if edge.kind else ""
        lines.append(f"{indent}{quote(edge.source)} -> {quote(edge.target)} [label={quote(edge.label)}{color}];")


def quote(text: str) -> str:
    """``text`` as a DOT string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _title(fct: Any) -> str:
    name = getattr(getattr(fct, "maker", None), "name", None) or getattr(fct, "name", None)
    return str(name) if name else "arignote graph"


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
<div id="menu">
<button id="back" hidden>Back to the outer graph</button>
<button id="reset">Reset nodes</button>
<button id="profile" hidden>Toggle profile colors</button>
<span id="where"></span>
</div>
<svg id="view" xmlns="http://www.w3.org/2000/svg"><g id="scene"><g id="edges"></g><g id="nodes"></g></g></svg>
<div id="panel" hidden></div>
<script type="application/json" id="graph-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""

_STYLE = """
html, body { margin: 0; height: 100%; font: 13px sans-serif; overflow: hidden; }
#menu { position: fixed; top: 0; left: 0; right: 0; padding: 6px; background: #f4f4f4;
        border-bottom: 1px solid #ccc; z-index: 2; }
#where { margin-left: 12px; color: #555; }
#view { width: 100%; height: 100%; cursor: grab; }
.node { cursor: move; }
.node text { pointer-events: none; text-anchor: middle; dominant-baseline: central; }
.node.nested > :first-child { stroke-width: 3; stroke-dasharray: 6 3; }
.node.selected > :first-child { stroke: #e6550d; stroke-width: 3; }
.edge path { fill: none; stroke: #555; stroke-width: 1.3; marker-end: url(#arrow); }
.edge.view path { stroke: #3182bd; }
.edge.destroy path { stroke: #cb181d; }
.edge text { font-size: 10px; fill: #666; text-anchor: middle; }
#panel { position: fixed; right: 8px; top: 44px; max-width: 40%; background: #fff;
         border: 1px solid #999; padding: 8px; box-shadow: 2px 2px 6px #aaa; z-index: 2; }
#panel table { border-collapse: collapse; }
#panel td { padding: 2px 6px; vertical-align: top; white-space: pre-wrap; }
#panel td:first-child { color: #555; }
"""

_SCRIPT = r"""
"use strict";
const DATA = JSON.parse(document.getElementById("graph-data").textContent);
const SVG_NS = "http://www.w3.org/2000/svg";
const svg = document.getElementById("view"), scene = document.getElementById("scene");
const edgeLayer = document.getElementById("edges"), nodeLayer = document.getElementById("nodes");
const panel = document.getElementById("panel");
let current = "main", view = {x: 0, y: 0, k: 1}, profileColors = false, selected = null;
const placed = {};  // graph key -> node id -> {x, y}: where the user moved nodes

function make(tag, attrs, parent) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

function defs() {
  const d = make("defs", {}, svg);
  const m = make("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7,
                            markerHeight: 7, orient: "auto-start-reverse"}, d);
  make("path", {d: "M0,0 L10,5 L0,10 z", fill: "#555"}, m);
}

function where(node) { return placed[current][node.id] || node; }

function heat(share) {  // white (no time) to red (all the time)
  const g = Math.round(255 * (1 - Math.min(1, Math.max(0, share))));
  return "rgb(255," + g + "," + g + ")";
}

function fill(node) {
  return profileColors && node.share !== null ? heat(node.share) : node.fill;
}

function edgePath(a, b) {
  const pa = where(a), pb = where(b);
  const y1 = pa.y + a.h / 2, y2 = pb.y - b.h / 2, mid = (y1 + y2) / 2;
  return "M" + pa.x + "," + y1 + " C" + pa.x + "," + mid + " " + pb.x + "," + mid + " " + pb.x + "," + y2;
}

function render() {
  const graph = DATA.graphs[current];
  placed[current] = placed[current] || {};
  edgeLayer.replaceChildren();
  nodeLayer.replaceChildren();
  const byId = {};
  for (const node of graph.nodes) byId[node.id] = node;
  for (const edge of graph.edges) {
    const g = make("g", {class: "edge " + edge.kind}, edgeLayer);
    const path = make("path", {d: edgePath(byId[edge.source], byId[edge.target])}, g);
    const text = make("text", {}, g);
    text.textContent = edge.label;
    edge.redraw = () => {
      path.setAttribute("d", edgePath(byId[edge.source], byId[edge.target]));
      const pa = where(byId[edge.source]), pb = where(byId[edge.target]);
      text.setAttribute("x", pa.x + (pb.x - pa.x) * edge.at + 4);
      text.setAttribute("y", pa.y + (pb.y - pa.y) * edge.at);
    };
    edge.redraw();
  }
  for (const node of graph.nodes) drawNode(node, graph);
  document.getElementById("back").hidden = graph.parent === null;
  document.getElementById("profile").hidden = !graph.nodes.some(n => n.share !== null);
  document.getElementById("where").textContent =
    current === "main" ? DATA.title : "inside " + byIdIn(graph.parent, current).label;
  transform();
}

function byIdIn(key, id) { return DATA.graphs[key].nodes.find(n => n.id === id); }

function drawNode(node, graph) {
  const g = make("g", {class: "node" + (node.subgraph ? " nested" : "") +
                              (selected === node.id ? " selected" : "")}, nodeLayer);
  const shape = node.kind === "apply"
    ? make("ellipse", {rx: node.w / 2, ry: node.h / 2}, g)
    : make("rect", {x: -node.w / 2, y: -node.h / 2, width: node.w, height: node.h, rx: 3}, g);
  shape.setAttribute("fill", fill(node));
  shape.setAttribute("stroke", "#333");
  const text = make("text", {}, g);
  text.textContent = node.label;
  const move = () => { const p = where(node); g.setAttribute("transform", "translate(" + p.x + "," + p.y + ")"); };
  move();
  g.addEventListener("mouseenter", () => { if (!selected) show(node, false); });
  g.addEventListener("mouseleave", () => { if (!selected) panel.hidden = true; });
  g.addEventListener("mousedown", event => {
    event.stopPropagation();
    const start = {x: event.clientX, y: event.clientY}, from = {...where(node)};
    let moved = false;
    const drag = e => {
      moved = true;
      placed[current][node.id] = {x: from.x + (e.clientX - start.x) / view.k,
                                  y: from.y + (e.clientY - start.y) / view.k};
      move();
      for (const edge of graph.edges) if (edge.source === node.id || edge.target === node.id) edge.redraw();
    };
    const drop = () => {
      window.removeEventListener("mousemove", drag);
      window.removeEventListener("mouseup", drop);
      if (!moved) { selected = selected === node.id ? null : node.id; render(); if (selected) show(node, true); }
    };
    window.addEventListener("mousemove", drag);
    window.addEventListener("mouseup", drop);
  });
  g.addEventListener("dblclick", () => { if (node.subgraph) open(node.subgraph); });
}

function show(node, pinned) {
  panel.replaceChildren();
  const title = document.createElement("b");
  title.textContent = node.label + " (" + node.kind.replace("_", " ") + ")";
  panel.appendChild(title);
  const table = document.createElement("table");
  for (const [k, v] of Object.entries(node.info)) {
    const row = table.insertRow();
    row.insertCell().textContent = k;
    row.insertCell().textContent = v;
  }
  panel.appendChild(table);
  if (pinned) {
    const edit = document.createElement("button");
    edit.textContent = "Edit label";
    edit.onclick = () => {
      const label = window.prompt("Label of the node", node.label);
      if (label !== null) { node.label = label; render(); show(node, true); }
    };
    panel.appendChild(edit);
    if (node.subgraph) {
      const inner = document.createElement("button");
      inner.textContent = "Open inner graph";
      inner.onclick = () => open(node.subgraph);
      panel.appendChild(inner);
    }
  }
  panel.hidden = false;
}

function open(key) { current = key; selected = null; panel.hidden = true; fit(); render(); }

function fit() {
  const nodes = DATA.graphs[current].nodes;
  if (!nodes.length) return;
  const xs = nodes.map(n => n.x), ys = nodes.map(n => n.y);
  const w = Math.max(...xs) - Math.min(...xs) + 200, h = Math.max(...ys) - Math.min(...ys) + 160;
  view.k = Math.min(1.5, svg.clientWidth / w, (svg.clientHeight - 40) / h);
  view.x = svg.clientWidth / 2 - view.k * (Math.max(...xs) + Math.min(...xs)) / 2;
  view.y = 60 - view.k * Math.min(...ys);
}

function transform() {
  scene.setAttribute("transform", "translate(" + view.x + "," + view.y + ") scale(" + view.k + ")");
}

svg.addEventListener("mousedown", event => {
  const start = {x: event.clientX - view.x, y: event.clientY - view.y};
  const pan = e => { view.x = e.clientX - start.x; view.y = e.clientY - start.y; transform(); };
  const stop = () => { window.removeEventListener("mousemove", pan); window.removeEventListener("mouseup", stop); };
  window.addEventListener("mousemove", pan);
  window.addEventListener("mouseup", stop);
});
svg.addEventListener("wheel", event => {
  event.preventDefault();
  const factor = Math.exp(-event.deltaY / 500);
  view.x = event.clientX - (event.clientX - view.x) * factor;
  view.y = event.clientY - (event.clientY - view.y) * factor;
  view.k *= factor;
  transform();
}, {passive: false});
document.getElementById("reset").onclick = () => { placed[current] = {}; render(); };
document.getElementById("back").onclick = () => open(DATA.graphs[current].parent);
document.getElementById("profile").onclick = () => { profileColors = !profileColors; render(); };
defs();
open("main");
"""
