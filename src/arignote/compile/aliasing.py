"""Which memory a variable of a graph may share: the ``view_map``/``destroy_map`` walk that
both the placing of output copies (output_copies.py) and the executor's buffer decisions
(executor.py) read."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from arignote.graph.basic import Variable

Roots = Callable[[Variable], frozenset]


def alias_roots() -> Roots:
    """A function giving the variables whose memory ``var`` may share (itself if none)."""
    cache: dict[Variable, frozenset] = {}

    def roots(var: Variable) -> frozenset:
        # Iterative, so a long chain of views does not hit the recursion limit.
        stack = [var]
        while stack:
            top = stack[-1]
            if top in cache:
                stack.pop()
                continue
            node = top.owner
            linked = [] if node is None else [
                node.inputs[i] for i in node.op.view_map.get(top.index, [])
                + node.op.destroy_map.get(top.index, [])]
            pending = [v for v in linked if v not in cache]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            cache[top] = frozenset().union(*[cache[v] for v in linked]) if linked else frozenset([top])
        return cache[var]

    return roots


def overwritten_roots(nodes: Iterable[Any], roots_of: Roots | None = None) -> frozenset:
    """The variables owning memory that one of ``nodes`` overwrites (the graph inputs among
    them are overwritten in place, directly or through a view)."""
    roots_of = roots_of or alias_roots()
    return frozenset().union(*[roots_of(node.inputs[i]) for node in nodes
                               for idxs in node.op.destroy_map.values() for i in idxs])
