"""Reference evaluation: a graph computed node by node with each Op's ``perform``.

DebugMode uses it to compute what a graph (or a part of it a rewrite replaced)
should give, and to compare values produced on different paths: host arrays,
device arrays (compared on the host) and other values (compared with ``==``).
"""
from __future__ import annotations

import copy
from typing import Any
from collections.abc import Iterable

import numpy as np

from arignote.graph.basic import Constant, Variable, perform_of

# (rtol, atol) per float dtype: Theano's tolerances for "the same value".
TOLERANCE = {"float16": (1e-2, 5e-3), "float32": (1e-5, 1e-5), "float64": (1e-5, 1e-8)}


class MissingValue(LookupError):
    """A graph input whose value the evaluation was not given."""


def snapshot(value: Any) -> Any:
    """A copy of ``value`` that nothing running later can change (device arrays stay on the device)."""
    if isinstance(value, np.ndarray) or (hasattr(value, "__array__") and hasattr(value, "copy")):
        return value.copy()
    return copy.deepcopy(value)


def host(value: Any) -> Any:
    """``value`` as a host array when it is an array anywhere (a sparse matrix's values as a
    dense one, whatever its storage), else as it is."""
    if hasattr(value, "indptr") and hasattr(value, "toarray"):  # a scipy.sparse matrix
        return value.toarray()
    if hasattr(value, "__array__") and not isinstance(value, np.ndarray):
        return np.asarray(value)
    return value


def evaluate(outputs: Iterable[Variable], values: dict[Variable, Any]) -> list[Any]:
    """The values of ``outputs``, computed with ``perform`` from ``values`` (a memo: every
    variable it computes is added to it, so evaluations sharing it share work)."""
    outputs = list(outputs)
    stack = [(v, False) for v in reversed(outputs)]
    while stack:
        var, ready = stack.pop()
        if var in values:
            continue
        if isinstance(var, Constant):
            values[var] = var.data
            continue
        node = var.owner
        if node is None:
            raise MissingValue(f"no value for {var.describe()}")
        if ready:
            _perform(node, values)
            continue
        stack.append((var, True))
        stack.extend((i, False) for i in node.inputs if i not in values)
    return [values[v] for v in outputs]


def _perform(node: Any, values: dict[Variable, Any]) -> None:
    # perform may overwrite the inputs it destroys, and views alias the memo's values.
    inputs = [snapshot(values[i]) for i in node.inputs]
    storage = [[None] for _ in node.outputs]
    perform_of(node)(node, inputs, storage)
    for out, cell in zip(node.outputs, storage):
        values[out] = cell[0]


def _state(value: Any) -> Any:
    """A random generator as its state (two generators are equal when their states are)."""
    if isinstance(value, np.random.RandomState):
        kind, keys, position, has_gauss, gauss = value.get_state()
        return (kind, keys.tobytes(), position, has_gauss, gauss)
    if isinstance(value, np.random.Generator):
        return repr(value.bit_generator.state)
    return value


def difference(expected: Any, actual: Any, allow_nonfinite_change: bool = False) -> str | None:
    """None when ``actual`` is ``expected`` (floats within tolerance, NaN where NaN is),
    else what differs. ``allow_nonfinite_change`` accepts any value where ``expected``
    is inf or NaN: a rewrite may make a numerically safer form finite there."""
    expected, actual = host(_state(expected)), host(_state(actual))
    arrays = (np.ndarray, np.generic)
    if isinstance(expected, arrays) and isinstance(actual, arrays):
        expected, actual = np.asarray(expected), np.asarray(actual)
    else:
        try:
            same = bool(expected == actual)
        except (TypeError, ValueError):
            same = expected is actual
        return None if same else f"expected {_short(expected)}, got {_short(actual)}"
    if expected.shape != actual.shape:
        return f"shape {actual.shape} where {expected.shape} was expected"
    if expected.dtype != actual.dtype:
        return f"dtype {actual.dtype} where {expected.dtype} was expected"
    if expected.dtype.kind not in "fc":
        wrong = expected != actual
    else:
        rtol, atol = TOLERANCE.get(expected.dtype.name, TOLERANCE["float64"])
        wrong = ~np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
        if allow_nonfinite_change:
            wrong &= np.isfinite(expected)
    if not wrong.any():
        return None
    where = tuple(int(i) for i in np.argwhere(wrong)[0])
    text = (f"{int(wrong.sum())} of {wrong.size} elements differ; the first at index {where}: "
            f"expected {expected[where]}, got {actual[where]}")
    if expected.dtype.kind in "fc":
        text += f" (largest difference {np.nanmax(np.abs(actual[wrong] - expected[wrong])):.6g})"
    return text


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:60] + "..." + text[-12:]
