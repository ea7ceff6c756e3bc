"""Walking and copying graphs."""
from __future__ import annotations

from typing import Any
from collections.abc import Iterable, Mapping, Sequence

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


def clone_get_equiv(inputs: Sequence[Variable], outputs: Sequence[Variable],
                    copy_inputs: bool = True, replace: dict[Variable, Variable] | None = None,
                    ) -> dict[Variable, Variable]:
    """Copy the graph from ``inputs`` to ``outputs``; return old -> new for every variable.

    ``replace`` maps variables of the old graph to variables to use in their place
    (as ``givens`` does); the replacement is used as is, not copied.
    """
    equiv: dict = dict(replace or {})
    for inp in inputs:
        if inp not in equiv:
            equiv[inp] = inp.clone() if copy_inputs else inp
    for node in io_toposort(list(equiv), outputs):
        new_inputs = []
        for inp in node.inputs:
            if inp not in equiv:
                equiv[inp] = inp.clone() if copy_inputs or isinstance(inp, Constant) else inp
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
          ) -> tuple[list[Variable], list[Variable]]:
    equiv = clone_get_equiv(inputs, outputs, copy_inputs)
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
