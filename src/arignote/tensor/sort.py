"""``sort`` and ``argsort`` (Theano's ``tensor.sort``): numpy's sorts along one axis.

``axis=None`` sorts the flattened input (a vector). The axis is fixed when the
graph is built. The gradient of ``sort`` (``tensor/grad/sort.py``) sends each
output gradient back to the position its value came from.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.tensor.hostop import HostOp
from arignote.tensor.shape import checked_axis, product, static_value
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["SortOp", "ArgSortOp", "sort", "argsort"]

_KINDS = ("quicksort", "mergesort", "heapsort", "stable")


class _SortBase(HostOp):
    __props__ = ("kind", "axis")

    def __init__(self, kind: str = "quicksort", axis: int | None = -1, order: Any = None):
        if kind not in _KINDS:
            raise ValueError(f"{self.what}: kind must be one of {', '.join(_KINDS)}, got {kind!r}")
        if order is not None:
            raise ValueError(f"{self.what}: order= sorts structured arrays, which arignote does not have")
        self.kind = kind
        self.axis = None if axis is None else int(axis)

    what = "sort"
    out_dtype: str | None = None

    def make_node(self, a: Any) -> Apply:
        a = as_tensor_variable(a)
        dtype = self.out_dtype or a.dtype
        if self.axis is None:
            return Apply(self, [a], [TensorType(dtype, (False,))()])
        if a.ndim == 0:
            raise np.exceptions.AxisError(f"{self.what} of the scalar {a.describe()}: a scalar has no "
                                          "axis to sort along; pass axis=None")
        checked_axis(a, self.axis, self.what)
        return Apply(self, [a], [TensorType(dtype, a.broadcastable)()])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        if self.axis is None:
            return [(product(list(input_shapes[0])),)]
        return [input_shapes[0]]


class SortOp(_SortBase):
    """``numpy.sort(a, axis, kind)``."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.sort(inputs[0], axis=self.axis, kind=self.kind)


class ArgSortOp(_SortBase):
    """``numpy.argsort(a, axis, kind)``: int64 positions."""

    what = "argsort"
    out_dtype = "int64"

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.argsort(inputs[0], axis=self.axis, kind=self.kind).astype("int64")


def sort(a: Any, axis: Any = -1, kind: str = "quicksort", order: Any = None) -> Variable:
    """``a`` sorted along ``axis`` (None: the flattened ``a``)."""
    return SortOp(kind, _axis(axis, "sort"), order)(a)


def argsort(a: Any, axis: Any = -1, kind: str = "quicksort", order: Any = None) -> Variable:
    """The int64 positions that sort ``a`` along ``axis`` (None: the flattened ``a``)."""
    return ArgSortOp(kind, _axis(axis, "argsort"), order)(a)


def _axis(axis: Any, what: str) -> int | None:
    """A Python int, None, or a symbolic constant holding one (Theano passed axes as tensors)."""
    if axis is None or isinstance(axis, (int, np.integer)):
        return axis
    value = static_value(axis) if isinstance(axis, Variable) else None
    if value is None or np.ndim(value) != 0:
        raise TypeError(f"{what}: axis must be an int or None fixed when the graph is built, got {axis!r}")
    return int(value)
