"""Walking and copying graphs."""
from __future__ import annotations

from collections import Counter, deque
from typing import Any
from collections.abc import Callable, Iterable, Mapping, Sequence

from arignote.graph.basic import Apply, Constant, Variable


def ancestors(outputs: Iterable[Variable], blockers: Iterable[Variable] = ()) -> list[Variable]:
    """Every variable that ``outputs`` depend on, outputs first; stops at ``blockers``."""
    blocked = set(blockers)
    seen: set[Variable] = set()
    order: list[Variable] = []
    stack = list(outputs)[::-1]
    while stack:
        var = stack.pop()
        if var in seen:
            continue
        seen.add(var)
        order.append(var)
        if var.owner is not None and var not in blocked:
            stack.extend(reversed(var.owner.inputs))
    return order


def graph_inputs(outputs: Iterable[Variable], blockers: Iterable[Variable] = ()) -> list[Variable]:
    """The ownerless variables (inputs and constants) that ``outputs`` depend on."""
    blocked = set(blockers)
    return [v for v in ancestors(outputs, blocked) if v.owner is None or v in blocked]


def io_toposort(inputs: Iterable[Variable], outputs: Iterable[Variable],
                before: Mapping[Apply, Sequence[Apply]] | None = None) -> list[Apply]:
    """Apply nodes between ``inputs`` and ``outputs``, each after the nodes it needs.

    ``before`` names, for a node, other nodes to run first although it reads none of their
    outputs (the other readers of an input the node overwrites); a constraint that would
    close a cycle is dropped.
    """
    stop = set(inputs)
    before = before or {}
    order: list[Apply] = []
    done: set[Apply] = set()
    active: set[Apply] = set()
    for out in outputs:
        stack: list[tuple[Apply, bool]] = []
        if out.owner is not None and out not in stop:
            stack.append((out.owner, False))
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            if expanded:
                done.add(node)
                active.discard(node)
                order.append(node)
                continue
            stack.append((node, True))
            active.add(node)
            for inp in reversed(node.inputs):
                if inp.owner is not None and inp not in stop and inp.owner not in done:
                    stack.append((inp.owner, False))
            stack.extend((other, False) for other in before.get(node, ())
                         if other not in done and other not in active)
    return order


def general_toposort(outputs: Iterable[Any], deps: Callable[[Any], Sequence[Any] | None]) -> list[Any]:
    """Every object reachable from ``outputs`` through ``deps`` (an object -> the objects it
    needs, or None), each after what it needs (Theano's ``gof.graph.general_toposort``).

    Objects needing nothing come first, in the order a depth-first walk from the outputs
    meets them; then each object as soon as all it needs is placed.
    """
    needs: dict[Any, list[Any]] = {}
    found: list[Any] = []
    stack = list(outputs)
    while stack:
        obj = stack.pop()
        if obj in needs:
            continue
        needs[obj] = list(dict.fromkeys(deps(obj) or ()))
        found.append(obj)
        stack.extend(needs[obj])
    waiting = {obj: len(req) for obj, req in needs.items()}
    users: dict[Any, list[Any]] = {}
    for obj in found:
        for req in needs[obj]:
            users.setdefault(req, []).append(obj)
    ready = deque(obj for obj in found if not waiting[obj])
    order: list[Any] = []
    while ready:
        obj = ready.popleft()
        order.append(obj)
        for user in users.get(obj, ()):
            waiting[user] -= 1
            if not waiting[user]:
                ready.append(user)
    if len(order) != len(found):
        raise ValueError("general_toposort: the dependencies form a cycle")
    return order


def stack_search(start: Iterable[Any], expand: Callable[[Any], Iterable[Any] | None],
                 mode: str = "bfs") -> list[Any]:
    """The objects met searching from ``start`` through ``expand``, each once, in the order
    met: breadth-first (``mode='bfs'``) or depth-first (``'dfs'``)."""
    if mode not in ("bfs", "dfs"):
        raise ValueError(f"stack_search: mode must be 'bfs' or 'dfs', got {mode!r}")
    todo, seen, order = deque(start), set(), []
    take = todo.popleft if mode == "bfs" else todo.pop
    while todo:
        obj = take()
        if obj in seen:
            continue
        seen.add(obj)
        order.append(obj)
        todo.extend(expand(obj) or ())
    return order


def orphans(inputs: Iterable[Variable], outputs: Iterable[Variable]) -> list[Variable]:
    """The ownerless variables (constants, forgotten inputs) that ``outputs`` need besides ``inputs``."""
    given = set(inputs)
    return [v for v in graph_inputs(outputs, given) if v not in given]


def view_roots(var: Variable) -> list[Variable]:
    """The variables whose memory ``var`` views, following the ``view_map`` of its owners."""
    node = var.owner
    if node is None:
        return [var]
    views = getattr(node.op, "view_map", {}).get(node.outputs.index(var))
    if not views:
        return [var]
    return [root for k in views for root in view_roots(node.inputs[k])]


def is_in_ancestors(last: Apply, first: Apply) -> bool:
    """Whether node ``first`` computes something node ``last`` needs, directly or not."""
    return first in {v.owner for v in ancestors(last.inputs) if v.owner is not None}


def clone_get_equiv(inputs: Sequence[Variable], outputs: Sequence[Variable],
                    copy_inputs: bool = True, replace: dict[Variable, Variable] | None = None,
                    copy_orphans: bool | None = None) -> dict[Variable, Variable]:
    """Copy the graph from ``inputs`` to ``outputs``; return old -> new for every variable.

    ``replace`` maps variables of the old graph to variables to use in their place
    (as ``givens`` does); the replacement is used as is, not copied. Ownerless variables
    outside ``inputs`` are copied when ``copy_orphans`` says so; by default constants
    always are, and other orphans as ``copy_inputs`` says.
    """
    equiv: dict = dict(replace or {})
    for inp in inputs:
        if inp not in equiv:
            equiv[inp] = inp.clone() if copy_inputs else inp
    for node in io_toposort(list(equiv), outputs):
        new_inputs = []
        for inp in node.inputs:
            if inp not in equiv:
                copy = (copy_inputs or isinstance(inp, Constant)) if copy_orphans is None else copy_orphans
                equiv[inp] = inp.clone() if copy else inp
            new_inputs.append(equiv[inp])
        new_node = node.clone_with_new_inputs(new_inputs, strict=False)
        equiv[node] = new_node
        for old, new in zip(node.outputs, new_node.outputs):
            if old not in equiv:
                equiv[old] = new
            if new.name is None:
                new.name = old.name
    for out in outputs:
        if out not in equiv:
            equiv[out] = out.clone() if copy_inputs else out
    return equiv


def clone(inputs: Sequence[Variable], outputs: Sequence[Variable], copy_inputs: bool = True,
          copy_orphans: bool | None = None) -> tuple[list[Variable], list[Variable]]:
    equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans=copy_orphans)
    return [equiv[i] for i in inputs], [equiv[o] for o in outputs]


def is_same_graph(var1: Variable, var2: Variable, givens: Any = None, debug: bool = False) -> bool:
    """Whether ``var1`` and ``var2`` compute the same thing by the same graph (Theano's test):
    equal ops applied to the same inputs, constants equal by value, other leaves by identity.
    ``x * (y * z)`` and ``(x * y) * z`` differ. ``givens`` (a dict or pairs) substitutes
    variables in both graphs first. ``debug`` is accepted for Theano's signature."""
    substitute = dict(givens or {})
    keys: dict[Variable, Any] = {}

    def resolved(var: Variable) -> Variable:
        return substitute.get(var, var)

    for root in (var1, var2):
        stack, visiting = [resolved(root)], set()
        while stack:
            var = stack[-1]
            if var in keys:
                stack.pop()
                continue
            visiting.add(var)
            if isinstance(var, Constant):
                keys[var] = ("constant", var.signature())
            elif var.owner is None:
                keys[var] = ("leaf", id(var))
            else:
                inputs = [resolved(i) for i in var.owner.inputs]
                pending = [i for i in inputs if i not in keys]
                if any(i in visiting for i in pending):
                    raise ValueError(f"is_same_graph: givens replace a variable by a graph that "
                                     f"contains it (at {var})")
                if pending:
                    stack.extend(pending)
                    continue
                keys[var] = ("apply", var.owner.op, var.index, tuple(keys[i] for i in inputs))
            stack.pop()
    return keys[resolved(var1)] == keys[resolved(var2)]


def _node_string(node: Apply, args: list[str]) -> str:
    return f"{node.op}({', '.join(args)})"


def as_string(i: list, o: list, leaf_formatter: Callable[[Variable], str] = str,
              node_formatter: Callable[[Apply, list[str]], str] = _node_string) -> list[str]:
    """One string per output of ``o``, its graph written as nested calls down to ``i``.

    A node whose outputs are used more than once is written out at its first use, marked
    ``*n -> ...``, and is ``*n`` afterwards (``*n.k`` for its output ``k`` when it has several).
    Variables of ``i`` and ownerless ones are written by ``leaf_formatter``.
    """
    given = set(i)
    uses: Counter = Counter(o)
    for node in io_toposort(i, o):
        uses.update(node.inputs)
    shared_nodes = {v.owner for v, n in uses.items() if n > 1 and v.owner is not None and v not in given}
    labels: dict[Apply, int] = {}

    def write(var: Variable) -> str:
        node = var.owner
        if node is None or var in given:
            return leaf_formatter(var)
        label = "" if len(node.outputs) == 1 else f".{node.outputs.index(var)}"
        if node in labels:
            return f"*{labels[node]}{label}"
        if node not in shared_nodes:
            return node_formatter(node, [write(inp) for inp in node.inputs])
        labels[node] = len(labels) + 1
        return f"*{labels[node]}{label} -> " + node_formatter(node, [write(inp) for inp in node.inputs])

    return [write(out) for out in o]
