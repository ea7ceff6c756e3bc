"""``theano.compile.optdb``, ``theano.gof.optdb`` and ``theano.tensor.opt``'s ``register_*``:
Theano's optimizer database as a view of arignote's rewrite database.

Theano ordered its optimizers by a number (``position``); arignote runs phases. A
position falls in the phase Theano's own optimizers at that position did
(``PHASE_BY_POSITION``), and Theano's sub-databases are phases by name
(``PHASE_BY_DB``). What is registered here runs in every function compiled
afterwards with a mode whose tags it carries (``'fast_run'``...), as in Theano.
"""
from __future__ import annotations

import math
from typing import Any
from collections.abc import Callable

from arignote.compat.theano.opt import EquilibriumOptimizer, Optimizer, as_rewriter
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.db import Query, rewrites, selects

__all__ = ["Query", "SequenceDB", "EquilibriumDB", "optdb", "register_canonicalize", "register_stabilize",
           "register_specialize", "register_uncanonicalize", "register_specialize_device",
           "PHASE_BY_POSITION", "PHASE_BY_DB"]

# Upper bounds of Theano's positions -> the phase that runs there (canonicalize at 1,
# stabilize at 1.5, specialize at 2, elemwise fusion at 49, in-place rewrites from 75).
PHASE_BY_POSITION = ((1.5, "canonicalize"), (2.0, "stabilize"), (49.0, "specialize"), (49.5, "fusion"),
                     (75.0, "late_fusion"), (math.inf, "inplace"))
PHASE_BY_DB = {"canonicalize": "canonicalize", "stabilize": "stabilize", "specialize": "specialize",
               "uncanonicalize": "specialize", "specialize_device": "specialize",
               "elemwise_fusion": "fusion", "inplace_opt": "inplace"}


def _as_query(tags: tuple) -> Query:
    """A Query, or tags written ``'fast_run'``/``'+fast_run'`` (include) and ``'-inplace'`` (exclude)."""
    if len(tags) == 1 and isinstance(tags[0], Query):
        return tags[0]
    bad = [t for t in tags if not isinstance(t, str)]
    if bad:
        raise TypeError(f"optdb.query takes a Query or tag strings, got {bad[0]!r}")
    return Query([t.lstrip("+") for t in tags if not t.startswith(("-", "&"))],
                 require=[t[1:] for t in tags if t.startswith("&")],
                 exclude=[t[1:] for t in tags if t.startswith("-")])


class _QueriedOptimizer(Optimizer):
    """What a query of the database gives: the pipeline of the optimizers it selected."""

    def __init__(self, query: Query):
        self.query = query
        self.rewriter = rewrites.query(query.include, query.exclude, query.require, query.position_cutoff)

    def apply(self, fgraph: FunctionGraph) -> None:
        self.rewriter.apply(fgraph)

    def __repr__(self) -> str:
        return f"optdb.query({self.query!r})"


def _register(phase: str, name: str, obj: Any, tags: tuple) -> Any:
    if not isinstance(name, str):
        raise TypeError(f"register: the first argument is the optimizer's name (a string), got {name!r}")
    rewrites.register(as_rewriter(obj), phase, *tags, name=name)
    return obj


class _DB:
    def __contains__(self, name: str) -> bool:
        return name in rewrites.entries

    def query(self, *tags: Any) -> _QueriedOptimizer:
        return _QueriedOptimizer(_as_query(tags))

    def remove(self, name: str) -> None:
        """Unregister ``name`` (arignote's addition: Theano's databases could only grow)."""
        rewrites.remove(name)


class _PhaseDB(_DB):
    """One phase of ``optdb`` (Theano's sub-databases ``optdb['canonicalize']`` and the like)."""

    def __init__(self, phase: str):
        self.phase = phase

    def register(self, name: str, obj: Any, *tags: str, **kwargs: Any) -> Any:
        """``kwargs`` (``use_db_name_as_tag``, ``final_opt``, ``cleanup``) are Theano's and accepted."""
        return _register(self.phase, name, obj, tags)

    def __repr__(self) -> str:
        return f"optdb[{self.phase!r}]"


class EquilibriumDB:
    """A database of one's own (Theano's ``gof.EquilibriumDB()``): optimizers registered by
    name and tags; a query gives those it selects, repeated until none changes the graph
    (an optimizer a mode or ``DebugMode`` takes)."""

    def __init__(self, ignore_newtrees: bool = True, tracks_on_change_inputs: bool = False):
        self._entries: dict[str, tuple[Any, frozenset]] = {}

    def register(self, name: str, obj: Any, *tags: str, **kwargs: Any) -> Any:
        if not isinstance(name, str):
            raise TypeError(f"register: the first argument is the optimizer's name (a string), got {name!r}")
        if name in self._entries:
            raise ValueError(f"an optimizer named {name!r} is already registered")
        self._entries[name] = (obj, frozenset(tags) | {name})
        return obj

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def query(self, *tags: Any) -> EquilibriumOptimizer:
        q = _as_query(tags)
        include, exclude, require = frozenset(q.include), frozenset(q.exclude), frozenset(q.require)
        chosen = [obj for obj, found in self._entries.values() if selects(found, include, exclude, require)]
        return EquilibriumOptimizer(chosen, max_use_ratio=8.0)  # Theano's config.optdb.max_use_ratio


class SequenceDB(_DB):
    """The database: ``register(name, optimizer, position, *tags)``; ``db[name]`` is a phase."""

    def register(self, name: str, obj: Any, position: float, *tags: str, **kwargs: Any) -> Any:
        if isinstance(position, str):
            raise TypeError(f"optdb.register({name!r}, ...): the third argument is a position (a number, "
                            f"e.g. 0.5 to run with the canonicalizations), got the tag {position!r}")
        phase = next(phase for bound, phase in PHASE_BY_POSITION if position < bound)
        return _register(phase, name, obj, tags)

    def __getitem__(self, name: str) -> Any:
        if name in PHASE_BY_DB:
            return _PhaseDB(PHASE_BY_DB[name])
        if name in rewrites.entries:
            return rewrites.entries[name].rewriter
        raise KeyError(f"optdb has no {name!r}: its sub-databases are {', '.join(PHASE_BY_DB)}")


optdb = SequenceDB()


def _registrar(db: str) -> Callable:
    def register_in(lopt: Any, *tags: str, **kwargs: Any) -> Any:
        if isinstance(lopt, str):  # @register_canonicalize('name', 'tag', ...)
            return lambda inner: register_in(inner, lopt, *tags, **kwargs)
        name = kwargs.pop("name", None) or getattr(lopt, "__name__", None) or type(lopt).__name__
        optdb[db].register(name, lopt, "fast_run", *tags, **kwargs)
        return lopt
    register_in.__name__ = f"register_{db}"
    register_in.__doc__ = (f"Register a local optimizer in ``optdb[{db!r}]`` with the tag ``'fast_run'`` "
                           "(decorator, or ``register_...('name', *tags)``).")
    return register_in


register_canonicalize = _registrar("canonicalize")
register_stabilize = _registrar("stabilize")
register_specialize = _registrar("specialize")
register_uncanonicalize = _registrar("uncanonicalize")
register_specialize_device = _registrar("specialize_device")
