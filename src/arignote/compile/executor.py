"""The compiled Function: storage cells and a flat list of thunks, linked once.

A call fills the input cells, runs the thunks in order (the nodes that only one
branch of an ``ifelse`` needs run only when it is taken: compile/lazy.py) and
hands back the outputs; no graph work happens per call. Which outputs must be copied, which
buffers are handed to the caller, and which update values need a copy are all
decided at link time from the ops' ``view_map`` and ``destroy_map``.

Threads: the cells belong to the Function, so a call holds the Function's turn
(``_turns``, a queue holding one token: a lock that costs less per call than
``threading.Lock``); a Function that updates shared variables also holds their
storages' locks (``_state_locks``, in rank order) from before it reads them
until its updates are written. Shared values are read once per call into the
Function's own cells, so a call computes from one state even while other
threads update it.
"""
from __future__ import annotations

import queue
from typing import TYPE_CHECKING, Any

import numpy as np

from arignote.backends.cpu import make_thunk
from arignote.compile import lazy
from arignote.compile.callgen import generate_call
from arignote.compile.io import In
from arignote.compile.sharedvalue import SharedVariable, Storage
from arignote.config import config
from arignote.graph.basic import Constant, Variable

if TYPE_CHECKING:
    from arignote.compile.function import FunctionMaker


class Function:
    """A compiled function. Call it with inputs by position or by name.

    ``storage_map`` maps each variable of ``maker.fgraph`` to its storage cell
    (a one-element list); it is what the thunks read and write.
    """

    def __init__(self, maker: FunctionMaker, swap: dict | None = None):
        self.maker = maker
        self.name = maker.name
        self.trust_input = False
        fgraph = maker.fgraph
        n_explicit = len(maker.inputs)
        swap = swap or {}

        # Storage: one cell per variable; a shared input's cell is filled from the
        # variable's storage at the start of each call and emptied at its end.
        # Inputs given a value= keep it in a separate cell (``_stored``): the
        # input cell holds only the value of the current call.
        storage: dict[Variable, list] = {}
        self._input_cells: list[list] = []
        self._stored: list[list | None] = []
        for position, (spec, var) in enumerate(zip(maker.inputs, fgraph.inputs[:n_explicit])):
            storage[var] = cell = [None]
            self._input_cells.append(cell)
            self._stored.append(None if spec.value is None else [_own(
                var.type.filter(spec.value, name=_input_name(spec, position)), spec.value)])
        self._shared_cells: list[tuple[list, Storage]] = []
        for shared, var in zip(maker.shared_inputs, fgraph.inputs[n_explicit:]):
            storage[var] = cell = [None]
            self._shared_cells.append((cell, swap.get(shared.origin, shared).storage))
        nodes = fgraph.toposort()
        for node in nodes:
            for var in node.inputs:
                if var not in storage:
                    storage[var] = [var.data] if isinstance(var, Constant) else [None]
            for var in node.outputs:
                storage[var] = [None]
        for var in fgraph.outputs:
            if var not in storage:
                storage[var] = [var.data] if isinstance(var, Constant) else [None]
        self.storage_map = storage
        self._nodes = nodes
        self._schedule = lazy.schedule(nodes, fgraph.outputs)
        self._thunks = [make_thunk(node.op, node, [storage[v] for v in node.inputs],
                                   [storage[v] for v in node.outputs]) for node in nodes]
        roots_of = _alias_roots()
        self._link_inputs(fgraph, n_explicit, roots_of)
        self._link_outputs(fgraph, n_explicit, swap, roots_of)
        self._turns: queue.SimpleQueue = queue.SimpleQueue()
        self._turns.put(True)
        updated = {t.rank: t for t in self._update_targets if isinstance(t, Storage)}
        self._state_locks = [updated[rank].lock for rank in sorted(updated)]
        self._call = generate_call(self)

    # --------------------------------------------------------------- linking
    def _link_inputs(self, fgraph: Any, n_explicit: int, roots_of: Any) -> None:
        maker = self.maker
        downcast = maker.allow_input_downcast
        self._specs = []
        for position, (spec, var) in enumerate(zip(maker.inputs, fgraph.inputs[:n_explicit])):
            t = var.type
            self._specs.append((t, getattr(t, "numpy_dtype", None), getattr(t, "ndim", None),
                                not any(getattr(t, "broadcastable", ())), spec.strict,
                                spec.allow_downcast if spec.allow_downcast is not None else downcast,
                                _input_name(spec, position)))
        # A name two inputs share cannot be used as a keyword: it maps to None.
        self._names: dict[str, int | None] = {}
        for i, spec in enumerate(maker.inputs):
            if spec.name:
                self._names[spec.name] = None if spec.name in self._names else i
        # An op that overwrites an input, or a view of one, would change the
        # caller's array: such inputs are copied first unless In(mutable=True).
        destroyed = frozenset().union(*[roots_of(node.inputs[i]) for node in self._nodes
                                        for idxs in node.op.destroy_map.values() for i in idxs])
        self._copy_inputs = [i for i, (spec, var) in enumerate(zip(maker.inputs, fgraph.inputs))
                             if var in destroyed and not spec.mutable]

    def _link_outputs(self, fgraph: Any, n_explicit: int, swap: dict, roots_of: Any) -> None:
        maker = self.maker
        storage = self.storage_map
        n_out = len(maker.outputs)
        input_specs = dict(zip(fgraph.inputs[:n_explicit], maker.inputs))
        internal = {v for node in self._nodes for v in node.outputs}

        # Updates first: each internal buffer an update takes is handed over, not copied.
        claimed: set[Variable] = set()
        self._update_cells: list[list] = []
        self._update_targets: list[list] = []
        self._copy_updates: list[int] = []
        for j, (target, _) in enumerate(maker.updates):
            var = fgraph.outputs[n_out + j]
            roots = roots_of(var)
            if roots <= internal and not roots & claimed:
                claimed |= roots
            else:
                self._copy_updates.append(j)
            self._update_cells.append(storage[var])
            if isinstance(target, In):
                self._update_targets.append(self._stored[maker.inputs.index(target)])
            else:
                self._update_targets.append(swap.get(target.origin, target).storage)

        # Outputs: a copy unless the memory can be handed to the caller as it is.
        self._output_cells = [storage[v] for v in fgraph.outputs[:n_out]]
        self._copy_outputs: list[int] = []
        released: set[Variable] = set(claimed)
        handed_out: list[tuple[frozenset, bool]] = []
        for k, (spec, var) in enumerate(zip(maker.outputs, fgraph.outputs[:n_out])):
            roots = roots_of(var)
            if (roots & claimed
                    or any(roots & other and not (borrow and spec.borrow)
                           for other, borrow in handed_out)
                    or any(_must_copy(r, spec.borrow, input_specs) for r in roots - internal)):
                self._copy_outputs.append(k)
                continue
            handed_out.append((roots, spec.borrow))
            if not spec.borrow:
                released |= roots & internal
        # A released buffer is the caller's (or a shared variable's) now: no cell
        # may keep it, views included, or the next call would write into it.
        release = {v for v in internal if roots_of(v) & released}
        if config.allow_gc:
            release |= internal - set(fgraph.outputs)
        self._release_cells = [storage[v] for v in release]

    # ------------------------------------------------------------------ call
    @property
    def __call__(self) -> Any:
        """Calling a Function runs its generated call path directly (no extra frame)."""
        return self._call

    def _fail(self, err: BaseException, index: int) -> None:
        """Annotate an exception raised by thunk ``index``, then forget this call's arrays."""
        _describe_failure(err, self._nodes[index], self.storage_map)
        self._clear()

    def _clear(self) -> None:
        """Forget the caller's arrays, the shared values read and the buffers handed out."""
        for cell in self._release_cells:
            cell[0] = None
        for cell in self._input_cells:
            cell[0] = None
        for cell, _ in self._shared_cells:
            cell[0] = None

    def _merge_keywords(self, args: tuple, kwargs: dict) -> list:
        n = len(self._input_cells)
        if len(args) > n:
            names = ", ".join(self._specs[i][6] for i in range(n)) or "none"
            raise TypeError(f"{self._label()} takes at most {n} argument{'s' * (n != 1)} "
                            f"(inputs: {names}), got {len(args)}")
        values: list[Any] = list(args) + [_MISSING] * (n - len(args))
        for key, value in kwargs.items():
            if key not in self._names:
                known = ", ".join(repr(k) for k in self._names) or "none have names"
                raise TypeError(f"{self._label()} got an unexpected keyword argument {key!r}; "
                                f"its named inputs are: {known}")
            i = self._names[key]
            if i is None:
                raise TypeError(f"{self._label()} has several inputs named {key!r}: pass them by "
                                "position, or give them distinct names with In(var, name=...)")
            if values[i] is not _MISSING:
                raise TypeError(f"{self._label()} got input {key!r} both by position and by name")
            values[i] = value
        for i, value in enumerate(values):
            if value is _MISSING:
                if self._stored[i] is None:
                    self._missing(i)
                values[i] = self._stored[i][0]
        return values

    def _missing(self, i: int) -> None:
        t = self._specs[i][0]
        raise TypeError(f"{self._label()} is missing {self._specs[i][6]} "
                        f"({getattr(t, 'describe', lambda: str(t))()}): pass it by position or by name")

    def _label(self) -> str:
        return f"function {self.name!r}" if self.name else "the function"

    # ------------------------------------------------------------ utilities
    def __getitem__(self, name: str) -> Any:
        """The stored value of input ``name`` (an ``In`` with ``value=``)."""
        return self._stored[self._default_index(name)][0]

    def __setitem__(self, name: str, value: Any) -> None:
        i = self._default_index(name)
        ttype, _, _, _, strict, downcast, label = self._specs[i]
        self._stored[i][0] = _own(ttype.filter(value, strict=strict, allow_downcast=downcast,
                                               name=label), value)

    def _default_index(self, name: str) -> int:
        i = self._names.get(name)
        if i is None or self._stored[i] is None:
            raise KeyError(f"{self._label()} has no input named {name!r} with a stored value")
        return i

    def copy(self, share_memory: bool = False, swap: dict | None = None,
             delete_updates: bool = False, name: str | None = None) -> Function:
        """A new Function for the same graph; ``swap`` maps shared variables to others of
        the same type, ``delete_updates`` drops every update (default ones too)."""
        from arignote.compile.function import FunctionMaker
        request = dict(self.maker.request)
        if delete_updates:
            request.update(updates=None, no_default_updates=True,
                           inputs=[_without_update(spec) for spec in request["inputs"]])
        if name is not None:
            request["name"] = name
        maker = FunctionMaker(**request)
        swap_map = {}
        for old, new in (swap or {}).items():
            if not isinstance(old, SharedVariable) or not isinstance(new, SharedVariable):
                raise TypeError("copy(swap=) maps shared variables to shared variables")
            if old.type != new.type:
                raise TypeError(f"copy(swap=): {old.describe()} is {old.type} but its replacement "
                                f"{new.describe()} is {new.type}")
            if all(s.origin is not old.origin for s in maker.shared_inputs):
                raise ValueError(f"copy(swap=): {old.describe()} is not used by this function")
            swap_map[old.origin] = new
        fn = Function(maker, swap_map)
        fn.trust_input = self.trust_input
        for mine, theirs in zip(self._stored, fn._stored):
            if mine is not None:
                theirs[0] = mine[0] if share_memory else mine[0].copy()
        return fn

    def free(self) -> None:
        """Drop the intermediate buffers kept for reuse between calls."""
        for node in self._nodes:
            for var in node.outputs:
                self.storage_map[var][0] = None

    def __repr__(self) -> str:
        return f"<arignote Function {self.name or ''} with {len(self._nodes)} nodes>"


_MISSING = object()


def _own(value: Any, given: Any) -> Any:
    """``value`` (a filtered ``given``), copied if it is still the caller's memory."""
    if isinstance(given, np.ndarray) and np.may_share_memory(value, given):
        return value.copy()
    return value


def _must_copy(root: Variable, borrow: bool, input_specs: dict) -> bool:
    """Whether an output whose memory is that of graph input ``root`` must be copied.

    Constants are never handed out; an explicit input only under In(borrow=True);
    a shared variable's buffer only under Out(borrow=True).
    """
    if isinstance(root, Constant):
        return True
    if root in input_specs:
        return not input_specs[root].borrow
    return not borrow


def _without_update(spec: In) -> In:
    if spec.update is None:
        return spec
    return In(spec.variable, name=spec.name, value=spec.value, mutable=spec.mutable,
              borrow=spec.borrow, strict=spec.strict, allow_downcast=spec.allow_downcast)


def _input_name(spec: In, position: int) -> str:
    if spec.name:
        return f"input {spec.name!r}"
    return f"input {position} ({spec.variable.describe()})"


def _alias_roots() -> Any:
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


def _describe_failure(err: BaseException, node: Any, storage: dict) -> None:
    shapes = [getattr(storage[v][0], "shape", None) for v in node.inputs]
    dtypes = [getattr(storage[v][0], "dtype", None) for v in node.inputs]
    lines = [f"while running node {node}", f"  input shapes: {shapes}",
             f"  input dtypes: {[str(d) for d in dtypes]}"]
    trace = getattr(node.outputs[0].tag, "trace", None)
    if trace:
        lines.append(f"  the node was built at {trace}")
    if config.exception_verbosity == "high":
        from arignote.printing import debugprint
        lines.append("  the graph of its inputs (exception_verbosity=high):")
        lines.extend("    " + line for line in debugprint(node.inputs, file="str", print_type=True).splitlines())
    if hasattr(err, "add_note"):
        err.add_note("\n".join(lines))
