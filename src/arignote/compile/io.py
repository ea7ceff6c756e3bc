"""In and Out: how a compiled function treats each input and output's memory."""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Variable


class In:
    """An input of a compiled function, with its memory contract.

    ``value`` makes the argument optional; ``update`` (needs ``value``) is an
    expression whose result becomes the stored value after each call, Theano's
    implicit state. ``mutable=True`` lets the function overwrite the caller's
    array; ``borrow=True`` lets outputs alias it. Without either, the caller's
    array is never changed and never returned.
    """

    def __init__(self, variable: Variable, name: str | None = None, value: Any = None,
                 update: Variable | None = None, mutable: bool = False, borrow: bool | None = None,
                 strict: bool = False, allow_downcast: bool | None = None):
        if not isinstance(variable, Variable):
            raise TypeError(f"In() takes a symbolic variable, got {type(variable).__name__} {variable!r}: "
                            "wrap the input variable, e.g. In(tensor.vector('x'))")
        if update is not None and value is None:
            raise ValueError(f"In({variable}, update=...) needs value=: the state the first call reads")
        self.variable = variable
        self.name = name if name is not None else variable.name
        self.value = value
        self.update = update
        self.mutable = mutable
        self.borrow = mutable if borrow is None else borrow
        self.strict = strict
        self.allow_downcast = allow_downcast

    def __repr__(self) -> str:
        return f"In({self.variable})"


class Out:
    """An output; ``borrow=True`` returns the internal buffer, which the next call overwrites."""

    def __init__(self, variable: Variable, borrow: bool = False):
        if not isinstance(variable, Variable):
            raise TypeError(f"Out() takes a symbolic variable, got {type(variable).__name__} {variable!r}: "
                            "wrap an output expression, e.g. Out(x * 2)")
        self.variable = variable
        self.borrow = borrow

    def __repr__(self) -> str:
        return f"Out({self.variable}, borrow={self.borrow})"
