"""Lazy branches: which nodes run only when a branch of an ``ifelse`` is taken.

An op with ``branch_inputs(node) -> (then_positions, else_positions)`` (``IfElse``)
reads input 0 as its condition and, when it runs, only the inputs of the branch
the condition picks. A node all of whose uses lie in one branch of such a node
(directly, or through nodes that are themselves in it) runs only when that
branch is taken: ``schedule`` nests it under ``Branch``, which the generated
call path (callgen.py) writes as ``if <condition>: ... else: ...`` just before
the branching node. Nodes another part of the graph needs run unconditionally.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence

from arignote.graph.basic import Apply, Variable

Guard = tuple[Apply, int]  # (branching node, 0 for its then branch or 1 for its else branch)


@dataclass
class Branch:
    """Thunk ``index`` (a branching node) and what runs before it, by the condition ``cond``."""

    index: int
    cond: Variable
    then: list = field(default_factory=list)
    orelse: list = field(default_factory=list)


def schedule(nodes: Sequence[Apply], outputs: Sequence[Variable]) -> list:
    """The thunk order: thunk indices and ``Branch`` blocks, nested.

    Without branching nodes this is ``range(len(nodes))``. A node's guards are the
    branches every one of its uses needs; it is placed in the innermost one (the
    guard whose branching node has the most guards itself), just before that node.
    """
    if not any(hasattr(node.op, "branch_inputs") for node in nodes):
        return list(range(len(nodes)))
    guards = _guards(nodes, outputs)
    blocks: dict[Guard | None, list[Apply]] = {}
    for node in nodes:
        inner = max(guards[node], key=lambda g: len(guards[g[0]]), default=None)
        blocks.setdefault(inner, []).append(node)
    index = {node: k for k, node in enumerate(nodes)}

    def build(block: Guard | None) -> list:
        items: list = []
        for node in blocks.get(block, []):
            if hasattr(node.op, "branch_inputs"):
                items.append(Branch(index[node], node.inputs[0], build((node, 0)), build((node, 1))))
            else:
                items.append(index[node])
        return items

    return build(None)


def _guards(nodes: Sequence[Apply], outputs: Sequence[Variable]) -> dict[Apply, frozenset]:
    """For each node, the branches that all of its outputs' uses are inside."""
    uses: dict[Variable, list[frozenset]] = {}
    for var in outputs:
        uses.setdefault(var, []).append(frozenset())
    guards: dict[Apply, frozenset] = {}
    for node in reversed(nodes):
        per_output = [frozenset.intersection(*uses[out]) for out in node.outputs if out in uses]
        guards[node] = frozenset.intersection(*per_output) if per_output else frozenset()
        sides = node.op.branch_inputs(node) if hasattr(node.op, "branch_inputs") else ((), ())
        side_of = {pos: side for side, positions in enumerate(sides) for pos in positions}
        for pos, var in enumerate(node.inputs):
            need = guards[node] | {(node, side_of[pos])} if pos in side_of else guards[node]
            uses.setdefault(var, []).append(need)
    return guards
