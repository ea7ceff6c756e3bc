"""Theano's linkers (``gof.link``, ``gof.vm``): objects that turn a FunctionGraph into thunks.

arignote's executor (compile/executor.py) links every ``function``; these classes are the
linker API Theano code reaches for, on top of it:

* standalone, ``PerformLinker().accept(fgraph).make_function()`` (or ``make_thunk()``,
  ``make_all()``) runs the graph's nodes one by one on their storage cells, with values
  in ``Container`` cells a caller fills; ``WrapLinker`` runs several linkers' thunks of
  each node through a user's ``wrapper(i, node, *thunks)`` (to trace, compare, time);
* given to a mode, ``Mode(linker=VM_Linker(callback=cb, schedule=...))``, a linker tells
  ``function`` in what order to run the nodes (``schedule``), whether to free
  intermediate values (``allow_gc``), and the linker's ``callback(node, thunk,
  storage_map, compute_map)`` runs after each node (a lazy node, an ``ifelse``, reports
  twice, as Theano's lazy VM stepped it: when its condition picks the branch, and when
  it has run).

The C-specific linkers (``CLinker``, ``OpWiseCLinker``, ``DualLinker``) are this one
under their names: arignote has one implementation per op, no C code generation.
"""
from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.backends.cpu import make_thunk as backend_thunk
from arignote.compile.sharedvalue import Container as _Cell
from arignote.config import config
from arignote.graph.basic import Apply, Constant, Op, Type, Variable

Thunk = Callable[[], Any]
Instruments = tuple[list[Thunk], dict[int, Thunk], list[Thunk]]

__all__ = ["Container", "Linker", "LocalLinker", "PerformLinker", "WrapLinker", "WrapLinkerMany",
           "VM_Linker", "node_thunk", "map_storage", "gc_helper"]


class Container(_Cell):
    """Theano's ``gof.link.Container``: the cell ``storage`` (a one-element list) of variable
    or type ``r``; setting ``data`` filters the value through the type (None empties it),
    and is refused when ``readonly``."""

    def __init__(self, r: Variable | Type, storage: list, readonly: bool = False, strict: bool = False,
                 allow_downcast: bool | None = None, name: str | None = None):
        if not isinstance(storage, list) or len(storage) < 1:
            raise TypeError(f"Container: storage must be a one-element list, got {storage!r}")
        ttype = r if isinstance(r, Type) else r.type
        super().__init__(storage, ttype, name if name is not None else getattr(r, "name", None),
                         strict, allow_downcast)
        self.readonly = readonly

    @_Cell.value.setter
    def value(self, value: Any) -> None:
        if self.readonly:
            raise ValueError(f"cannot set the read-only container of {self.name or self.type}")
        self.storage[0] = None if value is None else self._filtered(value)

    data = value

    def __repr__(self) -> str:
        return f"<{self.storage[0]!r}>"


def node_thunk(node: Apply, input_cells: list[list], output_cells: list[list]) -> Thunk:
    """The thunk ``function`` runs for ``node``: the op's own Theano-style ``make_thunk`` when
    its class overrides ``Op.make_thunk`` (every input is computed before it runs, so a
    lazy thunk of such an op finishes in one call), else the backend's kernel."""
    op = node.op
    if type(op).make_thunk is Op.make_thunk:
        return backend_thunk(op, node, input_cells, output_cells)
    storage = dict(zip(node.inputs, input_cells)) | dict(zip(node.outputs, output_cells))
    computed = {v: [True] for v in node.inputs} | {v: [False] for v in node.outputs}
    # Theano 1.0 passed ``impl`` (None: the op's choice); ops written before it take no such argument.
    extra = {"impl": None} if "impl" in inspect.signature(op.make_thunk).parameters else {}
    return op.make_thunk(node, storage, computed, [], **extra)


def map_storage(fgraph: Any, order: Sequence[Apply], input_storage: list[list] | None,
                output_storage: list[list] | None, storage_map: dict | None = None) -> tuple:
    """Each variable's cell for running ``order``: the given ones (by position, or from
    ``storage_map``), else fresh; constants hold their value. Returns (input cells, output
    cells, storage_map)."""
    storage = dict(storage_map or {})
    for cells, variables in ((input_storage, fgraph.inputs), (output_storage, fgraph.outputs)):
        if cells is not None:
            if len(cells) != len(variables):
                raise ValueError(f"{len(cells)} storage cells given for {len(variables)} variables")
            storage.update(zip(variables, cells))
    for var in [*fgraph.inputs, *(v for node in order for v in node.inputs + node.outputs), *fgraph.outputs]:
        if var not in storage:
            storage[var] = [var.data] if isinstance(var, Constant) else [None]
    return [storage[v] for v in fgraph.inputs], [storage[v] for v in fgraph.outputs], storage


def gc_helper(order: Sequence[Apply], keep: set) -> list[list[Variable]]:
    """For each node of ``order``, the variables nothing after it reads (outside ``keep``):
    freeing them after that node keeps only what is still needed."""
    last: dict[Variable, int] = {}
    for k, node in enumerate(order):
        for var in node.inputs + node.outputs:
            if var.owner is not None and var not in keep:
                last[var] = k
    dead: list[list[Variable]] = [[] for _ in order]
    for var, k in last.items():
        dead[k].append(var)
    return dead


class Linker:
    """The linker protocol: ``accept(fgraph)`` binds a graph (a linker bound to another
    graph gives a bound copy), ``make_all()`` builds the program, ``make_thunk()`` and
    ``make_function()`` wrap it. ``schedule(fgraph)`` orders the nodes (the graph's
    toposort unless a ``schedule`` function is given); ``allow_gc`` (None: the
    ``allow_gc`` flag) frees intermediate values once nothing needs them."""

    def __init__(self, allow_gc: bool | None = None, schedule: Callable[[Any], list[Apply]] | None = None):
        self.fgraph: Any = None
        self.no_recycling: list = []
        self.allow_gc = allow_gc
        if schedule is not None:
            self.schedule = schedule  # type: ignore[method-assign]

    def schedule(self, fgraph: Any) -> list[Apply]:
        return fgraph.toposort()

    def accept(self, fgraph: Any, no_recycling: Sequence | None = None, profile: Any = None) -> Linker:
        if self.fgraph is not None and self.fgraph is not fgraph:
            return copy.copy(self).accept_fresh(fgraph, no_recycling)
        return self.accept_fresh(fgraph, no_recycling)

    def accept_fresh(self, fgraph: Any, no_recycling: Sequence | None) -> Linker:
        self.fgraph = fgraph
        self.no_recycling = list(no_recycling or [])
        return self

    def make_all(self, input_storage: list[list] | None = None, output_storage: list[list] | None = None,
                 storage_map: dict | None = None) -> tuple:
        raise NotImplementedError(f"{type(self).__name__} has no make_all()")

    def make_thunk(self, input_storage: list[list] | None = None, output_storage: list[list] | None = None,
                   storage_map: dict | None = None) -> tuple[Thunk, list[Container], list[Container]]:
        """(a thunk running the whole graph, the inputs' containers, the outputs' containers)."""
        return self.make_all(input_storage, output_storage, storage_map)[:3]

    def make_function(self, unpack_single: bool = True, **kwargs: Any) -> Callable[..., Any]:
        """A function of the graph's inputs returning its outputs' values (the one value
        itself when there is one output and ``unpack_single``)."""
        thunk, inputs, outputs = self.make_thunk(**kwargs)

        def execute(*args: Any) -> Any:
            if len(args) != len(inputs):
                raise TypeError(f"the function takes {len(inputs)} arguments ({len(args)} given)")
            for container, arg in zip(inputs, args):
                container.data = arg
            thunk()
            values = [c.data for c in outputs]
            return values[0] if unpack_single and len(values) == 1 else values
        execute.thunk, execute.inputs, execute.outputs = thunk, inputs, outputs  # type: ignore[attr-defined]
        return execute

    def _bound(self) -> Any:
        if self.fgraph is None:
            raise TypeError(f"{type(self).__name__}: making its program before accept(fgraph): give the "
                            "linker its graph first")
        return self.fgraph

    # What function() asks of the linker of its mode (compile/executor.py).
    lazy: bool | None = None

    def instrument(self, fn: Any, nodes: list[Apply], thunks: list[Thunk]) -> Instruments:
        """What Function ``fn`` runs for ``nodes``: the thunks (these, or wrappers of them),
        thunk index of a lazy node -> what to run when its condition has picked the
        branch, and what to run at the start of each call, once the inputs are in."""
        return thunks, {}, []


class LocalLinker(Linker):
    """Runs each node's own thunk (``op.make_thunk``) in order, in Python."""

    def make_all(self, input_storage: list[list] | None = None, output_storage: list[list] | None = None,
                 storage_map: dict | None = None) -> tuple:
        """(thunk, input containers, output containers, per-node thunks, node order)."""
        fgraph = self._bound()
        order = list(self.schedule(fgraph))
        in_cells, out_cells, storage = map_storage(fgraph, order, input_storage, output_storage, storage_map)
        given = set(fgraph.inputs)
        compute_map = {v: [v.owner is None or v in given] for v in storage}
        thunks = [node.op.make_thunk(node, storage, compute_map, self.no_recycling) for node in order]
        allow_gc = config.allow_gc if self.allow_gc is None else self.allow_gc
        dead = gc_helper(order, set(fgraph.outputs)) if allow_gc else [[] for _ in order]
        dead_cells = [[storage[v] for v in vs] for vs in dead]
        fresh = [storage[v] for v in self.no_recycling if v in storage]

        def run() -> None:
            for cell in fresh:
                cell[0] = None
            with np.errstate(all="ignore"):  # inf and nan silently, as in a call (fperrors.py)
                for thunk, cells in zip(thunks, dead_cells):
                    thunk()
                    for cell in cells:
                        cell[0] = None
        run.storage_map = storage  # type: ignore[attr-defined]
        inputs = [Container(v, c) for v, c in zip(fgraph.inputs, in_cells)]
        outputs = [Container(v, c, readonly=True) for v, c in zip(fgraph.outputs, out_cells)]
        return run, inputs, outputs, thunks, order


class PerformLinker(LocalLinker):
    """Theano's Python linker: every node runs its op's thunk (its ``perform``, or the CPU
    kernel arignote has for it)."""


class WrapLinker(Linker):
    """Several linkers' programs of one graph run side by side: for each node ``i`` in
    order, ``wrapper(i, node, *thunks)`` gets that node's thunk from every linker and
    decides what to run (all of them and compare, only one, one timed...). The inputs
    are the first linker's containers, copied to the others' before each run."""

    def __init__(self, linkers: Sequence[Linker], wrapper: Callable[..., Any]):
        super().__init__()
        if not linkers:
            raise ValueError("WrapLinker needs at least one linker")
        self.linkers, self.wrapper = list(linkers), wrapper

    def __copy__(self) -> WrapLinker:
        return type(self)([copy.copy(linker) for linker in self.linkers], self.wrapper)

    def accept_fresh(self, fgraph: Any, no_recycling: Sequence | None) -> WrapLinker:
        super().accept_fresh(fgraph, no_recycling)
        self.linkers = [linker.accept(fgraph, no_recycling) for linker in self.linkers]
        return self

    def make_all(self, input_storage: list[list] | None = None, output_storage: list[list] | None = None,
                 storage_map: dict | None = None) -> tuple:
        self._bound()
        programs = [self.linkers[0].make_all(input_storage, output_storage)]
        programs += [linker.make_all() for linker in self.linkers[1:]]
        inputs0, outputs0 = programs[0][1], programs[0][2]
        orders = [p[4] for p in programs]
        if any(len(o) != len(orders[0]) for o in orders):
            raise ValueError("WrapLinker: its linkers schedule different numbers of nodes")
        per_node = list(zip(*[p[3] for p in programs]))
        wrapper = self.wrapper
        fresh = [cell for p in programs for cell in (p[0].storage_map[v] for v in self.no_recycling)]

        def run() -> None:
            for _, inputs, *_ in programs[1:]:
                for mine, theirs in zip(inputs0, inputs):
                    theirs.storage[0] = copy.copy(mine.storage[0])
            for cell in fresh:
                cell[0] = None
            with np.errstate(all="ignore"):
                for i, (node, thunks) in enumerate(zip(orders[0], per_node)):
                    wrapper(i, node, *thunks)
        return run, inputs0, outputs0, list(per_node), orders[0]


def WrapLinkerMany(linkers: Sequence[Linker], wrappers: Sequence[Callable[..., Any]]) -> WrapLinker:
    """A WrapLinker whose wrapper calls each of ``wrappers`` in turn with the same arguments."""
    wrappers = list(wrappers)

    def wrapper(*args: Any) -> None:
        for each in wrappers:
            each(*args)
    return WrapLinker(linkers, wrapper)


class VM_Linker(LocalLinker):
    """Theano's virtual-machine linker, as options of arignote's executor: ``callback``
    (run after each node, as ``callback(node, thunk, storage_map, compute_map)``),
    ``callback_input`` (run as ``callback_input(variable, cell)`` on each input at the
    start of a call), ``schedule``, ``allow_gc``, ``lazy`` (False: every node runs, both
    sides of an ``ifelse`` too; otherwise only the branch taken). ``use_cloop``,
    ``c_thunks`` and ``allow_partial_eval`` are Theano's choices between its C and Python
    loops: accepted, with nothing to choose here (``output_subset`` works with every linker)."""

    def __init__(self, allow_gc: bool | None = None, use_cloop: bool = False,
                 callback: Callable[..., Any] | None = None, callback_input: Callable[..., Any] | None = None,
                 lazy: bool | None = None, schedule: Callable[[Any], list[Apply]] | None = None,
                 c_thunks: bool | None = None, allow_partial_eval: bool | None = None):
        super().__init__(allow_gc, schedule)
        self.use_cloop, self.c_thunks, self.allow_partial_eval = use_cloop, c_thunks, allow_partial_eval
        self.callback, self.callback_input, self.lazy = callback, callback_input, lazy

    def instrument(self, fn: Any, nodes: list[Apply], thunks: list[Thunk]) -> Instruments:
        callback, callback_input = self.callback, self.callback_input
        if callback is None and callback_input is None:
            return thunks, {}, []
        storage = fn.storage_map
        inputs = fn.maker.fgraph.inputs
        computed = {v: [False] for v in storage}
        given = [cell for v, cell in computed.items() if v.owner is None]  # function()'s inputs are ownerless
        pending = [cell for v, cell in computed.items() if v.owner is not None]

        def restart() -> None:
            for cell in given:
                cell[0] = True
            for cell in pending:
                cell[0] = False
        starts: list[Thunk] = [restart]
        if callback_input is not None:
            cells = [(v, storage[v]) for v in inputs]

            def read_inputs() -> None:
                for var, cell in cells:
                    callback_input(var, cell)
            starts.append(read_inputs)
        if callback is None:
            return thunks, {}, starts
        wrapped = [_reporting(node, thunk, callback, storage, computed) for node, thunk in zip(nodes, thunks)]
        decisions = {} if self.lazy is False else {
            k: functools.partial(callback, node, thunks[k], storage, computed)
            for k, node in enumerate(nodes) if hasattr(node.op, "branch_inputs")}
        return wrapped, decisions, starts


def _reporting(node: Apply, thunk: Thunk, callback: Callable[..., Any], storage: dict, computed: dict) -> Thunk:
    done = [computed[v] for v in node.outputs]

    def reported() -> None:
        thunk()
        for cell in done:
            cell[0] = True
        callback(node, thunk, storage, computed)
    reported.inner = thunk  # type: ignore[attr-defined]
    return reported
