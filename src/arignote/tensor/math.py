"""Elementwise functions, one per entry of the scalar table, plus cast and round."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from arignote.scalar import ops as scalar_ops
from arignote.scalar.dtypes import COMPLEX, DISCRETE
from arignote.scalar.ops import TABLE, Cast, ScalarOp
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.variable import as_tensor_variable

_ELEMWISE: dict[str, Elemwise] = {name: Elemwise(op) for name, op in TABLE.items()}


class ElemwiseFunction(Elemwise):
    """A scalar-table entry under its tensor name, as Theano had it: the Elemwise op itself
    (``str(T.add)`` is ``Elemwise{add,no_inplace}``, ``node.op == T.add`` holds for the node
    of an addition, ``T.add.scalar_op`` is the scalar op), called on tensors. An associative
    binary op takes any number of arguments, applied left to right (one argument: its
    value, an ``identity`` node). The nodes it builds
    hold the plain Elemwise op, so graphs are the same whichever way they were built.
    ``name`` is the printed name of an in-place form (``add_inplace``, as Theano printed
    those)."""

    def __init__(self, scalar_op: ScalarOp, inplace_pattern: dict[int, int] | None = None,
                 name: str | None = None):
        super().__init__(scalar_op, inplace_pattern)
        self.plain = Elemwise(scalar_op, inplace_pattern)
        self.__name__ = self.__qualname__ = name or scalar_op.name
        self.display = name
        self.__doc__ = f"Elementwise {scalar_op.name}, with numpy broadcasting" + (
            ", written into its first input." if inplace_pattern else ".")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.inplace_pattern or not (self.scalar_op.associative and self.scalar_op.nin == 2):
            return self.plain(*args, **kwargs)
        if not args:
            raise TypeError(f"{self.__name__} needs at least 1 input, got none")
        if len(args) == 1:  # Theano's one-term sum or product: the term, as a new variable
            return _ELEMWISE["identity"](args[0], **kwargs)
        result = self.plain(args[0], args[1])
        for arg in args[2:]:
            result = self.plain(result, arg)
        return result

    def grad(self, inputs: list, output_grads: list) -> list:
        """Theano's ``Op.grad``, also for more inputs than two of an associative op
        (``T.add.grad([x, y, z], [g])``): the gradients through the chain it builds."""
        if len(inputs) <= self.scalar_op.nin or self.inplace_pattern:
            return super().grad(inputs, output_grads)
        from arignote.gradient import backpropagate
        from arignote.graph.types import disconnected_type
        inputs = [as_tensor_variable(i) for i in inputs]
        grads = backpropagate({self(*inputs): output_grads[0]}, inputs, consider_constant=inputs)
        return [grads.get(x) or disconnected_type() for x in inputs]

    def __str__(self) -> str:
        return self.display or super().__str__()

    def __eq__(self, other: object) -> bool:
        # Answers for ``plain_op == T.add`` too: a subclass's __eq__ is tried first.
        return other is self or (isinstance(other, Elemwise) and other._props() == self._props())

    def __hash__(self) -> int:
        return hash(self.plain)

    def __reduce__(self) -> tuple:
        if self.display is None and _FUNCTIONS.get(self.scalar_op.name) is self:
            return _table_function, (self.scalar_op.name,)
        return type(self), (self.scalar_op, dict(self.inplace_pattern), self.display)


def _table_function(name: str) -> ElemwiseFunction:
    return _FUNCTIONS[name]


class KnownForIntegers(ElemwiseFunction):
    """``isnan`` and ``isinf`` as Theano's functions: of integers and bools (which are never
    NaN or infinite) an all-False allocation of the input's shape, which never reads it; of
    floats and complex numbers the elementwise test. Theano's ``isnan_``/``isinf_`` are the
    elementwise ops themselves, for any dtype."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs:
            x = as_tensor_variable(args[0])
            if x.dtype in DISCRETE:
                from arignote.tensor.alloc import alloc
                # x.shape[d], 1 or not, so the result still reads x (Theano's a.shape[i]).
                return alloc(np.asarray(False), *[x.shape[d] for d in range(x.ndim)])
        return super().__call__(*args, **kwargs)


_KNOWN_FOR_INTEGERS = ("isnan", "isinf")
_FUNCTIONS: dict[str, ElemwiseFunction] = {
    name: (KnownForIntegers if name in _KNOWN_FOR_INTEGERS else ElemwiseFunction)(op)
    for name, op in TABLE.items()}
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
isnan_, isinf_ = (ElemwiseFunction(TABLE[name]) for name in _KNOWN_FOR_INTEGERS)


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
                               "power", "sign", "reciprocal", "isnan_", "isinf_"})
del builtins, scalar_ops
