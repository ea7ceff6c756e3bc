"""Rewriting a graph that is in no FunctionGraph yet: what a rewrite builds before it hands
its replacement over (Theano's ``pre_constant_merge`` and ``pre_greedy_local_optimizer``).

Both rebuild instead of editing nodes in place: the new subgraph usually reaches into the
graph being rewritten, whose nodes must not change behind its back. A node whose inputs did
not change is kept, so an untouched graph comes back as it was.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.rewriting.basic import NodeRewriter

# Given a node (already on its new inputs), what its outputs become (or None: unchanged).
_NodeStep = Callable[[Apply], "Sequence[Variable] | None"]


def merge_constants(outputs: Sequence[Variable]) -> list[Variable]:
    """``outputs`` with equal constants in their graph made one (the first met), so a rewrite
    that builds many equal constants gives merging and DebugMode one to look at."""
    first: dict = {}

    def constant(var: Constant) -> Variable:
        try:
            return first.setdefault(var.signature(), var)
        except TypeError:  # data without a hashable signature stays as it is
            return var

    return _rebuild(outputs, constant, lambda node: None)


def rewrite_greedily(rewriters: Sequence[NodeRewriter], out: Variable) -> Variable:
    """``out`` with ``rewriters`` applied once to every node of its graph, inputs first (no
    equilibrium): each node is offered to the rewriters in order, and what one returns is
    offered to the next. Used to fold constants in a graph a rewrite is building."""

    def step(node: Apply) -> Sequence[Variable] | None:
        result = None
        for rewriter in rewriters:
            if not rewriter.applies_to(node):
                continue
            found = rewriter.transform(None, node)
            if not found:
                continue
            found = [found.get(o, o) for o in node.outputs] if isinstance(found, dict) else list(found)
            result = [_retyped(old, new) for old, new in zip(node.outputs, found)]
            owners = {v.owner for v in result}
            if len(owners) != 1 or None in owners:
                break  # constants, or several nodes: nothing single left to offer the next one
            node = owners.pop()
        return result

    return _rebuild([out], lambda var: var, step)[0]


def _retyped(old: Variable, new: Variable) -> Variable:
    if new.type == old.type:
        return new
    return old.type.convert_variable(new) or new


def _rebuild(outputs: Sequence[Variable], constant: Callable[[Constant], Variable],
             step: _NodeStep) -> list[Variable]:
    new: dict[Variable, Variable] = {}
    stack = [(var, False) for var in reversed(outputs)]
    while stack:  # a loop, not recursion: graphs deeper than Python's stack are common
        var, ready = stack.pop()
        if var in new:
            continue
        node = var.owner
        if node is None:
            new[var] = constant(var) if isinstance(var, Constant) else var
            continue
        if not ready:
            stack.append((var, True))
            stack.extend((i, False) for i in reversed(node.inputs) if i not in new)
            continue
        inputs = [new[i] for i in node.inputs]
        rebuilt = node if all(a is b for a, b in zip(inputs, node.inputs)) else \
            node.clone_with_new_inputs(inputs, strict=False)
        results = step(rebuilt) or rebuilt.outputs
        new.update(zip(node.outputs, results))
    return [new[var] for var in outputs]
