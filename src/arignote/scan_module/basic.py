"""``scan``: Theano's loop, built as one Scan node over an inner graph.

The step function is called once, on symbolic per-step variables, to build the
inner graph. Everything the inner graph uses that does not change from step to
step (shared variables, outer variables, expressions of them) becomes an input
of the loop, computed once outside it, as are the non_sequences themselves (a random
draw passed in keeps its value at every step; one made in the step is new each step).
Shared variables the step updates (its returned updates, and the default updates of
random states it draws from) become carried states, and their final values come back
as ``updates``.
"""
from __future__ import annotations

import numbers
from typing import Any
from collections.abc import Callable, Mapping

from arignote.compile.sharedvalue import SharedVariable
from arignote.config import config
from arignote.graph.basic import Constant, Variable
from arignote.graph.fg import MissingInputError
from arignote.graph.testvalue import TestValueError
from arignote.graph.traversal import ancestors, clone_get_equiv, io_toposort
from arignote.scalar.dtypes import upcast
from arignote.scan_module.op import Scan
from arignote.tensor import math as tm
from arignote.tensor.shape import shape_i
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant
from arignote.updates import OrderedUpdates


class until:
    """Returned by a step function (``return outputs, until(cond)``): stop after a step where
    ``cond`` is true. That step's outputs are kept; the loop then has fewer than n_steps steps."""

    def __init__(self, condition: Any):
        condition = as_tensor_variable(condition)
        if condition.ndim != 0:
            raise TypeError(f"until: the condition must be a scalar, got {condition.type.describe()}: "
                            "reduce it, e.g. until(tensor.all(x > 0))")
        self.condition = condition


def scan(fn: Callable[..., Any], sequences: Any = None, outputs_info: Any = None,
         non_sequences: Any = None, n_steps: Any = None, truncate_gradient: int = -1,
         go_backwards: bool = False, mode: Any = None, name: str | None = None,
         profile: Any = False, allow_gc: bool | None = None, strict: bool = False,
         return_list: bool = False) -> tuple[Any, OrderedUpdates]:
    """Run ``fn`` once per step; return ``(outputs, updates)``, ``updates`` an ``OrderedUpdates``
    (Theano's type: the updates of several loops and layers join with ``+``).

    ``fn`` receives, in order: for each sequence its values at the step (one
    argument per tap; ``dict(input=s, taps=[-2, 0, 1])`` reads ``s[t-2]``,
    ``s[t]``, ``s[t+1]``), for each entry of ``outputs_info`` that is fed back
    its earlier values (``dict(initial=x0, taps=[-2, -1])`` gives the values two
    steps and one step back; a plain ``x0`` means taps ``[-1]``; ``None`` means
    the output is not fed back), then the ``non_sequences``. It returns the
    outputs, then optionally the shared-variable updates (a dict or a list of
    ``(shared, new value)`` pairs), then optionally an ``until`` stopping
    condition, in that order. The number of steps is ``n_steps`` or, without it, the
    longest run the sequences allow. ``updates`` must be passed to
    ``function(..., updates=updates)`` for the step's updates to take effect.
    ``truncate_gradient=k`` back-propagates through the last ``k`` steps only.
    ``profile`` (True, a name, or a ``ProfileStats``) profiles the step's inner function
    (True names it after the loop); ``allow_gc=False`` keeps the step's intermediate
    buffers from one step to the next (None: ``config.allow_gc``).
    """
    seq_specs = [_sequence_spec(s, i) for i, s in enumerate(_as_list(sequences))]
    if go_backwards:
        seq_specs = [(seq[::-1], taps) for seq, taps in seq_specs]
    non_seqs = [v if isinstance(v, Variable) else as_tensor_variable(v) for v in _as_list(non_sequences)]
    infos = None if outputs_info is None else [_output_spec(o, i) for i, o in enumerate(_as_list(outputs_info))]

    steps = _n_steps(n_steps, seq_specs)

    seq_vars, state_vars, outputs, step_updates, condition = _trace(fn, seq_specs, infos, non_seqs)
    if not infos:  # None, or Theano's outputs_info=[]: no output is fed back
        infos = [(None, ())] * len(outputs)
    if len(outputs) != len(infos):
        raise ValueError(f"scan: the step function returned {len(outputs)} output(s) but "
                         f"outputs_info has {len(infos)} entries: give one entry per output "
                         "(None for an output that is not fed back)")
    upcast_infos = [_upcast_literal(out, *info) for out, info in zip(outputs, infos)]
    if any(new[0] is not old[0] for new, old in zip(upcast_infos, infos)):
        # The step must see the initial values in their new dtypes.
        infos = upcast_infos
        seq_vars, state_vars, outputs, step_updates, condition = _trace(fn, seq_specs, infos, non_seqs)
    # Theano's order of states: those read at other taps than -1 (mit_sot) before the rest.
    state_idx = sorted((i for i, (_, taps) in enumerate(infos) if taps), key=lambda i: infos[i][1] == (-1,))
    nit_idx = [i for i, (_, taps) in enumerate(infos) if not taps]
    for i in state_idx:
        _check_state(outputs[i], *infos[i], i)
    # The step's variables of each state, in the loop's order of states.
    by_output = dict(zip([i for i, (_, taps) in enumerate(infos) if taps], state_vars))
    state_vars = [by_output[i] for i in state_idx]

    # Non-sequences are values computed once, before the loop: the inner graph stops at them
    # (a random draw passed in is not redrawn per step; closure uses of it see the same value).
    fixed = [v for v in non_seqs if not isinstance(v, (SharedVariable, Constant))]
    step_updates = _with_default_updates(step_updates, outputs + ([condition] if condition is not None else []),
                                         fixed)
    # A shared variable on a GPU takes its update there, as function() does for its updates.
    step_updates = {s: _to_target_type(s, e) for s, e in step_updates.items()}
    shared_targets = list(step_updates)
    carry_vars = [_inner(s.type, s, f"{s.name or 'shared'}[t-1]") for s in shared_targets]
    roots = ([outputs[i] for i in state_idx] + [outputs[i] for i in nit_idx]
             + [step_updates[s] for s in shared_targets]
             + ([condition] if condition is not None else []))
    explicit = [v for group in seq_vars + state_vars for v in group]
    hoisted = _free_variables(roots, explicit + shared_targets, fixed)
    # A non-sequence the step ignores is still an input of the loop (as in Theano), so a
    # function given it as an input does not find it unused.
    hoisted += [v for v in fixed if v not in hoisted]
    if strict:
        _check_strict(hoisted, non_seqs)
    hoisted_vars = [_inner(v.type, v, v.name) for v in hoisted]
    replace = dict(zip(shared_targets, carry_vars))
    replace.update(zip(hoisted, hoisted_vars))
    equiv = clone_get_equiv(explicit + list(replace), roots, copy_inputs=False, replace=replace)
    inner_outputs = [equiv[r] for r in roots]

    op = Scan(explicit + carry_vars + hoisted_vars, inner_outputs,
              seq_taps=[taps for _, taps in seq_specs],
              state_taps=[infos[i][1] for i in state_idx], n_nit=len(nit_idx),
              n_carry=len(shared_targets), n_nonseq=len(hoisted), as_while=condition is not None,
              truncate_gradient=truncate_gradient, name=name, mode=mode, allow_gc=allow_gc,
              profile=(name or "scan_fn") if profile is True else (profile or None))
    inits = [_initial_buffer(infos[i][0], infos[i][1]) for i in state_idx]
    node = op.build(steps, *[s for s, _ in seq_specs], *inits, *shared_targets, *hoisted)

    results: list[Variable | None] = [None] * len(outputs)
    for k, i in enumerate(state_idx):
        results[i] = node.outputs[k][-min(infos[i][1]):]
    for k, i in enumerate(nit_idx):
        results[i] = node.outputs[len(state_idx) + k]
    for i, var in enumerate(results):
        if name and var.name is None:
            var.name = f"{name}[{i}]"
    finals = node.outputs[len(state_idx) + len(nit_idx):]
    updates = OrderedUpdates(zip(shared_targets, finals))
    if len(results) == 1 and not return_list:
        return results[0], updates
    return results, updates


def _trace(fn: Callable[..., Any], seq_specs: list, infos: list | None, non_seqs: list) -> tuple:
    """Call ``fn`` on symbolic per-step variables: ``(seq_vars, state_vars, outputs, updates,
    condition)``. Each variable is named after the outer variable it reads and carries its
    trace, so that an error inside the step names what the user passed."""
    seq_vars = [[_inner(_row_type(seq), seq, _tap_name(seq, k)) for k in taps] for seq, taps in seq_specs]
    state_vars = [[_inner(init.type if taps == (-1,) else _row_type(init), init, _tap_name(init, k))
                   for k in taps] for init, taps in (infos or []) if taps]
    if config.compute_test_value != "off":
        _step_test_values(seq_specs, seq_vars, [i for i in (infos or []) if i[1]], state_vars)
    args = [v for group in seq_vars + state_vars for v in group] + non_seqs
    return (seq_vars, state_vars, *_split_return(fn(*args)))


def _upcast_literal(output: Variable, initial: Variable | None, taps: tuple[int, ...]) -> tuple:
    """A constant initial value (``outputs_info=0``) takes the dtype the step's output has when
    that holds it (Theano's one-step scans returned the step's dtype); others must match."""
    if (isinstance(initial, Constant) and taps and getattr(output, "dtype", None) is not None
            and output.dtype != initial.dtype and output.ndim == initial.ndim - (taps != (-1,))
            and upcast(initial.dtype, output.dtype) == output.dtype):
        return constant(initial.data.astype(output.dtype)), taps
    return initial, taps


# ------------------------------------------------------------------ arguments
def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _sequence_spec(item: Any, i: int) -> tuple[Variable, tuple[int, ...]]:
    if isinstance(item, Mapping):
        if "input" not in item:
            raise ValueError(f"scan: sequence {i} is a dict without 'input': write "
                             "dict(input=x, taps=[...])")
        seq, taps = item["input"], _taps(item.get("taps"), 0, f"sequence {i}")
    else:
        seq, taps = item, [0]
    seq = as_tensor_variable(seq)  # a GPU shared variable: its host twin, as the loop sees it
    if seq.ndim < 1:
        raise TypeError(f"scan: sequence {i} ({seq.describe()}) is a scalar; a sequence needs a "
                        "leading dimension to iterate over (pass scalars as non_sequences)")
    if not taps:
        raise ValueError(f"scan: sequence {i} has an empty list of taps")
    return seq, tuple(int(k) for k in taps)


def _taps(value: Any, default: int, what: str) -> list[int]:
    """A spec's taps: one int or a sequence of them (Theano took both), ``default`` for None."""
    taps = [default] if value is None else [value] if isinstance(value, numbers.Integral) else list(value)
    if len(set(taps)) != len(taps):
        raise ValueError(f"scan: {what} has taps {taps}; taps must be different")
    return taps


def _output_spec(item: Any, i: int) -> tuple[Variable | None, tuple[int, ...]]:
    """(initial value, taps); no taps for an output that is not fed back."""
    if item is None:
        return None, ()
    if isinstance(item, Mapping):
        if item.get("return_steps") is not None:
            raise ValueError(f"scan: outputs_info[{i}] has return_steps, which Theano 1.0 no longer "
                             "took: scan returns every step; select the ones you need from it "
                             "(out[-1] for the last), and the loop keeps only the rows read")
        initial = item.get("initial")
        if initial is None and item.get("taps") is not None:
            raise ValueError(f"scan: outputs_info[{i}] has taps {item['taps']} but no initial value: an "
                             "output read at earlier steps needs its first rows, "
                             "dict(initial=x0, taps=[...]) (or None if it is not fed back)")
        if initial is None:
            return None, ()
        taps = _taps(item.get("taps"), -1, f"outputs_info[{i}]")
        if not taps or any(int(k) >= 0 for k in taps):
            raise ValueError(f"scan: outputs_info[{i}] has taps {taps}; the taps of an output are the "
                             "steps back it is read from, so they must be negative (e.g. [-2, -1])")
    else:
        initial, taps = item, [-1]
    initial = as_tensor_variable(initial)  # a GPU shared variable: its host twin, as the loop sees it
    taps = tuple(int(k) for k in taps)
    if taps != (-1,) and initial.ndim < 1:
        raise TypeError(f"scan: outputs_info[{i}] has taps {list(taps)}, so its initial value needs one "
                        f"row per step back ({-min(taps)} rows), got {initial.type.describe()}")
    return initial, taps


def _initial_buffer(initial: Variable, taps: tuple[int, ...]) -> Variable:
    """The first rows of the state's buffer: ``x0`` as one row, or the first ``m`` rows given."""
    if taps == (-1,):
        return initial.dimshuffle("x", *range(initial.ndim))
    return initial[:-min(taps)]


def _inner(var_type: Any, outer: Variable, name: str | None) -> Variable:
    """A variable of the step standing for (part of) ``outer``: its name, and where it was made."""
    var = var_type(name)
    var.tag.trace = outer.tag.trace
    return var


def _step_test_values(seq_specs: list, seq_vars: list, state_specs: list, state_vars: list) -> None:
    """Give the step function's arguments the test values of the first step (the rows the
    taps read then), so the step's nodes get test values as they are built."""
    for (outer, taps), group in zip(seq_specs + state_specs, seq_vars + state_vars):
        try:
            value = outer.get_test_value()
        except TestValueError:
            continue
        for k, var in zip(taps, group):
            var.tag.test_value = value if var.type == outer.type else value[k - min(taps)]


def _row_type(var: Variable) -> TensorType:
    return TensorType(var.type.dtype, var.type.broadcastable[1:])


def _tap_name(var: Variable, k: int) -> str | None:
    return f"{var.name}[t{k:+d}]" if var.name else None


def _n_steps(n_steps: Any, seq_specs: list) -> Variable:
    lengths = []
    for seq, taps in seq_specs:
        span = max(max(taps), 0) - min(min(taps), 0)
        length = shape_i(seq, 0)
        lengths.append(length - span if span else length)
    if n_steps is not None:
        return tm.cast(as_tensor_variable(n_steps), "int64")
    if not lengths:
        raise ValueError("scan: without sequences the number of steps is unknown: pass n_steps")
    steps = lengths[0]
    for length in lengths[1:]:
        steps = tm.minimum(steps, length)
    return tm.cast(steps, "int64")


# What a step may return, tried in this order (Theano's): a lone form is the whole value,
# a longer one the items of a returned tuple or list.
_RETURN_FORMS = (("outputs",), ("updates",), ("outputs", "updates"), ("outputs", "until"),
                 ("updates", "until"), ("outputs", "updates", "until"))


def _split_return(value: Any) -> tuple[list[Variable], dict, Variable | None]:
    """The step's outputs, its updates and its stopping condition, read as Theano reads them.

    Outputs are one expression or a sequence of them; updates a dict or a sequence of
    (shared, new value) pairs. A sequence whose items are all pairs is read as updates,
    so two outputs in a pair of lists must come as one flat list.
    """
    items = list(value) if isinstance(value, (list, tuple)) else None
    for form in _RETURN_FORMS:
        parts = [value] if len(form) == 1 else items
        if parts is not None and len(parts) == len(form) and all(
                _RETURN_PARTS[kind](part) for kind, part in zip(form, parts)):
            found = dict(zip(form, parts))
            break
    else:
        accepted = ", ".join(kinds[0] if len(kinds) == 1 else f"({', '.join(kinds)})" for kinds in _RETURN_FORMS)
        raise TypeError(f"scan: cannot read what the step function returned: {_describe_return(value)}; "
                        f"accepted are {accepted} (the parts in this order), where outputs are one expression "
                        "or a list of them and updates a dict or a list of (shared variable, new value) pairs")
    outputs, updates = found.get("outputs", []), found.get("updates", {})
    condition = found["until"].condition if "until" in found else None
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    updates = list(updates.items()) if isinstance(updates, Mapping) else [tuple(p) for p in updates]
    result = []
    for k, out in enumerate(outputs):
        if out is None:
            raise TypeError(f"scan: the step function returned None as output {k}; return a symbolic "
                            "expression for every output")
        result.append(out if isinstance(out, Variable) else as_tensor_variable(out))
    for target, _ in updates:
        if not isinstance(target, SharedVariable):
            raise TypeError(f"scan: the step function's updates must have shared variables as keys, "
                            f"got {target!r} (returned {_describe_return(value)}); a list whose items "
                            "are all pairs is read as (shared, new value) pairs: return several "
                            "outputs as one flat list")
    return result, {k: _as_variable(v) for k, v in updates}, condition


def _is_output(item: Any) -> bool:
    return not isinstance(item, (list, tuple, Mapping, until))


def _is_outputs(item: Any) -> bool:
    return all(map(_is_output, item)) if isinstance(item, (list, tuple)) else _is_output(item)


def _is_updates(item: Any) -> bool:
    return isinstance(item, Mapping) or (isinstance(item, (list, tuple)) and all(
        isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in item))


_RETURN_PARTS = {"outputs": _is_outputs, "updates": _is_updates, "until": lambda part: isinstance(part, until)}


def _describe_return(value: Any) -> str:
    """A step's return value, short: its containers and their leaves."""
    if isinstance(value, (list, tuple)):
        inner = ", ".join(map(_describe_return, value))
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_describe_return(k)}: {_describe_return(v)}" for k, v in value.items()) + "}"
    if isinstance(value, until):
        return "until(...)"
    return str(value) if isinstance(value, Variable) else type(value).__name__


def _as_variable(value: Any) -> Variable:
    """Update expressions may be of any type (random states are not tensors)."""
    return value if isinstance(value, Variable) else as_tensor_variable(value)


def _to_target_type(target: SharedVariable, expr: Variable) -> Variable:
    converted = target.type.convert_variable(expr)
    return expr if converted is None else converted


def _check_state(output: Variable, initial: Variable, taps: tuple[int, ...], i: int) -> None:
    want_ndim = initial.ndim if taps == (-1,) else initial.ndim - 1
    if output.dtype != initial.dtype or output.ndim != want_ndim:
        raise TypeError(f"scan: output {i} of the step function is {output.type.describe()}, but its "
                        f"initial value in outputs_info ({initial.describe()}) is "
                        f"{initial.type.describe()}: they must have the same dtype and number of "
                        f"dimensions; cast one, e.g. tensor.cast(x, {initial.dtype!r})")


def _with_default_updates(updates: dict, roots: list[Variable], fixed: list[Variable]) -> dict:
    """The step's updates plus the default updates of shared variables the step reads
    (random states draw anew each step, as in Theano), not looking past ``fixed``."""
    result = dict(updates)
    done = {s.origin for s in result}
    frontier = list(roots) + list(result.values())
    while frontier:
        found = []
        for var in ancestors(frontier, blockers=fixed):
            if isinstance(var, SharedVariable) and var.default_update is not None and var.origin not in done:
                done.add(var.origin)
                expr = _as_variable(var.default_update)
                result[var] = expr
                found.append(expr)
        frontier = found
    return result


def _free_variables(roots: list[Variable], inner: list[Variable], fixed: list[Variable]) -> list[Variable]:
    """Variables the inner graph reads that do not change between steps (computed outside);
    the graph is not followed past ``fixed``, which are such variables by definition."""
    varying = set(inner)
    nodes = io_toposort(inner + fixed, roots)
    for node in nodes:
        if any(i in varying for i in node.inputs):
            varying.update(node.outputs)
    free: list[Variable] = []
    seen: set[Variable] = set()

    def take(var: Variable) -> None:
        if var not in varying and var not in seen and not isinstance(var, Constant):
            seen.add(var)
            free.append(var)

    for node in nodes:
        if any(o in varying for o in node.outputs):
            for var in node.inputs:
                take(var)
    for var in roots:
        take(var)
    return free


class NotANonSequence(MissingInputError):
    """``scan(strict=True)``: the step uses a shared variable it was not given (Theano raised
    MissingInputError, a ValueError)."""

    def __init__(self, var: Variable):
        ValueError.__init__(self, f"scan(strict=True): the step function uses the shared variable "
                            f"{var.describe()}, which is not among the non_sequences: pass it in "
                            "non_sequences, or drop strict=True")
        self.variable, self.needed_by = var, None


def _check_strict(hoisted: list[Variable], non_seqs: list[Variable]) -> None:
    """Theano's rule: strict is about shared variables only; another variable the step uses
    becomes an input of the loop either way."""
    allowed = set(non_seqs)
    for var in ancestors(hoisted, blockers=allowed):
        if isinstance(var, SharedVariable) and var not in allowed:
            raise NotANonSequence(var)
