"""Where the page draws each node: layers top to bottom, in an order that crosses few edges.

A node's layer is the length of the longest path to it from a node nothing
feeds, so every edge points down; then each node moves down to just above the
first node that reads it, so an input sits next to its use. Within a layer, nodes are sorted by the mean
position of their neighbours in the layer above, then below, a few times over
(the barycentre heuristic), and placed side by side, each layer centred. This
needs no Graphviz, so a page can be written on any machine.
"""
from __future__ import annotations

from arignote.d3viz.graph import Graph

LAYER_GAP = 80  # vertical space between layers, in pixels
NODE_GAP = 30
SWEEPS = 4


def size(label: str) -> tuple[float, float]:
    """A node's width and height for its label (about 7 pixels a character, 16 a line)."""
    lines = label.splitlines() or [""]
    return max(60.0, 7.0 * max(len(line) for line in lines) + 24), 16.0 * len(lines) + 18


def layout(graph: Graph) -> dict[str, tuple[float, float]]:
    """The centre ``(x, y)`` of each node of ``graph`` (not of its nested graphs)."""
    order = [n.id for n in graph.nodes]
    parents: dict[str, list[str]] = {i: [] for i in order}
    children: dict[str, list[str]] = {i: [] for i in order}
    for edge in graph.edges:
        parents[edge.target].append(edge.source)
        children[edge.source].append(edge.target)
    layer: dict[str, int] = {}
    ranked = _topological(order, parents, children)
    for node_id in ranked:
        layer[node_id] = max((layer[p] + 1 for p in parents[node_id]), default=0)
    for node_id in reversed(ranked):  # then each node as low as its readers allow
        if children[node_id]:
            layer[node_id] = max(layer[node_id], min(layer[c] for c in children[node_id]) - 1)
    layers: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for node_id in order:
        layers[layer[node_id]].append(node_id)
    for sweep in range(SWEEPS):
        down = sweep % 2 == 0
        sequence = range(1, len(layers)) if down else range(len(layers) - 2, -1, -1)
        for k in sequence:
            neighbours = parents if down else children
            reference = {n: i for i, n in enumerate(layers[k - 1 if down else k + 1])}
            layers[k] = _by_barycentre(layers[k], neighbours, reference)
    widths = {n.id: size(n.label)[0] for n in graph.nodes}
    positions: dict[str, tuple[float, float]] = {}
    for depth, row in enumerate(layers):
        span = sum(widths[n] for n in row) + NODE_GAP * (len(row) - 1)
        x = -span / 2
        for node_id in row:
            positions[node_id] = (x + widths[node_id] / 2, depth * LAYER_GAP)
            x += widths[node_id] + NODE_GAP
    return positions


def _topological(order: list[str], parents: dict, children: dict) -> list[str]:
    waiting = {n: len(parents[n]) for n in order}
    ready = [n for n in order if not waiting[n]]
    result = []
    while ready:
        node_id = ready.pop(0)
        result.append(node_id)
        for child in children[node_id]:
            waiting[child] -= 1
            if not waiting[child]:
                ready.append(child)
    return result


def _by_barycentre(row: list[str], neighbours: dict, reference: dict[str, int]) -> list[str]:
    def key(item: tuple[int, str]) -> float:
        position, node_id = item
        linked = [reference[n] for n in neighbours[node_id] if n in reference]
        return sum(linked) / len(linked) if linked else float(position)
    return [node_id for _, node_id in sorted(enumerate(row), key=key)]
