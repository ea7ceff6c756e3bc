"""NanGuardMode: stop at the first node that makes a NaN, an inf or a huge value.

Theano's mode of that name: the function's inputs are checked before the
first node runs, and every node's outputs after it runs. The error names the
node, the user's variable it computes and the line that built it, and for
each of the node's inputs whether it was already bad. A fused node computes
several of the user's variables at once, so the graph as the user wrote it is
then evaluated (with ``perform``) up to that node, to name the first of the
user's variables that went bad. Arrays on a GPU are checked on the device by
a reduction kernel (``backends/gpu/instruments.py``): three flags come back, not
the array.
"""
from __future__ import annotations

from functools import singledispatch
from typing import Any
from collections.abc import Callable

import numpy as np

from arignote.compile import reference
from arignote.compile.mode import PREDEFINED, Mode, SharedMode
from arignote.config import config
from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.history import RewriteHistory, describe_node, history_of
from arignote.graph.traversal import io_toposort

BIG = 1e10  # Theano's threshold for a "big" value

Flags = tuple[bool, bool, bool]  # (holds NaN, holds inf, holds |x| > BIG)
_NONE: Flags = (False, False, False)
_WORDS = ("NaN", "inf", f"a value larger than {BIG:g} in magnitude")


class NanGuardError(AssertionError):
    """A NaN, inf or huge value was made; Theano raised AssertionError, so this is one."""


@singledispatch
def finite_flags(value: Any) -> Flags:
    """(NaN, inf, big) found in ``value``; values that are not arrays have none.
    Backends register their array types (the GPU's check runs on the device)."""
    return _NONE


@finite_flags.register(np.generic)
def _scalar_flags(value: np.generic) -> Flags:
    return finite_flags(np.asarray(value))


@finite_flags.register(np.ndarray)
def _host_flags(value: np.ndarray) -> Flags:
    if not value.size or value.dtype.kind not in "fiuc":
        return _NONE
    if value.dtype.kind == "c":
        return (bool(np.isnan(value).any()), bool(np.isinf(value).any()),
                bool((np.abs(value) > BIG).any()))
    low, high = np.min(value), np.max(value)  # min and max propagate NaN: no temporary array
    if value.dtype.kind != "f":
        return False, False, bool(high > BIG or low < -BIG)
    nan = bool(np.isnan(low))
    if nan:  # look again at the numbers only (rare: the guard is about to raise)
        numbers = value[~np.isnan(value)]
        if not numbers.size:
            return True, False, False
        low, high = numbers.min(), numbers.max()
    return nan, bool(np.isinf(low) or np.isinf(high)), bool(abs(low) > BIG or abs(high) > BIG)


class NanGuardMode(Mode):
    """``mode=NanGuardMode(nan_is_error=True, inf_is_error=True, big_is_error=True)`` or
    ``mode='NanGuardMode'``: a NaN, inf, or a value beyond 1e10 in magnitude raises
    :class:`NanGuardError` at the node that made it. ``optimizer='default'`` is
    ``config.optimizer``, else ``'fast_run'``; ``linker`` is accepted and unused, as in Theano."""

    def __init__(self, nan_is_error: bool | None = None, inf_is_error: bool | None = None,
                 big_is_error: bool | None = None, optimizer: Any = "default", linker: Any = None):
        super().__init__("cpu", optimizer, name="NanGuardMode")
        flags = config.NanGuardMode  # the defaults are Theano's flags NanGuardMode.*
        self.errors = tuple(default if flag is None else bool(flag) for flag, default in (
            (nan_is_error, flags.nan_is_error), (inf_is_error, flags.inf_is_error),
            (big_is_error, flags.big_is_error)))
        if not any(self.errors):
            raise ValueError("NanGuardMode: with nan_is_error, inf_is_error and big_is_error all "
                             "False there is nothing to guard against; set at least one")

    @property
    def nan_is_error(self) -> bool:
        return self.errors[0]

    @property
    def inf_is_error(self) -> bool:
        return self.errors[1]

    @property
    def big_is_error(self) -> bool:
        return self.errors[2]

    def rewrite(self, fgraph: FunctionGraph) -> None:
        fgraph.attach_feature(RewriteHistory())
        super().rewrite(fgraph)

    def wrap_thunks(self, fn: Any, nodes: list[Apply], thunks: list[Callable]) -> list[Callable]:
        guard = _Guard(self.errors, fn)
        return [guard.wrap(k, node, thunk) for k, (node, thunk) in enumerate(zip(nodes, thunks))]


PREDEFINED["NanGuardMode"] = SharedMode(NanGuardMode)


class _Guard:
    def __init__(self, errors: tuple[bool, ...], fn: Any):
        self.errors = errors
        self.fn = fn
        self.fgraph = fn.maker.fgraph
        self.storage = fn.storage_map

    def bad(self, var: Variable, value: Any) -> list[str]:
        """What is wrong with ``value`` among the kinds that are errors."""
        if not getattr(var.tag, "nan_guard_mode_check", True):
            return []
        return _words(finite_flags(value), self.errors)

    def wrap(self, k: int, node: Apply, thunk: Callable) -> Callable:
        outputs = [(j, out, self.storage[out]) for j, out in enumerate(node.outputs)]

        def guarded() -> None:
            if k == 0:
                self.check_inputs()
            thunk()
            for j, out, cell in outputs:
                found = self.bad(out, cell[0])
                if found:
                    raise NanGuardError(self.message(node, j, found))
        return guarded

    def check_inputs(self) -> None:
        for position, var in enumerate(self.fgraph.inputs):
            found = self.bad(var, self.storage[var][0])
            if found:
                raise NanGuardError(f"NanGuardMode: input {position} of the function, "
                                    f"{var.describe()}, holds {' and '.join(found)}")

    def message(self, node: Apply, j: int, found: list[str]) -> str:
        lines = [f"NanGuardMode: {' and '.join(found)} in output {j} of node "
                 f"{describe_node(self.fgraph, node)}"]
        first = self.first_bad_user_variable(node.outputs[j])
        if first is not None:
            lines.append(first)
        for i, var in enumerate(node.inputs):
            value = self.storage[var][0]
            kinds = _words(finite_flags(value), (True, True, True))
            state = "already held " + " and ".join(kinds) if kinds else "finite"
            lines.append(f"  input {i}: {_behind_transfers(var)} (shape {getattr(value, 'shape', None)}, "
                         f"{getattr(value, 'dtype', type(value).__name__)}): {state}")
        return "\n".join(lines)

    def first_bad_user_variable(self, var: Variable) -> str | None:
        """Evaluate the graph as written up to ``var``'s twin; name its first bad variable."""
        history = history_of(self.fgraph)
        twin = history.original_of(var) if history is not None else None
        if twin is None:
            return None
        original = history.original
        values = {o: self.storage[i][0] for i, o in zip(self.fgraph.inputs, original.inputs)}
        try:
            for node in io_toposort(original.inputs, [twin]):
                reference.evaluate(node.outputs, values)
                for out in node.outputs:
                    found = self.bad(out, values[out])
                    if found:
                        trace = getattr(out.tag, "trace", None)
                        return (f"  in the graph as written, the first variable holding "
                                f"{' and '.join(found)} is {out.describe()}"
                                + (f", built at {trace}" if out.name and trace else "")
                                + f" ({node.op} of {', '.join(map(str, node.inputs))})")
        except Exception as err:  # the graph as written may fail where the rewritten one ran
            return f"  (evaluating the graph as written to find the first bad variable failed: {err})"
        return ("  in the graph as written this value is finite: the rewritten graph made it "
                "(DebugMode compares the two)")


def _words(flags: Flags, errors: tuple[bool, ...]) -> list[str]:
    found = [word for word, flag, error in zip(_WORDS, flags, errors) if flag and error]
    if _WORDS[1] in found and _WORDS[2] in found:
        found.remove(_WORDS[2])  # an inf is big too: saying so adds nothing
    return found


_TRANSFERS = ("GpuFromHost", "HostFromGpu", "GpuToGpu")


def _behind_transfers(var: Variable) -> str:
    """``var``, named by the variable a transfer copied (``'x' (on the device)``)."""
    moved = False
    while var.owner is not None and type(var.owner.op).__name__ in _TRANSFERS:
        var, moved = var.owner.inputs[0], True
    return f"{var} (copied to the device)" if moved else str(var)
