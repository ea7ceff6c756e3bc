"""In and Out: how a compiled function treats each input and output's memory."""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Variable


class In:
    """An input of a compiled function, with its memory contract (Theano's ``In``).

    ``value`` makes the argument optional; ``update`` is an expression whose
    result becomes the stored value after each call (Theano's implicit state);
    ``value`` may be another function's ``container[...]``, whose cell the two
    functions then share. ``mutable=True`` (the default when there is an
    update) lets the function overwrite the array it is given; ``borrow=True``
    (the default: ``mutable``) lets outputs alias it. Without either, the
    caller's array is never changed and never returned. An ``implicit`` input
    (the default for a shared container value) takes no argument.
    """

    def __init__(self, variable: Variable, name: str | None = None, value: Any = None,
                 update: Variable | None = None, mutable: bool | None = None, strict: bool = False,
                 allow_downcast: bool | None = None, autoname: bool = True, implicit: bool | None = None,
                 borrow: bool | None = None, shared: bool = False):
        if not isinstance(variable, Variable):
            raise TypeError(f"In() takes a symbolic variable, got {type(variable).__name__} {variable!r}: "
                            "wrap the input variable, e.g. In(tensor.vector('x'))")
        if name is None and autoname:
            name = variable.name
        if name is not None and not isinstance(name, str):
            raise TypeError(f"In({variable}): name must be a string, got {type(name).__name__} {name!r}")
        if update is not None:
            update = _as_update_of(variable, update)
        self.variable = variable
        self.name = name
        self.value = value
        self.update = update
        self.mutable = (update is not None) if mutable is None else bool(mutable)
        self.mutable_given = mutable is not None  # In(x, mutable=False) keeps x unchanged
        self.borrow = self.mutable if borrow is None else bool(borrow)
        if self.mutable and not self.borrow:
            raise AssertionError(f"In({variable}): mutable=True with borrow=False cannot hold: an input "
                                 "the function may overwrite may also be aliased by its outputs")
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.implicit = is_container(value) if implicit is None else bool(implicit)
        if self.implicit and value is None:
            raise TypeError(f"In({variable}): an implicit input needs a value (implicit inputs take "
                            "no argument)")
        self.shared = shared

    def __repr__(self) -> str:
        return f"In({self.variable})" if self.update is None else f"In({self.variable} -> {self.update})"


def is_container(value: Any) -> bool:
    """Whether ``value`` is a cell another function (or a shared variable) owns."""
    return hasattr(value, "storage") and hasattr(value, "value")


def _as_update_of(variable: Variable, update: Any) -> Variable:
    """``update`` as a variable of ``variable``'s type: a number or array becomes a constant of
    it; a variable of another type is an error (Theano's rule)."""
    if not isinstance(update, Variable):
        return variable.type.make_constant(variable.type.filter(update, allow_downcast=True))
    if update.type != variable.type:
        raise TypeError(f"In({variable}, update=...): the update is {update.type} but the variable is "
                        f"{variable.type}: an update must have the variable's type (cast it, or fix the "
                        "expression)")
    return update


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
