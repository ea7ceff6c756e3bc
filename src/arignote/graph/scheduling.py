"""Ordering Apply nodes by user preferences (Theano's ``gof.sched``).

A linker runs a graph's nodes in some order that respects their dependencies; a user
with preferences (memory first, one device's nodes together, a readable order) gives
``sort_schedule_fn(*cmps)`` comparison functions and passes the result to a linker as
``schedule``. Comparisons are old-style ``cmp(a, b)`` functions (negative: ``a`` first);
earlier ones win: ``posort`` keeps a later preference only where no earlier preference
(nor the dependencies, which ``sort_schedule_fn`` puts first) already decided the pair.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from arignote.graph.basic import Apply, Variable
from arignote.graph.traversal import io_toposort

Cmp = Callable[[Any, Any], float]

__all__ = ["make_depends", "make_dependence_cmp", "reverse_dict", "_toposort", "posort",
           "sort_apply_nodes", "sort_schedule_fn", "key_to_cmp"]


def make_depends() -> Callable[[tuple[Apply, Apply]], bool]:
    """``depends((a, b))``: whether node ``a`` reads, directly or through other nodes, an
    output of node ``b`` (answers are remembered, so asking about every pair is cheap)."""
    known: dict[tuple[Apply, Apply], bool] = {}

    def depends(pair: tuple[Apply, Apply]) -> bool:
        a, b = pair
        if pair not in known:
            parents = [v.owner for v in a.inputs if v.owner is not None]
            known[pair] = any(p is b for p in parents) or any(depends((p, b)) for p in parents)
        return known[pair]
    return depends


def make_dependence_cmp() -> Cmp:
    """A comparison of Apply nodes by dependence: -1 when ``b`` needs ``a`` (``a`` runs first),
    1 when ``a`` needs ``b``, 0 when neither needs the other."""
    depends = make_depends()

    def dependence(a: Apply, b: Apply) -> int:
        if depends((b, a)):
            return -1
        if depends((a, b)):
            return 1
        return 0
    return dependence


def reverse_dict(d: Mapping[Hashable, Iterable[Hashable]]) -> dict[Hashable, tuple]:
    """``{value: (keys whose values hold it)}`` for a dict of collections: the edges of a
    graph turned around."""
    result: dict[Hashable, tuple] = {}
    for key, values in d.items():
        for value in values:
            result[value] = result.get(value, ()) + (key,)
    return result


def _toposort(edges: Mapping[Hashable, Iterable[Hashable]]) -> list:
    """The nodes of a graph given as ``{a: nodes that must come after a}``, each before every
    node it points to (Kahn's algorithm). Raises ValueError when the edges form a cycle."""
    incoming = {node: set(parents) for node, parents in reverse_dict(edges).items()}
    ready = [node for node in edges if node not in incoming]
    order: list = []
    while ready:
        node = ready.pop(0)
        order.append(node)
        for after in edges.get(node, ()):
            waiting = incoming[after]
            waiting.discard(node)
            if not waiting:
                ready.append(after)
    if any(incoming.values()):
        raise ValueError(f"_toposort: the edges form a cycle among {[n for n, w in incoming.items() if w]}")
    return order


def posort(items: Sequence[Hashable], *cmps: Cmp) -> list:
    """``items`` in an order every comparison agrees with as far as the earlier ones allow.

    Each ``cmp(a, b) < 0`` asks for ``a`` before ``b``; it is kept unless the preferences
    kept so far (with what they imply transitively) already order the pair, so the first
    comparison is always obeyed and a later one only breaks its ties. The comparisons need
    not be total or consistent with each other.
    """
    after: dict[Hashable, set] = {a: set() for a in items}   # transitively
    before: dict[Hashable, set] = {a: set() for a in items}
    for cmp in cmps:
        for a in items:
            for b in items:
                if a is b or b in after[a] or b in before[a] or not cmp(a, b) < 0:
                    continue
                earlier, later = before[a] | {a}, after[b] | {b}
                for x in earlier:
                    after[x] |= later
                for y in later:
                    before[y] |= earlier
    return _toposort(after)


def sort_apply_nodes(inputs: Sequence[Variable], outputs: Sequence[Variable], cmps: Sequence[Cmp]) -> list[Apply]:
    """The Apply nodes between ``inputs`` and ``outputs`` ordered by ``posort`` with ``cmps``
    (give ``make_dependence_cmp()`` first for an order the graph can run in)."""
    return posort(io_toposort(inputs, outputs), *cmps)


def sort_schedule_fn(*cmps: Cmp) -> Callable[[Any], list[Apply]]:
    """A linker's ``schedule``: ``schedule(fgraph)`` is the graph's nodes in dependency order,
    ties broken by ``cmps`` (earlier first)."""
    ordering = (make_dependence_cmp(), *cmps)

    def schedule(fgraph: Any) -> list[Apply]:
        return sort_apply_nodes(fgraph.inputs, fgraph.outputs, ordering)
    return schedule


def key_to_cmp(key: Callable[[Any], Any]) -> Cmp:
    """The comparison that orders by ``key(node)`` (smaller first)."""
    def cmp(a: Any, b: Any) -> int:
        ka, kb = key(a), key(b)
        return (ka > kb) - (ka < kb)
    return cmp
