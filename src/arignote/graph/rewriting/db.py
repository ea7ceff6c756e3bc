"""The rewrite database: rewriters registered by phase and tags, and the queries modes make.

Phases run in a fixed order, each to equilibrium, with merging between them:
``canonicalize`` (put the graph in a standard form), ``stabilize`` (numerically
safer forms), ``specialize`` (faster forms), ``fusion``, ``placement`` (moving
nodes to the GPU device: after fusion, so a fused chain becomes one kernel),
``late_fusion`` (fusions only the CPU runs, such as a map into its reduction),
``inplace``. A mode
selects rewriters by tags (``fast_run``, ``fast_compile``, or a rewriter's
own name) and can exclude any tag.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import Any

from arignote import progress
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import (EquilibriumRewriter, GraphRewriter, NodeRewriter,
                                            SequenceRewriter)
from arignote.graph.rewriting.constant_folding import constant_folding
from arignote.graph.rewriting.merge import MergeRewriter

PHASES = ("canonicalize", "stabilize", "specialize", "fusion", "placement", "late_fusion", "inplace")
# Where Theano's optimizer database ran each phase's work (its ``position``): a query's
# ``position_cutoff`` keeps the phases before it, as Theano's kept the optimizers before it.
PHASE_POSITIONS = {"canonicalize": 1.0, "stabilize": 1.5, "specialize": 2.0, "fusion": 49.0,
                   "placement": 49.1, "late_fusion": 49.5, "inplace": 75.0}


@dataclass
class Entry:
    name: str
    rewriter: NodeRewriter | GraphRewriter
    phase: str
    tags: frozenset = field(default_factory=frozenset)


def selects(tags: frozenset, include: frozenset, exclude: frozenset, require: frozenset) -> bool:
    """Whether a query takes an entry with ``tags``: an included tag, no excluded one, all the
    required ones."""
    return bool(tags & include) and not tags & exclude and require <= tags


class Query:
    """Which optimizers to take: every one with an ``include`` tag, all the ``require`` tags
    and no ``exclude`` tag (``subquery`` is Theano's and accepted;
    ``position_cutoff`` keeps the phases Theano ran before that position, ``PHASE_POSITIONS``).
    As strings: ``'tag'``/``'+tag'`` includes, ``'-tag'`` excludes, ``'&tag'`` requires."""

    def __init__(self, include: Iterable[str], require: Iterable[str] | None = None,
                 exclude: Iterable[str] | None = None, subquery: dict | None = None,
                 position_cutoff: float = math.inf, extra_optimizations: Any = None):
        self.include, self.require = tuple(include), tuple(require or ())
        self.exclude, self.subquery = tuple(exclude or ()), dict(subquery or {})
        self.position_cutoff = position_cutoff

    def including(self, *tags: str) -> Query:
        return Query(self.include + tags, self.require, self.exclude, self.subquery, self.position_cutoff)

    def excluding(self, *tags: str) -> Query:
        return Query(self.include, self.require, self.exclude + tags, self.subquery, self.position_cutoff)

    def requiring(self, *tags: str) -> Query:
        return Query(self.include, self.require + tags, self.exclude, self.subquery, self.position_cutoff)

    def __repr__(self) -> str:
        return (f"Query(include={list(self.include)}, require={list(self.require)}, "
                f"exclude={list(self.exclude)})")


class RewriteDatabase:
    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self._queried: dict[tuple, Pipeline] = {}  # a query -> its pipeline (they hold no state)

    def register(self, rewriter: NodeRewriter | GraphRewriter, phase: str, *tags: str,
                 name: str | None = None, opt_in: bool = False) -> NodeRewriter | GraphRewriter:
        """Add ``rewriter`` to ``phase`` with ``tags``; its name and phase are tags too, except
        the phase for an ``opt_in`` rewrite (one that drops checks): only its name or its own
        tags select it, never ``including('canonicalize')``."""
        if phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r}; phases are {', '.join(PHASES)}")
        name = name or repr(rewriter)
        if name in self.entries:
            raise ValueError(f"a rewrite named {name!r} is already registered")
        self.entries[name] = Entry(name, rewriter, phase, frozenset(tags) | {name} | (set() if opt_in else {phase}))
        self._queried.clear()
        return rewriter

    def remove(self, name: str) -> Entry:
        """Unregister the rewrite ``name`` (a user's, or one to switch off for good)."""
        if name not in self.entries:
            raise KeyError(f"no rewrite named {name!r} is registered")
        self._queried.clear()
        return self.entries.pop(name)

    def query(self, include: Iterable[str], exclude: Iterable[str] = (),
              require: Iterable[str] = (), position_cutoff: float = math.inf) -> GraphRewriter:
        """The pipeline of every rewriter carrying an included tag, no excluded one and
        every required one, in the phases before ``position_cutoff``."""
        exclude = set(exclude) | {p for p, at in PHASE_POSITIONS.items() if at >= position_cutoff}
        include, exclude, require = frozenset(include), frozenset(exclude), frozenset(require)
        found = self._queried.get((include, exclude, require))
        if found is None:
            found = self._queried[include, exclude, require] = self._pipeline(include, exclude, require)
        return found

    def _pipeline(self, include: frozenset, exclude: frozenset, require: frozenset) -> Pipeline:
        phases: list[tuple[str, GraphRewriter]] = [("merge", MergeRewriter())] if "merge" not in exclude else []
        for phase in PHASES:
            chosen = [e.rewriter for e in self.entries.values()
                      if e.phase == phase and selects(e.tags, include, exclude, require)
                      and phase not in exclude]
            if not chosen:
                continue
            if phase in ("fusion", "placement", "late_fusion", "inplace"):
                phases.extend((phase, c) for c in chosen)  # whole-graph passes, run once
                if phase == "late_fusion" and "merge" not in exclude:
                    # BLAS and lowered convolutions build their shape inputs afresh: equal
                    # ones become one before the in-place pass decides who may overwrite what
                    phases.append(("merge", MergeRewriter()))
            else:
                phases.append((phase, EquilibriumRewriter(
                    chosen + ([MergeRewriter()] if "merge" not in exclude else []), name=phase)))
        return Pipeline(phases, sorted(include), sorted(exclude))


class Pipeline(SequenceRewriter):
    """A queried pipeline; remembers the query so modes can print and extend it.

    Running it adds each phase's seconds to ``fgraph.rewrite_times`` (what a
    profile reports) and names the phase to the progress display."""

    def __init__(self, phases: list[tuple[str, GraphRewriter]], include: list[str], exclude: list[str]):
        super().__init__([r for _, r in phases], name=f"Pipeline(include={include}, exclude={exclude})")
        self.phases = [name for name, _ in phases]
        self.include = include
        self.exclude = exclude

    def apply(self, fgraph: FunctionGraph) -> int:
        times = getattr(fgraph, "rewrite_times", None)
        if times is None:
            times = fgraph.rewrite_times = {}
        changes = 0
        for phase, rewriter in zip(self.phases, self.rewriters):
            progress.step(f"rewriting ({phase})")
            start = time.perf_counter()
            changes += rewriter.apply(fgraph)
            times[phase] = times.get(phase, 0.0) + time.perf_counter() - start
        return changes


rewrites = RewriteDatabase()
rewrites.register(constant_folding, "canonicalize", "fast_run", "fast_compile")


def register(phase: str, *tags: str, name: str | None = None):
    """Decorator form: ``@register('canonicalize', 'fast_run')`` above a rewriter."""
    def wrap(rewriter):
        return rewrites.register(rewriter, phase, *tags, name=name)
    return wrap
