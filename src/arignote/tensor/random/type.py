"""The type of a random generator's state, and shared variables holding one.

A draw is an Op that reads a ``numpy.random.RandomState`` and returns the
advanced state as a second output; the state lives in a shared variable whose
``default_update`` is that output, so each call of a compiled function moves
the stream on. States are Python objects, not arrays, so copying and aliasing
follow their own rules here: a copy is a new generator in the same state.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.compile.sharedvalue import SharedVariable, shared_constructor
from arignote.graph.basic import Type, Variable


class _OpaqueShape:
    """A state has no array shape; shape inference sees it as a scalar (``ndim`` 0)."""

    ndim = 0
    broadcastable: tuple = ()


class RandomStateVariable(_OpaqueShape, Variable):
    """A generator state in a graph: an input of each draw and its second output."""


class RandomStateType(Type):
    """Values are ``numpy.random.RandomState`` instances (the legacy MT19937 streams)."""

    variable_type = RandomStateVariable

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None,
               name: str = "the value", relax: str | None = None) -> np.random.RandomState:
        if type(value) is np.random.RandomState:
            return value
        raise TypeError(f"{name} must be a numpy.random.RandomState, got {type(value).__name__}: "
                        "make one with numpy.random.RandomState(seed)")

    def values_eq(self, a: np.random.RandomState, b: np.random.RandomState) -> bool:
        sa, sb = a.get_state(legacy=False), b.get_state(legacy=False)
        return (sa["state"]["pos"] == sb["state"]["pos"]
                and np.array_equal(sa["state"]["key"], sb["state"]["key"])
                and sa["has_gauss"] == sb["has_gauss"]
                and (not sa["has_gauss"] or sa["gauss"] == sb["gauss"]))

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "RandomStateType"

    __repr__ = __str__


random_state_type = RandomStateType()


def copy_state(rng: np.random.RandomState) -> np.random.RandomState:
    """A new generator in the same state; drawing from it leaves ``rng`` as it was."""
    new = np.random.RandomState(0)
    new.set_state(rng.get_state(legacy=False))
    return new


class RandomStateSharedVariable(_OpaqueShape, SharedVariable):
    """A shared ``RandomState``; ``get_value``/``set_value`` copy unless ``borrow=True``."""

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> Any:
        value = self.storage[0]
        return value if borrow else copy_state(value)

    def set_value(self, value: Any, borrow: bool = False) -> None:
        new = self._filter(value)
        self._assign(new if borrow else copy_state(new))

    def zero(self, borrow: bool = False) -> None:
        raise TypeError(f"shared variable {self.describe()} holds a random state, which has no "
                        "zero: reseed it with set_value(numpy.random.RandomState(seed))")


@shared_constructor
def random_state_constructor(value: Any, name: str | None = None, strict: bool = False,
                             allow_downcast: bool | None = None, borrow: bool = False,
                             **array_options: Any) -> RandomStateSharedVariable | None:
    """``shared(numpy.random.RandomState(seed))``: copied unless ``borrow=True``."""
    if type(value) is not np.random.RandomState:
        return None
    if array_options:
        raise TypeError(f"shared(): {', '.join(array_options)} apply to arrays, not to a "
                        "random state: leave them out")
    return RandomStateSharedVariable(random_state_type, value if borrow else copy_state(value),
                                     name=name, strict=strict, allow_downcast=allow_downcast)
