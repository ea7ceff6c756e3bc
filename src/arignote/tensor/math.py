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


def _function(op: ScalarOp):
    elemwise = _ELEMWISE[op.name]
    if op.associative and op.nin == 2:
        def apply(*args: Any):
            if len(args) < 2:
                raise TypeError(f"{op.name} needs at least 2 inputs, got {len(args)}")
            result = elemwise(args[0], args[1])
            for arg in args[2:]:
                result = elemwise(result, arg)
            return result
    else:
        def apply(*args: Any):
            return elemwise(*args)
    apply.__name__ = op.name
    apply.__qualname__ = op.name
    apply.__doc__ = f"Elementwise {op.name}, with numpy broadcasting."
    return apply


for _name, _op in TABLE.items():
    globals()[_name] = _function(_op)

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
