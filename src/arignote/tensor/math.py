"""Elementwise functions, one per entry of the scalar table, plus cast and round."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from arignote.scalar import ops as scalar_ops
from arignote.scalar.dtypes import COMPLEX
from arignote.scalar.ops import TABLE, Cast, ScalarOp
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.variable import as_tensor_variable

_ELEMWISE: dict[str, Elemwise] = {name: Elemwise(op) for name, op in TABLE.items()}


class ElemwiseFunction(Elemwise):
    """A scalar-table entry under its tensor name, as Theano had it: the Elemwise op itself
    (``str(T.add)`` is ``Elemwise{add,no_inplace}``, ``node.op == T.add`` holds for the node
    of an addition, ``T.add.scalar_op`` is the scalar op), called on tensors. An associative
    binary op takes any number of arguments, applied left to right. The nodes it builds
    hold the plain Elemwise op, so graphs are the same whichever way they were built."""

    def __init__(self, scalar_op: ScalarOp):
        super().__init__(scalar_op)
        self.__name__ = self.__qualname__ = scalar_op.name
        self.__doc__ = f"Elementwise {scalar_op.name}, with numpy broadcasting."

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        op = _ELEMWISE[self.scalar_op.name]
        if not (self.scalar_op.associative and self.scalar_op.nin == 2):
            return op(*args, **kwargs)
        if len(args) < 2:
            raise TypeError(f"{self.__name__} needs at least 2 inputs, got {len(args)}")
        result = op(args[0], args[1])
        for arg in args[2:]:
            result = op(result, arg)
        return result

    def __eq__(self, other: object) -> bool:
        # Answers for ``plain_op == T.add`` too: a subclass's __eq__ is tried first.
        return other is self or (isinstance(other, Elemwise) and other._props() == self._props())

    def __hash__(self) -> int:
        return hash(_ELEMWISE[self.scalar_op.name])

    def __reduce__(self) -> tuple:
        return _table_function, (self.scalar_op.name,)


def _table_function(name: str) -> ElemwiseFunction:
    return _FUNCTIONS[name]


_FUNCTIONS: dict[str, ElemwiseFunction] = {name: ElemwiseFunction(op) for name, op in TABLE.items()}
globals().update(_FUNCTIONS)

# Theano's other spellings of the same operations.
abs_ = globals()["abs"]
where = globals()["switch"]
true_divide = globals()["true_div"]
floor_div = globals()["int_div"]
tensor_copy = globals()["identity"]
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = and_, or_, xor, invert  # noqa: F821
power = globals()["pow"]
sign = globals()["sgn"]
reciprocal = globals()["inv"]


def cast(x: Any, dtype: str) -> Any:
    """``x`` converted to ``dtype`` (no node when it already has that dtype)."""
    from arignote.config import config
    x = as_tensor_variable(x)
    dtype = config.floatX if dtype == "floatX" else np.dtype(dtype).name
    if x.dtype == dtype:
        return x
    if x.dtype in COMPLEX and dtype not in COMPLEX:
        raise TypeError(f"cannot cast complex {x.describe()} to {dtype}: dropping the imaginary part "
                        "silently is rarely wanted; take real(x), imag(x) or abs(x) first")
    return Elemwise(Cast(dtype))(x)


def round(a: Any, mode: str | None = None) -> Any:  # noqa: A001 - Theano's name
    """Round to the nearest integer; ``mode`` is ``half_away_from_zero`` (default) or ``half_to_even``."""
    mode = mode or "half_away_from_zero"
    if mode == "half_away_from_zero":
        return round_half_away_from_zero(a)  # noqa: F821
    if mode == "half_to_even":
        return round_half_to_even(a)  # noqa: F821
    raise ValueError(f"round mode {mode!r} is not 'half_away_from_zero' or 'half_to_even'")


def elemwise_of(name: str) -> Elemwise:
    """The Elemwise op of a scalar-table entry (for rewrites and tests)."""
    return _ELEMWISE[name]


__all__ = sorted(set(TABLE) | {"abs_", "where", "true_divide", "floor_div", "tensor_copy", "cast",
                               "round", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
                               "power", "sign", "reciprocal"})
del builtins, scalar_ops
