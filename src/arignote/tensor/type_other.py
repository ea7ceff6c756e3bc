"""``tensor.type_other``: Theano's non-array types of indexing, slices and None.

``make_slice(start, stop, step)`` builds a ``slice`` value in the graph from int
scalars and None (``NoneConst``), as Theano's advanced indexing did; indexing a
tensor with such a variable (``x[make_slice(0, n)]``) is indexing it with the
slice of those parts. ``SliceConstant`` is a constant slice; ``NoneTypeT`` the
type whose only value is None.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Op, Type, Variable
from arignote.graph.types import Generic
from arignote.scalar.dtypes import INTEGER
from arignote.tensor.variable import as_tensor_variable

__all__ = ["SliceType", "slicetype", "SliceConstant", "MakeSlice", "make_slice", "SliceIndices", "NoneTypeT",
           "none_type_t", "NoneConst", "as_int_none_variable"]


class NoneTypeT(Generic):
    """The type of None (a missing slice bound)."""

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None,
               **_: Any) -> None:
        if value is not None:
            raise TypeError(f"a NoneTypeT variable holds only None, got {value!r}")
        return None

    def is_valid_value(self, value: Any) -> bool:
        return value is None

    def __hash__(self) -> int:
        return hash(NoneTypeT)

    def __str__(self) -> str:
        return "NoneTypeT"

    __repr__ = __str__


none_type_t = NoneTypeT()
NoneConst = Constant(none_type_t, None, name="NoneConst")


def _bound(value: Any) -> Any:
    return None if value is None else int(value)


class SliceType(Type):
    """The type of Python ``slice`` objects."""

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None,
               **_: Any) -> slice:
        if not isinstance(value, slice):
            raise TypeError(f"a SliceType variable holds a slice, got {type(value).__name__} {value!r}")
        return value

    def is_valid_value(self, value: Any) -> bool:
        return isinstance(value, slice)

    def values_eq(self, a: Any, b: Any) -> bool:
        return a == b

    def make_constant(self, value: Any, name: str | None = None) -> Constant:
        return SliceConstant(self, value, name)

    def index_slice(self, var: Variable) -> slice | None:
        """The Python slice (of int scalar variables, ints and None) that indexing with
        ``var`` means, when the graph says (a constant or a ``make_slice``); None for a slice
        known only at run time (an input), which indexing reads through ``SliceIndices``."""
        if isinstance(var, Constant):
            return var.data
        if var.owner is not None and isinstance(var.owner.op, MakeSlice):
            return slice(*(None if isinstance(v.type, NoneTypeT) else v for v in var.owner.inputs))
        return None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(SliceType)

    def __str__(self) -> str:
        return "slice"

    __repr__ = __str__


slicetype = SliceType()


class SliceConstant(Constant):
    """A constant slice; its bounds are stored as ints (or None), so equal slices merge."""

    def __init__(self, type: SliceType, data: slice, name: str | None = None):
        data = type.filter(data)
        super().__init__(type, slice(_bound(data.start), _bound(data.stop), _bound(data.step)), name)

    def signature(self) -> tuple:
        return (self.type, self.data.start, self.data.stop, self.data.step)

    def __str__(self) -> str:
        return self.name or f"slice({self.data.start}, {self.data.stop}, {self.data.step})"


def as_int_none_variable(x: Any) -> Variable:
    """``x`` as an int scalar variable, or ``NoneConst`` for None."""
    if x is None or isinstance(getattr(x, "type", None), NoneTypeT):
        return NoneConst
    var = as_tensor_variable(x)
    if var.ndim != 0 or var.dtype not in INTEGER:
        raise TypeError(f"a slice bound must be None or an integer scalar, got {var.describe()} "
                        f"({var.type.describe()})")
    return var


class MakeSlice(Op):
    """``slice(start, stop, step)`` of int scalars and None."""

    __props__ = ()

    def make_node(self, slc: Any, stop: Any = None, step: Any = None) -> Apply:
        parts = (slc.start, slc.stop, slc.step) if isinstance(slc, slice) else (slc, stop, step)
        return Apply(self, [as_int_none_variable(p) for p in parts], [slicetype()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = slice(*(None if v is None else np.asarray(v).item() for v in inputs))

    def grad(self, inputs: list, output_grads: list) -> list:
        return [None for _ in inputs]


make_slice = MakeSlice()


class SliceIndices(Op):
    """The int64 ``(start, stop, step)`` that the slice ``slc`` selects on an axis of ``length``
    (``slice.indices``), so that a slice known only at run time (a ``slicetype()`` input) indexes
    as a slice of int scalars. A stop before the first element (a negative step run to the start)
    is written ``-length - 1``, which slicing reads as that and not as "the last element"."""

    __props__ = ()

    def make_node(self, slc: Any, length: Any) -> Apply:
        from arignote.tensor.type import TensorType
        length = as_tensor_variable(length)
        if not isinstance(getattr(slc, "type", None), SliceType):
            raise TypeError(f"SliceIndices takes a slice variable, got {slc!r}")
        if length.ndim != 0 or length.dtype not in INTEGER:
            raise TypeError(f"SliceIndices: the axis length must be an integer scalar, got "
                            f"{length.describe()} ({length.type.describe()})")
        return Apply(self, [slc, length], [TensorType("int64", ())() for _ in range(3)])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        slc, length = inputs[0], int(inputs[1])
        start, stop, step = slc.indices(length)
        if stop < 0:
            stop -= length
        for cell, value in zip(output_storage, (start, stop, step)):
            cell[0] = np.asarray(value, dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(), (), ()]

    def grad(self, inputs: list, output_grads: list) -> list:
        return [None for _ in inputs]
