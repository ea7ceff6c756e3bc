"""The compiled Function: storage cells and a flat list of thunks, linked once.

A call fills the input cells, runs the thunks in order (the nodes that only one
branch of an ``ifelse`` needs run only when it is taken: compile/lazy.py) and
hands back the outputs; no graph work happens per call. Outputs and updates that must be
copied already end in a copy node (compile/output_copies.py); which inputs an in-place op
would overwrite (and so are copied first), and which buffers are handed to the caller or
released, are decided at link time from the ops' ``view_map`` and ``destroy_map``.

Threads: the cells belong to the Function, so a call holds the Function's turn
(``_turn``, a lock that costs about 45 ns when uncontended: compile/turn.py); a Function that updates shared variables also holds their
storages' locks (``_state_locks``, in rank order) from before it reads them
until its updates are written. Shared values are read once per call into the
Function's own cells, so a call computes from one state even while other
threads update it.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from arignote.backends.linking import link_batch
from arignote.compile import lazy
from arignote.compile.aliasing import alias_roots, overwritten_roots
from arignote.compile.callgen import filter_for, generate_call
from arignote.compile.io import In, is_container
from arignote.compile.lifetimes import free_points
from arignote.compile.linkers import Linker, node_thunk
from arignote.compile.profiling import ProfileStats
from arignote.compile.sharedvalue import SharedVariable, Storage, check_picklable
from arignote.compile.state import InputState
from arignote.compile.turn import Turn
from arignote.config import config
from arignote.graph.basic import Constant, Variable
from arignote.graph.history import history_of

if TYPE_CHECKING:
    from arignote.compile.function import FunctionMaker


class Function(InputState):
    """A compiled function. Call it with inputs by position or by name.

    ``storage_map`` maps each variable of ``maker.fgraph`` to its storage cell
    (a one-element list); it is what the thunks read and write.
    """

    def __init__(self, maker: FunctionMaker, swap: dict | None = None, stored: list | None = None):
        self.maker = maker
        self.name = maker.name
        self.trust_input = False
        fgraph = maker.fgraph
        n_explicit = len(maker.inputs)
        swap = self._swap = dict(swap or {})  # origin of a shared variable -> the one used instead

        # Storage: one cell per variable; a shared input's cell is filled from the
        # variable's storage at the start of each call and emptied at its end.
        # Inputs given a value= or an update keep the value in a separate cell
        # (``_stored``; another function's container when value= is one): the
        # input cell holds only the value of the current call.
        storage: dict[Variable, list] = {}
        self._input_cells: list[list] = []
        self._stored: list[list | None] = []
        for position, (spec, var) in enumerate(zip(maker.inputs, fgraph.inputs[:n_explicit])):
            storage[var] = cell = [None]
            self._input_cells.append(cell)
            given = stored[position] if stored is not None else None
            self._stored.append(given if given is not None else _stored_cell(spec, var, position))
        self._shared_cells: list[tuple[list, Storage]] = []
        for shared, var in zip(maker.shared_inputs, fgraph.inputs[n_explicit:]):
            storage[var] = cell = [None]
            self._shared_cells.append((cell, swap.get(shared.origin, shared).storage))
        linker = maker.mode.linker if isinstance(maker.mode.linker, Linker) else None
        nodes = list(linker.schedule(fgraph)) if linker is not None else fgraph.toposort()
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
        lazily = linker is None or linker.lazy is not False
        self._schedule = lazy.schedule(nodes, fgraph.outputs) if lazily else list(range(len(nodes)))
        self._allow_gc = config.allow_gc if linker is None or linker.allow_gc is None else linker.allow_gc
        self._turn = Turn()
        with link_batch(self) as checks:  # each backend builds this function's kernels together
            thunks = [node_thunk(node, [storage[v] for v in node.inputs], [storage[v] for v in node.outputs])
                      for node in nodes]
            # A linker object of the mode may watch the nodes (VM_Linker's callbacks).
            thunks, self._branch_hooks, self._start_hooks = (
                linker.instrument(self, nodes, thunks) if linker is not None else (thunks, {}, []))
            self._thunks = maker.mode.wrap_thunks(self, nodes, thunks)
        position = {node: k for k, node in enumerate(nodes)}
        self._call_checks = [(position[node], check) for node, check, _ in checks]
        self._discards = [discard for _, _, discard in checks]
        roots_of = alias_roots()
        self._link_inputs(fgraph, n_explicit, roots_of)
        self._link_outputs(fgraph, n_explicit, swap, roots_of)
        updated = {t.rank: t for t in self._update_targets if isinstance(t, Storage)}
        self._state_locks = [updated[rank].lock for rank in sorted(updated)]
        self.profile = maker.profile
        self._profile_record = None if self.profile is None else self.profile.record(self)
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
        # Implicit inputs (In(implicit=True)) take no argument: positions and names
        # count the others. A name two inputs share cannot be a keyword (None).
        self._visible = [i for i, spec in enumerate(maker.inputs) if not spec.implicit]
        self._names: dict[str, int | None] = {}
        for i in self._visible:
            name = maker.inputs[i].name
            if name:
                self._names[name] = None if name in self._names else i
        # An op that overwrites an input, or a view of one, would change the caller's
        # array: such inputs are copied first unless mutable (In(mutable=True), or
        # overwritten by the user's own in-place op: FunctionMaker marks those). A shared
        # value is always copied: it changes only when the whole call has succeeded.
        destroyed = overwritten_roots(self._nodes, roots_of)
        self._copy_inputs = [i for i, (spec, var) in enumerate(zip(maker.inputs, fgraph.inputs))
                             if var in destroyed and not spec.mutable]
        self._copy_shared = [k for k, var in enumerate(fgraph.inputs[n_explicit:]) if var in destroyed]
        # With In(mutable=True) or In(borrow=True), two arguments (or an argument and a shared
        # value) that share memory are separated at call time: all but the first are copied.
        self._check_for_aliased_inputs = any(spec.mutable or spec.borrow for spec in maker.inputs)

    def _link_outputs(self, fgraph: Any, n_explicit: int, swap: dict, roots_of: Any) -> None:
        maker = self.maker
        storage = self.storage_map
        n_out = len(maker.outputs)
        internal = {v for node in self._nodes for v in node.outputs}

        # The graph's copy nodes (compile/output_copies.py) left each update a buffer of its
        # own to hand over: one the call computed, or the old value of a shared variable
        # updated too (A, B = B, A).
        updated = {t.origin for t, _ in maker.updates if isinstance(t, SharedVariable)}
        claimed: set[Variable] = set()
        self._update_cells: list[list] = []
        self._update_targets: list[list] = []
        for j, (target, _) in enumerate(maker.updates):
            var = fgraph.outputs[n_out + j]
            claimed |= roots_of(var)
            self._update_cells.append(storage[var])
            if isinstance(target, In):
                self._update_targets.append(self._stored[maker.inputs.index(target)])
            else:
                self._update_targets.append(swap.get(target.origin, target).storage)
        # A shared value overwritten by an in-place op of the user's graph (on the call's
        # copy) becomes the variable's value as an update would, once the call has succeeded.
        for k in self._copy_shared:
            shared, var = maker.shared_inputs[k], fgraph.inputs[n_explicit + k]
            if shared.origin not in updated:
                claimed.add(var)
                self._update_cells.append(storage[var])
                self._update_targets.append(swap.get(shared.origin, shared).storage)

        # Outputs are handed over as they are: the copy nodes separated them from every
        # memory the caller may not hold. A buffer handed out (not borrowed) is the caller's.
        self._output_cells = [storage[v] for v in fgraph.outputs[:n_out]]
        released: set[Variable] = set(claimed)
        for spec, var in zip(maker.outputs, fgraph.outputs[:n_out]):
            if not spec.borrow:
                released |= roots_of(var) & internal
        # A released buffer is the caller's (or a shared variable's) now: no cell
        # may keep it, views included, or the next call would write into it.
        release = {v for v in internal if roots_of(v) & released}
        # Updates without allocation: an update computed into a buffer of its own gets
        # the target's previous buffer back as its node's output buffer for the next
        # call, swapped in with the commit (so a failing call still changes nothing).
        self._spare_updates = [] if self._allow_gc else [
            j for j in range(len(maker.updates))
            if roots_of(fgraph.outputs[n_out + j]) == {fgraph.outputs[n_out + j]} and hasattr(fgraph.outputs[n_out + j].type, "ndim")]
        release -= {fgraph.outputs[n_out + j] for j in self._spare_updates}
        if self._spare_updates:  # views of shared storage would pin old buffers: recompute them
            shared_roots = set(fgraph.inputs[n_explicit:])
            release |= {v for v in internal if roots_of(v) & shared_roots}
        if self._allow_gc:
            release |= internal - set(fgraph.outputs)
        # Without gc the outputs handed out stay in their cells until the next call starts
        # (Theano's allow_gc=False: f.fn.storage_map shows the last call's values).
        kept = set() if self._allow_gc else (release & set(fgraph.outputs[:n_out])) - claimed
        self._release_cells = [storage[v] for v in release - kept]
        self._release_at_start = [storage[v] for v in kept]
        # With gc an intermediate is freed right after its last reader (compile/lifetimes.py).
        self._free_after = {k: [storage[v] for v in found] for k, found in free_points(
            self._nodes, self._schedule, set(fgraph.outputs)).items()} if self._allow_gc else {}

    # ------------------------------------------------------------------ call
    @property
    def __call__(self) -> Any:
        """Calling a Function runs its generated call path directly (no extra frame)."""
        return self._call

    def _call_subset(self, args: tuple, kwargs: dict) -> Any:
        """A call with Theano's ``output_subset=`` (output positions, or keys of a dict of
        outputs): only those outputs come back, as a list (a dict for keys); the updates
        happen as in any call. Every output is still computed."""
        kwargs = dict(kwargs)
        subset = list(kwargs.pop("output_subset"))
        keys = self.maker.output_keys
        named = keys is not None and not isinstance(keys, int)
        known = list(keys) if named else list(range(len(self._output_cells)))
        for key in subset:
            if key not in known:
                raise ValueError(f"output_subset: {self._label()} has no output {key!r} "
                                 f"(its outputs are {', '.join(map(repr, known))})")
        result = self._call(*args, **kwargs)
        if named:
            return {key: result[key] for key in subset}
        values = [result] if keys is None else result
        return [values[k] for k in subset]

    def _between_calls(self, change: Callable[[], None]) -> None:
        """Run ``change`` (native kernels swapped in) while no call runs: now if none does,
        else first thing in the next call, under its turn; never in the middle of a call."""
        turn = self._turn
        try:
            turn.token.pop()
        except IndexError:  # a call runs: the next one makes the change before it starts
            call = self._call

            def changing_call(*args: Any, **kwargs: Any) -> Any:
                with turn.held():
                    change()
                    if self._call is changing_call:
                        self._call = call
                return call(*args, **kwargs)
            self._call = changing_call
            return
        try:
            change()
        finally:
            turn.token.append(True)
            if turn.waiting[0]:
                turn.wake()

    @property
    def native_status(self) -> str:
        """Where this function's native CPU kernels stand: ``"native"`` (in place),
        ``"not needed yet"`` (no call has had an array of ``config.native_min_size``
        elements), ``"building"`` (the compiler runs in the background and numpy's kernels
        run meanwhile), ``"built"`` (in place from the next call), ``"failed: ..."`` or
        ``"off: ..."`` (numpy's kernels run, and why), or ``"none"`` (no node has one)."""
        from arignote.backends.cpu import native
        return native.status(self)

    def wait_native(self, timeout: float | None = None) -> str:
        """Build this function's native kernels now if no call has needed them yet, wait
        for the build (at most ``timeout`` seconds) and put them in place; returns
        :attr:`native_status`. Tests and benchmarks use it to run the native path for sure."""
        from arignote.backends.cpu import native
        return native.wait(self, timeout)

    def _fail(self, err: BaseException, index: int) -> None:
        """Annotate an exception raised by thunk ``index`` (or by a call check, which may name
        the node it found at fault as ``err.failed_node``), then forget this call's arrays."""
        if not getattr(err, "names_its_node", False):  # DebugMode's errors say more themselves
            node = getattr(err, "failed_node", None) or self._nodes[index]
            _describe_failure(err, node, self.storage_map, history_of(self.maker.fgraph))
        for discard in self._discards:
            discard()
        self._clear()

    def _clear(self) -> None:
        """Forget the caller's arrays, the shared values read and the buffers handed out."""
        for cell in self._release_cells + self._release_at_start:
            cell[0] = None
        for cell in self._input_cells:
            cell[0] = None
        for cell, _ in self._shared_cells:
            cell[0] = None

    def _merge_keywords(self, args: tuple, kwargs: dict) -> list:
        n = len(self._visible)
        if len(args) > n:
            names = ", ".join(self._specs[i][6] for i in self._visible) or "none"
            raise TypeError(f"{self._label()} takes at most {n} argument{'s' * (n != 1)} "
                            f"(inputs: {names}), got {len(args)}")
        values: list[Any] = [_MISSING] * len(self._input_cells)
        for i, value in zip(self._visible, args):
            values[i] = value
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
                if self._stored[i] is None or self._stored[i][0] is None:
                    self._missing(i)
                values[i] = self._stored[i][0]
        return values

    def _unalias(self, args: tuple) -> tuple:
        """``args`` where none shares memory with an earlier one or with a shared value read
        by this call (Theano's check for functions with mutable or borrowed inputs)."""
        seen = [source[0] for _, source in self._shared_cells if isinstance(source[0], np.ndarray)]
        result = []
        for value in args:
            if isinstance(value, np.ndarray):
                if any(np.may_share_memory(value, other) for other in seen):
                    value = value.copy()
                seen.append(value)
            result.append(value)
        return tuple(result)

    def _missing(self, i: int) -> None:
        t = self._specs[i][0]
        raise TypeError(f"{self._label()} is missing {self._specs[i][6]} "
                        f"({getattr(t, 'describe', lambda: str(t))()}): pass it by position or by name")

    def _label(self) -> str:
        return f"function {self.name!r}" if self.name else "the function"

    # ------------------------------------------------------------ utilities
    def __getitem__(self, key: Any) -> Any:
        """The stored value of an input (by name, variable, position or ``In``; see state.py)."""
        return self._stored[self._default_index(key)][0]

    def __setitem__(self, key: Any, value: Any) -> None:
        i = self._default_index(key)
        ttype, _, _, _, strict, downcast, label = self._specs[i]
        value = _own(filter_for(ttype, label, strict=strict, allow_downcast=downcast)(value), value)
        with self._turn.held():  # not overwritten by the update of a call running now
            self._stored[i][0] = value

    def _default_index(self, key: Any) -> int:
        i = self._index(key)
        if self._stored[i] is None:
            raise KeyError(f"{self._label()} has no stored value for input {key!r}: give it one "
                           "with In(var, value=...)")
        return i

    def copy(self, share_memory: bool = False, swap: dict | None = None,
             delete_updates: bool = False, name: str | None = None) -> Function:
        """A new Function for the same graph, Theano's ``copy``: it uses the same shared
        variables unless ``swap`` maps some to others of the same type; stored ``In``
        values of mutable inputs are copied unless ``share_memory`` (Theano's rule: an
        immutable value is shared); ``delete_updates`` drops every update (default ones
        too; inputs that only fed updates stay, unused); the name is ``name``, else this
        one's + " copy".

        As in Theano 1.0, a copy with ``swap`` or ``delete_updates`` returns its outputs as
        a list, whatever form the original's had.
        """
        from arignote.compile.function import FunctionMaker
        request = dict(self.maker.request)
        if swap or delete_updates:
            request["outputs"] = _as_output_list(request["outputs"])
        if delete_updates:
            request.update(updates=None, no_default_updates=True, on_unused_input="ignore",
                           inputs=[_without_update(spec) for spec in request["inputs"]])
        request["name"] = name if name is not None else self.name and f"{self.name} copy"
        maker = FunctionMaker(**request)
        used = {s.origin: self._swap.get(s.origin, s) for s in maker.shared_inputs}
        swap_map = dict(self._swap)
        for old, new in (swap or {}).items():
            if not isinstance(old, SharedVariable) or not isinstance(new, SharedVariable):
                raise TypeError("copy(swap=) maps shared variables to shared variables")
            if old.type != new.type:
                raise TypeError(f"copy(swap=): {old.describe()} is {old.type} but its replacement "
                                f"{new.describe()} is {new.type}")
            replaced = [origin for origin, var in used.items() if var.origin is old.origin]
            if not replaced:
                raise ValueError(f"copy(swap=): {old.describe()} is not used by this function")
            swap_map.update(dict.fromkeys(replaced, new))
        if self.profile is not None:  # Theano's name for the copy's profile
            maker.profile = ProfileStats(message=f"{self.profile.message} copy")
        fn = Function(maker, swap_map)
        fn.trust_input = self.trust_input
        for spec, mine, theirs in zip(self.maker.inputs, self._stored, fn._stored):
            if mine is not None and theirs is not mine and theirs is not None:  # a shared cell stays shared
                copy_it = spec.mutable and not share_memory and mine[0] is not None
                theirs[0] = copy.copy(mine[0]) if copy_it else mine[0]
        return fn

    __copy__ = copy

    # ------------------------------------------------------------- pickling
    def _definition(self) -> tuple:
        """What rebuilds this function: its request (the user's graph, input specs, mode),
        the shared variables swapped in, the cells of the stored ``In`` values (cells, so
        functions that share one, through ``In(value=f.container[x])``, still share it
        after one pickle or deepcopy of them all), ``trust_input``."""
        return self.maker.request, self._swap, list(self._stored), self.trust_input

    def __reduce_ex__(self, protocol: int) -> tuple:
        definition = self._definition()
        check_picklable(definition, protocol)
        return _load_function, definition

    def __deepcopy__(self, memo: dict) -> Function:
        """A function of the copied graph: it reads and updates the copies (made with
        ``memo``, so once each) of the shared variables this one uses."""
        return _load_function(*copy.deepcopy(self._definition(), memo))

    @property
    def allow_gc(self) -> bool:
        """Whether a call frees its intermediate values (and the outputs' cells) at its end;
        False keeps them in ``storage_map`` until the next call (buffers are then reused).
        The linker's ``allow_gc``, else the flag, when the function was made; settable."""
        return self._allow_gc

    @allow_gc.setter
    def allow_gc(self, value: bool) -> None:
        with self._turn.held():
            self._allow_gc = bool(value)
            self._link_outputs(self.maker.fgraph, len(self.maker.inputs), self._swap, alias_roots())
            self._call = generate_call(self)

    def free(self) -> None:
        """Drop the intermediate buffers kept for reuse between calls."""
        with self._turn.held():
            for node in self._nodes:
                for var in node.outputs:
                    self.storage_map[var][0] = None

    def __repr__(self) -> str:
        return f"<arignote Function {self.name or ''} with {len(self._nodes)} nodes>"


_MISSING = object()


def _load_function(request: dict, swap: dict, stored: list, trust_input: bool) -> Function:
    """Compile a pickled (or deep-copied) function again, here, from its definition."""
    from arignote.compile.function import FunctionMaker
    fn = Function(FunctionMaker(**request), swap, stored)
    fn.trust_input = trust_input
    return fn


def _own(value: Any, given: Any) -> Any:
    """``value`` (a filtered ``given``), copied if it is still the caller's memory."""
    if isinstance(given, np.ndarray) and np.may_share_memory(value, given):
        return value.copy()
    return value


def _without_update(spec: In) -> In:
    if spec.update is None:
        return spec
    return In(spec.variable, name=spec.name, value=spec.value, mutable=spec.mutable,
              borrow=spec.borrow, strict=spec.strict, allow_downcast=spec.allow_downcast,
              implicit=spec.implicit)


def _as_output_list(outputs: Any) -> list:
    """A function's ``outputs`` argument as a list (a dict's in sorted key order)."""
    if outputs is None:
        return []
    if isinstance(outputs, dict):
        return [outputs[k] for k in sorted(outputs)]
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


def _stored_cell(spec: In, var: Variable, position: int) -> list | None:
    """Where input ``var`` keeps its value between calls: another function's (or a shared
    variable's) cell, a fresh one holding ``value`` (or None until an update writes it),
    or nothing for a plain argument."""
    if is_container(spec.value):
        return spec.value.storage
    if spec.value is None:
        return [None] if spec.update is not None else None
    return [_own(filter_for(var.type, _input_name(spec, position))(spec.value), spec.value)]


def _input_name(spec: In, position: int) -> str:
    if spec.name:
        return f"input {spec.name!r}"
    return f"input {position} ({spec.variable.describe()})"


def _describe_failure(err: BaseException, node: Any, storage: dict, history: Any = None) -> None:
    shapes = [getattr(storage[v][0], "shape", None) for v in node.inputs]
    dtypes = [getattr(storage[v][0], "dtype", None) for v in node.inputs]
    lines = [f"while running node {node}", f"  input shapes: {shapes}",
             f"  input dtypes: {[str(d) for d in dtypes]}"]
    trace = getattr(node.outputs[0].tag, "trace", None)
    if trace:
        lines.append(f"  the node was built at {trace}")
    reason = history.introduced_by(node) if history is not None else None
    if reason:  # known where a mode records the rewrites (DebugMode, NanGuardMode)
        lines.append(f"  the node was made by the rewrite {reason}")
    if config.exception_verbosity == "high":
        from arignote.printing import debugprint
        lines.append("  the graph of its inputs (exception_verbosity=high):")
        lines.extend("    " + line for line in debugprint(node.inputs, file="str", print_type=True).splitlines())
    if hasattr(err, "add_note"):
        err.add_note("\n".join(lines))
