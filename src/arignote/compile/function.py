"""``function()``: from symbolic inputs and outputs to a callable.

The maker turns the user's request into one FunctionGraph (givens applied,
updates and shared variables gathered, every input checked), runs the mode's
rewrites on it, then hands it to the executor, which links it once.
"""
from __future__ import annotations

import contextlib
import copy
import os
import time
import warnings
from typing import Any
from collections.abc import Iterable, Mapping, Sequence

from arignote import progress
from arignote.compile.aliasing import overwritten_roots
from arignote.compile.executor import Function
from arignote.compile.io import In, Out
from arignote.compile.linkers import Linker, VM_Linker
from arignote.compile.mode import Mode, get_mode
from arignote.compile.output_copies import insert_copies
from arignote.compile.profiling import ProfileStats, kernel_builds
from arignote.compile.sharedvalue import SharedVariable
from arignote.config import config
from arignote.graph.basic import Constant, Variable, traced_to_caller, user_line
from arignote.graph.fg import FunctionGraph, MissingInputError
from arignote.graph.traversal import ancestors, clone_get_equiv
from arignote.graph.types import DisconnectedType, NullType
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable


class UnusedInputError(ValueError):
    """An input does not contribute to any output or update."""


class InputReplacedError(ValueError, RuntimeError):
    """``givens`` replaces an explicit input (a RuntimeError in Theano, which code written for
    it catches)."""


class OutputKeyError(TypeError, AssertionError):
    """A key of an outputs dict is not a string (an AssertionError in Theano)."""


def function(inputs: Sequence[Any] | None = None, outputs: Any = None, mode: Mode | str | None = None,
             updates: Mapping | Iterable | None = None, givens: Mapping | Iterable | None = None,
             no_default_updates: bool | Sequence[SharedVariable] = False, accept_inplace: bool = False,
             name: str | None = None, rebuild_strict: bool = True,
             allow_input_downcast: bool | None = None, profile: Any = None,
             on_unused_input: str | None = None, trust_input: bool = False) -> Function:
    """Compile ``outputs`` as a function of ``inputs``.

    ``outputs`` may be one variable (the call returns one array), a list (a
    list), or a dict of name -> variable (a dict). ``updates`` pairs shared
    variables with expressions of their next value, all computed from the values
    before the call and applied together after it. ``givens`` substitutes
    variables of the graph before compiling (numbers and arrays become constants of
    the replaced variable's type; ``rebuild_strict=False`` lets a replacement of
    another type rebuild the nodes above it). An input may be an intermediate
    variable: the graph below it is cut (Theano's rule). ``profile=True`` (or a
    name, or a shared :class:`ProfileStats`; default ``config.profile``) times
    every call into ``f.profile``. ``name`` defaults to the file and line of the
    call, as in Theano, so profiles and error messages say which function.
    """
    if name is None:
        name = user_line()
        label = name and os.path.basename(name)
    else:
        label = name
    if inputs is None:
        inputs = []
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"function() takes a list of inputs, got {type(inputs).__name__} {inputs!r}: "
                        f"write function([{inputs}], ...)")
    inputs = [_as_in(i) for i in inputs]
    # Rewrites build nodes too: they get no test values (Theano's compute_test_value_opt).
    quiet = (config.change_flags(compute_test_value="off") if config.compute_test_value != "off"
             else contextlib.nullcontext())
    profile = _profile_for(config.profile if profile is None else profile, name)
    start, builds = time.perf_counter(), kernel_builds()
    with quiet, traced_to_caller(), progress.task(f"compiling {label or 'a function'}"):
        maker = FunctionMaker(
            inputs=inputs, outputs=outputs, mode=get_mode(mode), updates=updates, givens=givens,
            no_default_updates=no_default_updates, allow_input_downcast=allow_input_downcast,
            on_unused_input=on_unused_input or config.on_unused_input, name=name,
            accept_inplace=accept_inplace, rebuild_strict=rebuild_strict)
        maker.profile = profile
        made = time.perf_counter()
        progress.step(f"linking {len(maker.fgraph.apply_nodes)} nodes")
        fn = maker.create()
    if profile is not None:
        done, built = time.perf_counter(), kernel_builds()
        profile.add_compile(done - start, maker.rewrite_time, getattr(maker.fgraph, "rewrite_times", {}),
                            done - made, (built[0] - builds[0], built[1] - builds[1]))
    fn.trust_input = trust_input
    return fn


def _profile_for(profile: Any, name: str | None) -> ProfileStats | None:
    """``function(profile=...)``: True (or a message) makes a ProfileStats, one is used as it is."""
    if isinstance(profile, ProfileStats) or profile is None:
        return profile
    if isinstance(profile, str):
        return ProfileStats(message=profile)
    return ProfileStats(message=name) if profile else None


def function_dump(filename: str, inputs: Sequence[Any], outputs: Any = None, mode: Any = None,
                  updates: Any = None, givens: Any = None, no_default_updates: Any = False,
                  accept_inplace: bool = False, name: str | None = None, rebuild_strict: bool = True,
                  allow_input_downcast: bool | None = None, profile: Any = None,
                  on_unused_input: str | None = None, extra_tag_to_remove: Any = None) -> None:
    """Pickle the arguments of a ``function()`` call to ``filename``, so the compilation can
    be reproduced elsewhere: ``function(**pickle.load(open(filename, 'rb')))``.

    ``extra_tag_to_remove`` (Theano's argument, for tags that do not pickle) is
    accepted; arignote's tags pickle.
    """
    import pickle
    request = dict(inputs=inputs, outputs=outputs, mode=mode, updates=updates, givens=givens,
                   no_default_updates=no_default_updates, accept_inplace=accept_inplace, name=name,
                   rebuild_strict=rebuild_strict, allow_input_downcast=allow_input_downcast,
                   profile=profile, on_unused_input=on_unused_input)
    with open(filename, "wb") as f:
        pickle.dump(request, f, -1)


def _as_in(spec: Any) -> In:
    """An input given as Theano's shortcuts allow: ``r``, ``(name, r)``, ``(r, value)``,
    ``((r, update), value)``, ``(name, r, value)`` or ``(name, (r, update), value)``."""
    if isinstance(spec, In):
        return spec
    if isinstance(spec, Variable):
        return In(spec)
    if isinstance(spec, (list, tuple)) and spec:
        name, rest = (spec[0], spec[1:]) if isinstance(spec[0], str) else (None, spec)
        if 1 <= len(rest) <= 2:
            target, value = rest[0], (rest[1] if len(rest) == 2 else None)
            var, update = target if isinstance(target, (list, tuple)) and len(target) == 2 else (target, None)
            if isinstance(var, Variable) and (update is None or len(rest) == 2):
                return In(var, name=name, value=value, update=update)
    raise TypeError(f"function() inputs must be symbolic variables, In(...) or Theano's shortcuts "
                    f"(name, x), (x, value), ((x, update), value), (name, x, value), "
                    f"(name, (x, update), value); got {type(spec).__name__} {spec!r}: make a variable "
                    f"with e.g. tensor.vector('x')")


class FunctionMaker:
    """Builds the FunctionGraph for one ``function()`` call and keeps what it was built from."""

    profile: ProfileStats | None = None  # set by function() before create() links the graph

    def __init__(self, inputs: list[In], outputs: Any, mode: Mode, updates: Any, givens: Any,
                 no_default_updates: bool | Sequence[SharedVariable], allow_input_downcast: bool | None,
                 on_unused_input: str, name: str | None, accept_inplace: bool = False,
                 rebuild_strict: bool = True):
        self.request = dict(inputs=inputs, outputs=outputs, mode=mode, updates=updates,
                            givens=givens, no_default_updates=no_default_updates,
                            allow_input_downcast=allow_input_downcast,
                            on_unused_input=on_unused_input, name=name,
                            accept_inplace=accept_inplace, rebuild_strict=rebuild_strict)
        self.mode = mode
        self.name = name
        self.allow_input_downcast = allow_input_downcast
        self.inputs = inputs
        self._check_inputs()
        self.output_keys, self.outputs = _normalize_outputs(outputs)
        update_pairs = _normalize_updates(updates)
        for spec in inputs:
            if spec.update is not None:
                update_pairs.append((spec, _as_update(spec.update)))
        givens_map = _normalize_givens(givens, rebuild_strict)
        for old in givens_map:
            if any(old is spec.variable for spec in inputs):
                raise InputReplacedError(
                    f"givens replaces {old.describe()}, which is an explicit input of the function: "
                    "an input cannot also be replaced (Theano refuses this too). To compute it from "
                    "a new input y, make y the input instead: function([y], f(x), givens={x: g(y)})")

        roots = [o.variable for o in self.outputs] + [u for _, u in update_pairs]
        # An intermediate variable given as an input cuts the graph below it: it is
        # replaced by an ownerless copy, which the call fills.
        cut = {spec.variable: spec.variable.clone() for spec in inputs if spec.variable.owner is not None}
        givens_map = {**givens_map, **cut}
        explicit = [cut.get(spec.variable, spec.variable) for spec in inputs]
        if givens_map:
            equiv = clone_get_equiv(explicit, roots, copy_inputs=False, replace=givens_map)
            roots = [equiv[r] for r in roots]
        update_pairs = [(target, root) for (target, _), root
                        in zip(update_pairs, roots[len(self.outputs):])]
        update_pairs += _default_updates(roots, update_pairs, no_default_updates, givens_map)
        # A shared variable living on a GPU takes its update there (GpuFromHost).
        update_pairs = [(t, _to_target_type(t, e)) for t, e in update_pairs]
        roots = roots[:len(self.outputs)] + [u for _, u in update_pairs]
        for target, expr in update_pairs:
            _check_update_type(target, expr)

        shared_vars = self._check_graph_inputs(roots, explicit, on_unused_input)
        self.shared_inputs = shared_vars
        self.updates = update_pairs
        self.fgraph = FunctionGraph(explicit + shared_vars, roots, clone=True)
        self.fgraph.n_outputs = len(self.outputs)
        self.fgraph.name = name
        if accept_inplace:
            self.inputs = inputs = _overwritten_are_mutable(self.fgraph, inputs)
        else:
            _refuse_inplace(self.fgraph)
        # In(mutable=True): the in-place rewrites may overwrite that argument (graph/destroyhandler.py).
        self.fgraph.destroyable_inputs = frozenset(
            var for spec, var in zip(inputs, self.fgraph.inputs) if spec.mutable)
        start = time.perf_counter()
        mode.rewrite(self.fgraph)
        self.rewrite_time = time.perf_counter() - start
        # After every rewrite (GPU placement included), so each copy runs where its value is.
        updated = {t.origin for t, _ in update_pairs if isinstance(t, SharedVariable)}
        insert_copies(self.fgraph, self.inputs, self.outputs, frozenset(
            var for shared, var in zip(shared_vars, self.fgraph.inputs[len(inputs):]) if shared.origin in updated))

    def create(self) -> Function:
        return Function(self)

    @property
    def linker(self) -> Linker:
        """Theano's ``maker.linker``: the mode's linker object bound to this graph (a
        ``VM_Linker`` for a linker name), whose ``make_all()`` links the graph again,
        standalone: its last item is the node order."""
        if "_linker" not in vars(self):
            chosen = self.mode.linker if isinstance(self.mode.linker, Linker) else VM_Linker()
            self._linker = chosen.accept(self.fgraph)
        return self._linker

    @property
    def expanded_inputs(self) -> list[In]:
        """Theano's list of every input: the explicit ones, then one implicit ``In`` per shared
        variable the graph reads, whose ``value`` is that variable's container (setting its
        ``data`` sets the variable) and whose ``update`` is the function's update of it."""
        updates = {target: expr for target, expr in self.updates if isinstance(target, SharedVariable)}
        return list(self.inputs) + [In(s, value=s.container, update=updates.get(s), implicit=True)
                                    for s in self.shared_inputs]

    # ------------------------------------------------------------ checks
    def _check_inputs(self) -> None:
        seen: dict[Variable, int] = {}
        for position, spec in enumerate(self.inputs):
            var = spec.variable
            if isinstance(var, SharedVariable):
                raise TypeError(f"Cannot use a shared variable ({var}) as explicit input: shared "
                                "variables are implicit inputs of every function that uses them; to "
                                "feed another value, use givens={shared: new_variable}")
            if isinstance(var, Constant):
                raise TypeError(f"input {position} is the constant {var}: inputs must be symbolic "
                                "variables such as tensor.vector('x')")
            if var in seen:  # Theano's class: the second is an input nothing uses
                raise UnusedInputError(f"variable {var.describe()} is given twice as an input "
                                       f"(positions {seen[var]} and {position}): list each input once")
            seen[var] = position

    def _check_graph_inputs(self, roots: list[Variable], explicit: list[Variable],
                            on_unused_input: str) -> list[SharedVariable]:
        explicit_set = set(explicit)
        needed = ancestors(roots, blockers=explicit_set)
        used = set(needed)
        for spec, var in zip(self.inputs, explicit):  # Theano reports these before missing ones
            if var not in used:
                self._unused(spec, on_unused_input)
        shared_vars: list[SharedVariable] = []
        for var in needed:
            if var.owner is not None or var in explicit_set or isinstance(var, Constant):
                continue
            _refuse_placeholder(var, "a variable of the graph")
            if isinstance(var, SharedVariable):
                shared_vars.append(var)
            else:
                raise MissingInputError(var)
        return shared_vars

    @staticmethod
    def _unused(spec: In, policy: str) -> None:
        message = (f"input {spec.variable.describe()} is not used to compute any output or update: "
                   "remove it from the inputs, or pass on_unused_input='ignore' (or 'warn')")
        if policy == "raise":
            raise UnusedInputError(message)
        if policy == "warn":
            warnings.warn(message, stacklevel=4)
        elif policy != "ignore":
            raise ValueError(f"on_unused_input={policy!r}: use 'raise', 'warn' or 'ignore'")


def _normalize_outputs(outputs: Any) -> tuple[Any, list[Out]]:
    """(keys, specs): keys is None for one output, a list length for a list (or no outputs),
    names for a dict."""
    if outputs is None:
        return 0, []
    if isinstance(outputs, Mapping):
        keys = list(outputs)
        for key in keys:
            if not isinstance(key, str):
                raise OutputKeyError(f"function(): the keys of an outputs dict name the results the "
                                     f"call returns and must be strings, got {type(key).__name__} "
                                     f"{key!r}: use {{{str(key)!r}: ...}}, or pass a list of outputs")
        keys.sort()  # Theano's order
        return keys, [_as_out(outputs[k], repr(k)) for k in keys]
    if isinstance(outputs, (list, tuple)):
        return len(outputs), [_as_out(o, str(i)) for i, o in enumerate(outputs)]
    return None, [_as_out(outputs, "0")]


def _as_out(value: Any, where: str) -> Out:
    if isinstance(value, Out):
        return value
    if isinstance(value, In):
        raise TypeError(f"output {where} is an In(); wrap outputs in Out() or pass the variable")
    _refuse_placeholder(value, f"output {where}")
    try:
        # A Variable of any type (a GPU array left on its device) is an output as it is.
        return Out(value if isinstance(value, Variable) else as_tensor_variable(value))
    except TypeError as err:
        raise TypeError(f"output {where} is not a symbolic variable ({err}): pass expressions "
                        "built from the inputs") from None


def _refuse_placeholder(var: Any, where: str) -> None:
    """A NullType or DisconnectedType variable (a gradient that does not exist, or is not
    connected) has no value: no function can compute it."""
    vtype = getattr(var, "type", None)
    if isinstance(vtype, NullType):
        raise TypeError(f"{where} is a gradient that does not exist (NullType), so it cannot be "
                        f"computed: {vtype.why_null}")
    if isinstance(vtype, DisconnectedType):
        raise TypeError(f"{where} is a DisconnectedType gradient (the cost does not depend on the "
                        "variable), which has no value: ask grad() for zeros (return_disconnected='zero')")


def _normalize_updates(updates: Any) -> list[tuple[Any, Variable]]:
    if updates is None:
        return []
    pairs = list(updates.items()) if isinstance(updates, Mapping) else list(updates)
    result: list[tuple[Any, Variable]] = []
    seen: set[SharedVariable] = set()
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"updates must be a dict or a list of (shared, expression) pairs, got {pair!r}")
        target, expr = pair
        if not isinstance(target, SharedVariable):
            raise TypeError(f"updates: {target} is not a shared variable; only shared variables "
                            "(made with arignote.shared) can be updated")
        if target.origin in seen:
            raise ValueError(f"updates: shared variable {target.describe()} is updated twice; "
                             "combine the two expressions into one")
        seen.add(target.origin)
        if not isinstance(expr, Variable) and isinstance(target.type, TensorType):
            # A number or array: a constant of the variable's type (Theano's rule).
            expr = target.type.make_constant(target.type.filter(expr, allow_downcast=True))
        result.append((target, _as_update(expr)))
    return result


def _normalize_givens(givens: Any, strict: bool = True) -> dict[Variable, Variable]:
    if givens is None:
        return {}
    pairs = list(givens.items()) if isinstance(givens, Mapping) else list(givens)
    result: dict[Variable, Variable] = {}
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"givens must be a dict or a list of (variable, replacement) pairs, got {pair!r}")
        old, new = pair
        if not isinstance(old, Variable):
            raise TypeError(f"givens: key {old!r} is not a symbolic variable: the keys are the "
                            "graph's variables to replace")
        if not isinstance(new, Variable) and isinstance(old.type, TensorType):
            new = old.type.make_constant(old.type.filter(new, allow_downcast=True))  # Theano's rule
        new = as_tensor_variable(new) if isinstance(old.type, TensorType) else new
        if old.type != new.type and strict:
            same = (isinstance(new.type, TensorType) and isinstance(old.type, TensorType)
                    and old.type.dtype == new.type.dtype and old.type.ndim == new.type.ndim)
            if not same:
                raise TypeError(f"givens: {old.describe()} ({_type_text(old)}) cannot be replaced by "
                                f"{new.describe()} ({_type_text(new)}): the dtype and number of dimensions must "
                                f"match; cast it with tensor.cast(v, {getattr(old.type, 'dtype', '?')!r})")
        result[old] = new
    return result


def _default_updates(roots: list[Variable], explicit_pairs: list, no_default_updates: Any,
                     givens: dict) -> list[tuple[SharedVariable, Variable]]:
    """Shared variables' ``default_update`` expressions, for those not updated explicitly."""
    if no_default_updates is True:
        return []
    skip = {s.origin for s in (no_default_updates or ())}
    done = {t.origin for t, _ in explicit_pairs if isinstance(t, SharedVariable)}
    pairs: list[tuple[SharedVariable, Variable]] = []
    frontier = list(roots)
    while frontier:
        found = []
        for var in ancestors(frontier):
            if (isinstance(var, SharedVariable) and var.default_update is not None
                    and var.origin not in done and var.origin not in skip):
                done.add(var.origin)
                expr = _as_update(var.default_update)
                if givens:
                    expr = clone_get_equiv([], [expr], copy_inputs=False, replace=givens)[expr]
                pairs.append((var, expr))
                found.append(expr)
        frontier = found
    return pairs


def _as_update(expr: Any) -> Variable:
    """An update expression: numbers and arrays become tensor constants; a Variable of
    any type (a random generator's next state, say) is kept as it is."""
    return expr if isinstance(expr, Variable) else as_tensor_variable(expr)


def _refuse_inplace(fgraph: FunctionGraph) -> None:
    """A user graph that overwrites its inputs is refused unless the user says it is meant.

    Only the in-place rewrite, which proves the overwritten value is not needed
    elsewhere, should create such nodes; one written by hand could corrupt a
    shared variable or an input the caller still holds.
    """
    for node in fgraph.toposort():
        if node.op.destroy_map:
            raise TypeError(f"the graph contains {node}, which overwrites its input in place: "
                            "build it with the out-of-place op, or pass accept_inplace=True to "
                            "function() if overwriting is intended")


def _overwritten_are_mutable(fgraph: FunctionGraph, inputs: list[In]) -> list[In]:
    """``inputs``, where each explicit input that an in-place op of the user's own graph
    overwrites (itself or through a view) is made ``In(mutable=True)``.

    Theano's rule for ``accept_inplace=True``: the caller's array is overwritten, as the
    graph says, and legacy code reads it back. ``In(x, mutable=False)`` said explicitly
    keeps the array the caller's (the function copies it first), as do shared variables.
    """
    overwritten = overwritten_roots(fgraph.apply_nodes)
    return [spec if spec.mutable or spec.mutable_given or var not in overwritten else _made_mutable(spec)
            for spec, var in zip(inputs, fgraph.inputs)]


def _made_mutable(spec: In) -> In:
    """A copy of ``spec`` with ``mutable`` (and so ``borrow``): the caller's spec stays as given."""
    spec = copy.copy(spec)
    spec.mutable = spec.borrow = True
    return spec


def _to_target_type(target: Any, expr: Variable) -> Variable:
    converted = target.type.convert_variable(expr) if isinstance(target, SharedVariable) else None
    return expr if converted is None else converted


def _check_update_type(target: Any, expr: Variable) -> None:
    """An update has exactly its variable's type (Theano's rule; the move to the variable's
    device is made before): one more broadcastable would let a 1x1 value replace a 3x3
    matrix, one less would break the variable's promise of length 1."""
    expected = target.type if isinstance(target, SharedVariable) else target.variable.type
    if expr.type == expected:
        return
    who = target.describe() if isinstance(target, SharedVariable) else target.variable.describe()
    pattern, want = getattr(expr.type, "broadcastable", None), getattr(expected, "broadcastable", None)
    if (pattern is not None and want is not None and len(pattern) == len(want)
            and getattr(expr.type, "dtype", None) == getattr(expected, "dtype", None)):
        differ = [axis for axis, (a, b) in enumerate(zip(pattern, want)) if a != b]
        raise TypeError(
            f"the update of {who} has broadcastable pattern {pattern}, but the variable's is {want} "
            f"(dimensions {differ} differ): an update must keep its variable's type, or a value of "
            "another shape could replace it (Theano refuses this too). If the new value does have "
            f"the variable's shape, say so with tensor.patternbroadcast(expr, {want}); otherwise fix "
            "the expression (build it with tensor.alloc, or tensor.zeros_like(variable))")
    raise TypeError(f"the update of {who} is {_type_text(expr)}, but the variable is "
                    f"{_type_text(expected)}: an update must keep the dtype and number of dimensions; "
                    f"cast it with tensor.cast(expr, {getattr(expected, 'dtype', '?')!r}) or fix the "
                    "expression")


def _type_text(var_or_type: Any) -> str:
    """``float32 vector`` for a tensor variable or type, else the type's own text."""
    ttype = getattr(var_or_type, "type", var_or_type)
    return ttype.describe() if isinstance(ttype, TensorType) else str(ttype)
