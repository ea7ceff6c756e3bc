"""The rewriting engine: node rewriters, the passes that apply them, and equilibrium.

A node rewriter looks at one Apply node and returns replacements for its
outputs (or None). A graph rewriter edits a whole FunctionGraph. Walking passes
apply node rewriters in topological (``in_to_out``) or reverse (``out_to_in``)
order; the equilibrium pass repeats them until nothing changes, with a bound
so that no rewrite cycle can blow a graph up.
"""
from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Callable, Iterable, Sequence

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.errors import InconsistencyError
from arignote.graph.fg import FunctionGraph
from arignote.graph.traversal import graph_inputs

Replacement = Sequence[Variable] | dict[Variable, Variable] | None


class RewritePhaseStopped(UserWarning):
    """An equilibrium phase hit its bound (growth or passes) before its rewrites were done."""


class NodeRewriter:
    """Rewrites single nodes. ``tracks`` lists the Op classes (or instances) it looks at."""

    name: str = ""
    tracks: tuple = ()

    def transform(self, fgraph: FunctionGraph, node: Apply) -> Replacement:
        raise NotImplementedError

    def applies_to(self, node: Apply) -> bool:
        if not self.tracks:
            return True
        op = node.op
        return any(op == t if not isinstance(t, type) else isinstance(op, t) for t in self.tracks)

    def by_class(self, cls: type) -> bool | None:
        """What :meth:`applies_to` says for every op of class ``cls`` (False, True), or
        None when it depends on the op (a tracked instance)."""
        if not self.tracks:
            return True
        instances = False
        for t in self.tracks:  # a loop, not any(): a new process asks this for every class
            if not isinstance(t, type):
                instances = True
            elif issubclass(cls, t):
                return True
        return None if instances else False

    def __repr__(self) -> str:
        return self.name or type(self).__name__


class FunctionNodeRewriter(NodeRewriter):
    def __init__(self, fn: Callable[[FunctionGraph, Apply], Replacement], tracks: Iterable, name: str):
        self.fn = fn
        self.tracks = tuple(tracks)
        self.name = name
        self.__doc__ = fn.__doc__

    def transform(self, fgraph: FunctionGraph, node: Apply) -> Replacement:
        return self.fn(fgraph, node)


def node_rewriter(tracks: Iterable | None = None, name: str | None = None
                  ) -> Callable[[Callable], FunctionNodeRewriter]:
    """Decorator: ``@node_rewriter([Elemwise])`` turns ``fn(fgraph, node)`` into a rewriter."""
    def wrap(fn: Callable) -> FunctionNodeRewriter:
        return FunctionNodeRewriter(fn, tracks or (), name or fn.__name__)
    return wrap


class GraphRewriter:
    """Edits a FunctionGraph as a whole."""

    name: str = ""

    def apply(self, fgraph: FunctionGraph) -> int:
        """Rewrite ``fgraph``; return how many changes were made."""
        raise NotImplementedError

    def __call__(self, fgraph: FunctionGraph) -> int:
        return self.apply(fgraph)

    def __repr__(self) -> str:
        return self.name or type(self).__name__


def apply_replacement(fgraph: FunctionGraph, node: Apply, result: Replacement, reason: str,
                      validate: bool = False) -> bool:
    """Install a node rewriter's result; False when it was None or changed nothing. With
    ``validate`` the replacements go in together through ``fgraph.replace_all_validate``:
    one that a feature (the DestroyHandler) refuses is undone and its InconsistencyError
    raised."""
    if result is None or result is False:
        return False
    pairs = list(result.items()) if isinstance(result, dict) else list(zip(node.outputs, result))
    if not isinstance(result, dict) and len(result) != len(node.outputs):
        raise ValueError(f"rewrite {reason} returned {len(result)} replacements for "
                         f"{len(node.outputs)} outputs of {node.op}")
    changes = []
    for old, new in pairs:
        if new is None or new is old:
            continue
        if old.type != new.type:
            converted = old.type.convert_variable(new)
            if converted is None:
                raise TypeError(f"rewrite {reason} replaced {old} of type {old.type} "
                                f"by {new} of type {new.type}")
            new = converted
        if old in fgraph.variables:
            changes.append((old, new))
    if validate:
        fgraph.replace_all_validate(changes, reason=reason)
    else:
        fgraph.replace_all(changes, reason=reason)
    return bool(changes)


# failure_callback(error, rewriter, pairs, node_rewriter, node): told of a replacement refused
FailureCallback = Callable[[Exception, Any, list, Any, Apply], Any]


class WalkingRewriter(GraphRewriter):
    """One pass of node rewriters over the graph, inputs first or outputs first. Given a
    ``failure_callback``, each replacement is validated (see ``apply_replacement``) and a
    refused one (InconsistencyError) goes to the callback instead of stopping the walk, as
    Theano's navigators did for in-place rewrites a destroy handler turns down."""

    def __init__(self, rewriters: Sequence[NodeRewriter], order: str = "in_to_out", name: str = "",
                 failure_callback: FailureCallback | None = None):
        if order not in ("in_to_out", "out_to_in"):
            raise ValueError(f"order must be 'in_to_out' or 'out_to_in', got {order!r}")
        self.rewriters = list(rewriters)
        self.order = order
        self.name = name or f"walk({', '.join(map(repr, self.rewriters))})"
        self.failure_callback = failure_callback
        # Op class -> the rewriters that may apply to its nodes, in order, each with
        # whether a node must still be asked (``applies_to``) and what to call: the tracks
        # are looked at once per class, not once per node and pass (most of a walk's time
        # otherwise), and a function rewriter's function is called without its wrapper.
        self._for_class: dict[type, list[tuple[NodeRewriter, bool, Callable]]] = {}

    def _candidates(self, cls: type) -> list[tuple[NodeRewriter, bool, Callable]]:
        found = self._for_class.get(cls)
        if found is None:
            verdicts = [(rw, rw.by_class(cls)) for rw in self.rewriters]
            found = self._for_class[cls] = [
                (rw, v is None, rw.fn if type(rw).transform is FunctionNodeRewriter.transform
                 else rw.transform) for rw, v in verdicts if v is not False]
        return found

    def apply(self, fgraph: FunctionGraph, growth: dict | None = None) -> int:
        """One walk; ``growth``, when given, gains the nodes each rewriter added (net): the
        caller's record, so a walker shared by concurrent compilations holds no state of one."""
        nodes = fgraph.toposort()
        if self.order == "out_to_in":
            nodes.reverse()
        changes = 0
        present = fgraph.apply_nodes
        candidates = self._for_class
        for node in nodes:
            if node not in present:
                continue  # pruned by an earlier replacement in this pass
            cls = type(node.op)
            for rw, ask, transform in candidates.get(cls) or self._candidates(cls):
                if not ask or rw.applies_to(node):
                    result = transform(fgraph, node)
                    if result is None:
                        continue
                    size = len(present)
                    if self._install(fgraph, node, result, rw):
                        if growth is not None:
                            growth[rw] = growth.get(rw, 0) + len(present) - size
                        changes += 1
                        break
        return changes

    def _install(self, fgraph: FunctionGraph, node: Apply, result: Replacement, rw: NodeRewriter) -> bool:
        if self.failure_callback is None:
            return apply_replacement(fgraph, node, result, repr(rw))
        try:
            return apply_replacement(fgraph, node, result, repr(rw), validate=True)
        except InconsistencyError as error:
            pairs = list(result.items()) if isinstance(result, dict) else list(zip(node.outputs, result))
            self.failure_callback(error, self, pairs, rw, node)
            return False


def in_to_out(*rewriters: NodeRewriter, name: str = "") -> WalkingRewriter:
    return WalkingRewriter(rewriters, "in_to_out", name)


def out_to_in(*rewriters: NodeRewriter, name: str = "") -> WalkingRewriter:
    return WalkingRewriter(rewriters, "out_to_in", name)


class EquilibriumRewriter(GraphRewriter):
    """Repeat node rewriters (and graph rewriters) until a pass changes nothing.

    ``max_passes`` bounds the work; ``max_growth`` stops if the graph is past that
    factor of its starting size and still growing pass after pass, so a pair of rewrites
    undoing each other or one that keeps expanding cannot run away. A first pass may
    expand past it (it visits only the nodes it started with, so its growth is bounded):
    32 slice shapes written out as length formulas grow 64 nodes to 337, which the next
    passes fold back to 132.
    """

    def __init__(self, rewriters: Sequence[NodeRewriter | GraphRewriter], max_passes: int = 50,
                 max_growth: float = 4.0, name: str = ""):
        self.node_rewriters = [r for r in rewriters if isinstance(r, NodeRewriter)]
        self.graph_rewriters = [r for r in rewriters if isinstance(r, GraphRewriter)]
        self.max_passes = max_passes
        self.max_growth = max_growth
        self.name = name or "equilibrium"
        self.walker = WalkingRewriter(self.node_rewriters, "out_to_in") if self.node_rewriters else None

    def apply(self, fgraph: FunctionGraph) -> int:
        start = len(fgraph.apply_nodes)
        limit = max(100, int(start * self.max_growth))
        total = 0
        walker = self.walker
        growth: dict[Any, int] = {}
        previous = None  # the size after the last pass
        for _ in range(self.max_passes):
            changes = 0
            for g in self.graph_rewriters:
                size = len(fgraph.apply_nodes)
                changes += g.apply(fgraph)
                growth[g] = growth.get(g, 0) + len(fgraph.apply_nodes) - size
            if walker is not None:
                changes += walker.apply(fgraph, growth)
            total += changes
            if not changes:
                return total
            size = len(fgraph.apply_nodes)
            if size > limit and previous is not None and size > previous:
                self._stopped(f"the graph grew from {start} to {size} nodes, past "
                              f"{self.max_growth:g} times its size", growth)
                return total
            previous = size
        self._stopped(f"its rewrites still changed the graph after {self.max_passes} passes", growth)
        return total

    def _stopped(self, why: str, growth: dict[Any, int]) -> None:
        """A phase cut short leaves its other rewrites (constant folding among them) undone on
        what came last: say so, naming the rewrites that grew the graph most."""
        grown = sorted(((n, repr(r)) for r, n in growth.items() if n > 0), reverse=True)[:3]
        named = (", most by " + ", ".join(f"{name!r} (+{n} nodes)" for n, name in grown)) if grown else ""
        fix = (f"exclude it (mode.excluding({grown[0][1]!r})) or report it" if grown
               else "report the graph")
        warnings.warn(f"rewrite phase {self.name!r} stopped early: {why}{named}; the phase's other "
                      f"rewrites did not finish, so the compiled graph may be slower or less stable: {fix}",
                      RewritePhaseStopped, stacklevel=2)


class SequenceRewriter(GraphRewriter):
    """Graph rewriters run one after the other."""

    def __init__(self, rewriters: Sequence[GraphRewriter], name: str = ""):
        self.rewriters = list(rewriters)
        self.name = name or "sequence"

    def apply(self, fgraph: FunctionGraph) -> int:
        return sum(r.apply(fgraph) for r in self.rewriters)


def rewrite_graph(outputs: Variable | Sequence[Variable], rewriter: GraphRewriter) -> Any:
    """Rewrite a graph outside ``function()``; returns the new outputs (for tests and tools)."""
    single = isinstance(outputs, Variable)
    outs = [outputs] if single else list(outputs)
    inputs = [v for v in graph_inputs(outs) if not isinstance(v, Constant)]
    fgraph = FunctionGraph(inputs, outs, clone=False)
    rewriter.apply(fgraph)
    return fgraph.outputs[0] if single else list(fgraph.outputs)
