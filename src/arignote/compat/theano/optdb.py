"""Theano's way of writing and collecting rewrites (``gof.local_optimizer``, ``gof.EquilibriumDB``),
on arignote's rewriting engine.

A Theano local optimizer is ``fn(node)`` returning the node outputs' replacements (a list or a
dict) or a false value; ours take ``(fgraph, node)`` and return None for "no change", so the
decorator adapts the call. A database collects rewriters under tags; ``query('+tag', '-tag')``
gives the rewriter (one equilibrium pass over the chosen ones) that ``Mode(optimizer=...)`` and
``DebugMode(optimizer=...)`` take. Each replacement is recorded under the rewriter's name, the
name ``DebugMode``'s ``BadOptimization.reason`` reports.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Iterable

from arignote.graph.rewriting.basic import (EquilibriumRewriter, FunctionNodeRewriter, GraphRewriter,
                                            NodeRewriter, in_to_out, out_to_in)

__all__ = ["local_optimizer", "EquilibriumDB", "in2out", "out2in", "TopoOptimizer"]


def local_optimizer(tracks: Iterable | None, inplace: bool = False,
                    requirements: tuple = ()) -> Callable[[Callable], FunctionNodeRewriter]:
    """Decorator: ``@local_optimizer([T.add])`` above ``fn(node)``. ``tracks`` lists the ops (or
    Op classes) whose nodes ``fn`` is shown; None shows it every node. ``inplace`` and
    ``requirements`` (Theano's features to attach first) are accepted: arignote checks every
    in-place replacement itself."""
    def wrap(fn: Callable) -> FunctionNodeRewriter:
        def transform(fgraph: Any, node: Any) -> Any:
            return fn(node) or None
        return FunctionNodeRewriter(transform, tracks or (), fn.__name__)
    return wrap


def _walk(order: str) -> Callable[..., GraphRewriter]:
    def make(*rewriters: NodeRewriter, name: str | None = None, **ignored: Any) -> GraphRewriter:
        walk = in_to_out if order == "in_to_out" else out_to_in
        return walk(*rewriters, name=name or "")
    make.__doc__ = f"Theano's ``{'in2out' if order == 'in_to_out' else 'out2in'}``: one walk of the " \
                   "graph applying the rewriters to each node (``ignore_newtrees`` and the like are " \
                   "accepted)."
    return make


in2out = _walk("in_to_out")
out2in = _walk("out_to_in")


def TopoOptimizer(rewriter: NodeRewriter, order: str = "in_to_out", **ignored: Any) -> GraphRewriter:
    """Theano's ``TopoOptimizer(local_opt, order='in_to_out')``: one walk in that order."""
    return (in_to_out if order == "in_to_out" else out_to_in)(rewriter)


class EquilibriumDB:
    """Rewriters registered under names and tags; a query gives them as one equilibrium pass."""

    def __init__(self, ignore_newtrees: bool = True, tracks_on_change_inputs: bool = False):
        self._entries: dict[str, tuple[Any, frozenset]] = {}

    def register(self, name: str, rewriter: Any, *tags: str, **ignored: Any) -> None:
        if name in self._entries:
            raise ValueError(f"EquilibriumDB.register: a rewriter named {name!r} is already registered")
        if not isinstance(rewriter, (NodeRewriter, GraphRewriter)):
            raise TypeError(f"EquilibriumDB.register({name!r}, ...): expected a rewriter made with "
                            f"@local_optimizer (or an arignote rewriter), got {rewriter!r}")
        self._entries[name] = (rewriter, frozenset(tags) | {name})

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def query(self, *queries: str, include: Iterable[str] = (), exclude: Iterable[str] = (),
              require: Iterable[str] = ()) -> EquilibriumRewriter:
        """``query('+fast_run', '-inplace', '&stable')``: the rewriters carrying an included tag,
        no excluded one and every required one."""
        include, exclude, require = set(include), set(exclude), set(require)
        for q in queries:
            sign, tag = q[:1], q[1:]
            if sign not in ("+", "-", "&"):
                raise ValueError(f"EquilibriumDB.query({q!r}): each query starts with '+' (include), "
                                 "'-' (exclude) or '&' (require)")
            {"+": include, "-": exclude, "&": require}[sign].add(tag)
        chosen = [rw for rw, tags in self._entries.values()
                  if tags & include and not tags & exclude and require <= tags]
        return EquilibriumRewriter(chosen, name=f"EquilibriumDB.query({', '.join(queries)})")
