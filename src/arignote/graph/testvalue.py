"""Test values: graphs evaluated on sample data while they are built.

With ``config.compute_test_value`` other than ``'off'``, each node an Op
builds (``Op.__call__``) runs its ``perform`` on its inputs' test values
(``x.tag.test_value``, a constant's data, a shared variable's value) at once,
so a shape error is raised by the line that built the node, not later by a
compiled call. ``'ignore'`` skips nodes with an input that has no test value,
``'warn'`` warns about them and ``'raise'`` refuses them (Theano's semantics).
A test value is checked against its variable's type when it is assigned.
Under ``'off'`` (the default) nothing here runs.
"""
from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np

from arignote.config import config


class TestValueError(AttributeError, ValueError):
    """A variable that a node needs has no test value (``compute_test_value='raise'``); a
    ValueError, as Theano raised then, and an AttributeError, as a missing tag entry is."""

    __test__ = False  # not a test class, whatever pytest thinks of the name


class Tag(SimpleNamespace):
    """A variable's scratchpad (``var.tag``); ``tag.test_value = v`` is checked by the type
    when it is set, or, while test values are off, when it is used (Theano stores it as
    given then, and legacy code sets values it never uses)."""

    __slots__ = ("_type",)

    def __init__(self, var_type: Any = None, **values: Any):
        object.__setattr__(self, "_type", var_type)
        super().__init__(**values)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "test_value" and getattr(self, "_type", None) is not None:
            try:
                value = _fit(self._type, value)
            except TypeError:
                if config.compute_test_value != "off":
                    raise
        super().__setattr__(name, value)

    def __reduce__(self) -> tuple:
        return (type(self), (getattr(self, "_type", None),), dict(vars(self)))


def _fit(var_type: Any, value: Any) -> Any:
    try:
        return var_type.filter(value)
    except NotImplementedError:
        return value  # a type that cannot check values takes them as they are
    except TypeError as err:
        raise TypeError(f"this test value cannot be a value of the variable's type {var_type}: "
                        f"{err}") from None


def compute(node: Any) -> None:
    """Run ``node``'s perform on its inputs' test values; store the outputs' test values."""
    where = getattr(node.outputs[0].tag, "trace", None) if node.outputs else None
    values = []
    for var in node.inputs:
        try:
            values.append(_fit(var.type, var.get_test_value()))
        except TestValueError as err:
            message = f"cannot compute the test value of {node.op}: {err}"
            if config.compute_test_value == "raise":
                raise TestValueError(message + ", or set config.compute_test_value='ignore'"
                                     ) from None
            if config.compute_test_value == "warn":
                from arignote.graph.basic import user_stacklevel  # the module that calls this one
                warnings.warn(message, stacklevel=user_stacklevel())
            return
    destroyed = {i for idxs in node.op.destroy_map.values() for i in idxs}
    values = [v.copy() if i in destroyed else v for i, v in enumerate(values)]
    storage = [[None] for _ in node.outputs]
    try:
        from arignote.graph.basic import perform_of
        with np.errstate(all="ignore"):  # inf and nan silently, as in a call (compile/fperrors.py)
            perform_of(node)(node, values, storage)
    except Exception as err:
        shapes = ", ".join(str(getattr(v, "shape", type(v).__name__)) for v in values)
        if hasattr(err, "add_note"):
            err.add_note(f"while computing the test value of {node.op} on inputs of shapes "
                         f"{shapes}: the node was being built at {where or 'an unknown line'} "
                         f"(config.compute_test_value={config.compute_test_value!r})")
        raise
    for out, cell in zip(node.outputs, storage):
        out.tag.test_value = cell[0]


def get_debug_values(*args: Any) -> list:
    """Theano's ``gof.op.get_debug_values``: a loop over the test values of ``args`` that runs
    only while test values are on. ``[value]`` for one argument, ``[(v1, v2, ...)]`` for
    several (numbers and arrays stand for themselves); ``[]`` when ``compute_test_value`` is
    off, or when one is missing under ``'ignore'`` (and ``'warn'``, with a warning); a
    missing value raises TestValueError under ``'raise'``. Debugging code written as
    ``for x_val, y_val in get_debug_values(x, y):`` thus costs nothing once test values are off."""
    mode = config.compute_test_value
    if mode == "off":
        return []
    values = []
    for k, arg in enumerate(args):
        try:
            values.append(arg.get_test_value() if hasattr(arg, "get_test_value") else arg)
        except TestValueError as err:
            if mode == "raise":
                raise TestValueError(f"get_debug_values: argument {k} ({arg}) has no test value: {err}") from None
            if mode == "warn":
                from arignote.graph.basic import user_stacklevel
                warnings.warn(f"get_debug_values: argument {k} ({arg}) has no test value, so the debugging "
                              "code that loops over its values does not run", stacklevel=user_stacklevel())
            return []
    return values if len(values) == 1 else [tuple(values)]


def debug_error_message(msg: str) -> None:
    """Theano's report of a problem a test value revealed: a ValueError with ``msg`` under
    ``compute_test_value`` ``'raise'`` and ``'ignore'``, a warning under ``'warn'`` (its
    callers run only while test values are on)."""
    if config.compute_test_value == "warn":
        from arignote.graph.basic import user_stacklevel
        warnings.warn(msg, stacklevel=user_stacklevel())
        return
    raise ValueError(msg)
