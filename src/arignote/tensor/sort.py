"""``sort``, ``argsort`` and ``topk``/``argtopk``/``topk_and_argtopk`` (Theano's
``tensor.sort``): numpy's sorts and partitions along one axis.

``axis=None`` sorts the flattened input (a vector). The axis of ``sort`` and
``argsort`` may be a symbolic scalar, as in Theano; topk's is fixed when the graph
is built. The gradients of ``sort`` and ``topk`` send each output gradient
back to the position its value came from.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import FLOAT, INTEGER
from arignote.tensor import math as _math
from arignote.tensor.hostop import HostOp
from arignote.tensor.shape import checked_axis, product, static_value
from arignote.tensor.type import TensorType
from arignote.tensor.type_other import NoneConst, NoneTypeT
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["SortOp", "ArgSortOp", "TopKOp", "sort", "argsort", "topk", "argtopk", "topk_and_argtopk"]

_KINDS = ("quicksort", "mergesort", "heapsort", "stable")


class _SortBase(HostOp):
    """Theano's ``SortOp(kind, order)``, applied as ``op(a, axis)``: the axis is an input, a
    constant or an int scalar variable (a float one is accepted when integral, as Theano
    did), or ``NoneConst`` to sort the flattened ``a``."""

    __props__ = ("kind", "order")

    def __init__(self, kind: str = "quicksort", order: Any = None):
        if kind not in _KINDS:
            raise ValueError(f"{self.what}: kind must be one of {', '.join(_KINDS)}, got {kind!r}")
        if order is not None and len(order):
            raise ValueError(f"{self.what}: order= sorts structured arrays, which arignote does not have")
        self.kind = kind
        self.order = None

    what = "sort"
    out_dtype: str | None = None

    def make_node(self, a: Any, axis: Any = -1) -> Apply:
        a = as_tensor_variable(a)
        dtype = self.out_dtype or a.dtype
        if axis is None or isinstance(getattr(axis, "type", None), NoneTypeT):
            return Apply(self, [a, NoneConst], [TensorType(dtype, (False,))()])
        if a.ndim == 0:
            raise np.exceptions.AxisError(f"{self.what} of the scalar {a.describe()}: a scalar has no "
                                          "axis to sort along; pass axis=None")
        axis = as_tensor_variable(axis)
        if axis.ndim != 0 or axis.dtype not in INTEGER + FLOAT:
            raise TypeError(f"{self.what}: axis must be None or a scalar, got {axis.describe()} "
                            f"({axis.type.describe()})")
        value = static_value(axis)
        if value is not None:
            if value != int(value):
                raise TypeError(f"{self.what}: axis must be an integer, got {value}")
            axis = constant(np.int64(checked_axis(a, int(value), self.what)))
        return Apply(self, [a, axis], [TensorType(dtype, a.broadcastable)()])

    def run_axis(self, node: Apply, axis: Any) -> int | None:
        """The axis value at run time, checked (None: the flattened input)."""
        if axis is None:
            return None
        ndim = node.inputs[0].ndim
        if axis != int(axis) or not -ndim <= int(axis) < ndim:
            raise ValueError(f"{self.what}: axis {axis} is not an integer in [-{ndim}, {ndim}) for "
                             f"{node.inputs[0].describe()}")
        return int(axis)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        if isinstance(node.inputs[1].type, NoneTypeT):
            return [(product(list(input_shapes[0])),)]
        return [input_shapes[0]]


class SortOp(_SortBase):
    """``numpy.sort(a, axis, kind)``."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, axis = inputs
        output_storage[0][0] = np.sort(a, axis=self.run_axis(node, axis), kind=self.kind)


class ArgSortOp(_SortBase):
    """``numpy.argsort(a, axis, kind)``: int64 positions."""

    what = "argsort"
    out_dtype = "int64"

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, axis = inputs
        output_storage[0][0] = np.argsort(a, axis=self.run_axis(node, axis), kind=self.kind).astype("int64")


def sort(a: Any, axis: Any = -1, kind: str = "quicksort", order: Any = None) -> Variable:
    """``a`` sorted along ``axis`` (an int, an int scalar variable, or None: the flattened ``a``)."""
    return SortOp(kind, order)(a, axis)


def argsort(a: Any, axis: Any = -1, kind: str = "quicksort", order: Any = None) -> Variable:
    """The int64 positions that sort ``a`` along ``axis`` (None: the flattened ``a``)."""
    return ArgSortOp(kind, order)(a, axis)


class TopKOp(HostOp):
    """The ``|kth|`` largest entries along ``axis`` (``kth > 0``) or smallest (``kth < 0``):
    their values and/or int positions. ``sorted=True`` orders them from the most extreme
    (descending for the largest, ascending for the smallest); Theano refused
    ``sorted=True`` (its default) as not implemented. ``sorted=False`` leaves
    ``numpy.argpartition``'s order. Ties go to either of the equal entries."""

    __props__ = ("axis", "sorted", "idx_dtype", "return_values", "return_indices")

    def __init__(self, axis: int = -1, sorted: bool = True, idx_dtype: str = "int64",
                 return_values: bool = True, return_indices: bool = True):
        if not isinstance(axis, (int, np.integer)):
            raise TypeError(f"topk: axis must be an int, got {axis!r}")
        if idx_dtype not in INTEGER:
            raise TypeError(f"topk: idx_dtype must be an integer dtype, got {idx_dtype!r}")
        if not (return_values or return_indices):
            raise ValueError("topk: ask for the values, the indices or both")
        self.axis, self.sorted, self.idx_dtype = int(axis), bool(sorted), idx_dtype
        self.return_values, self.return_indices = bool(return_values), bool(return_indices)

    def make_node(self, x: Any, kth: Any) -> Apply:
        x, kth = as_tensor_variable(x), as_tensor_variable(kth)
        if x.ndim == 0:
            raise ValueError(f"topk of the scalar {x.describe()}: it needs an axis to choose along")
        checked_axis(x, self.axis, "topk")
        if kth.ndim != 0 or kth.dtype not in INTEGER:
            raise TypeError(f"topk: kth must be an integer scalar, got {kth.describe()} ({kth.type})")
        outs = ([x.type()] if self.return_values else []) + (
            [TensorType(self.idx_dtype, x.broadcastable)()] if self.return_indices else [])
        return Apply(self, [x, kth], outs)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, k = inputs[0], int(inputs[1])
        axis = self.axis % x.ndim
        n = x.shape[axis]
        if k == 0 or abs(k) > n:
            raise ValueError(f"topk of {node.inputs[0].describe()}: kth={k}, but axis {axis} has "
                             f"{n} entries; give 1 <= |kth| <= {n}")
        if abs(k) == n:
            positions = np.broadcast_to(np.arange(n).reshape((-1,) + (1,) * (x.ndim - axis - 1)), x.shape)
        elif k > 0:
            positions = np.take(np.argpartition(x, n - k, axis=axis), np.arange(n - k, n), axis=axis)
        else:
            positions = np.take(np.argpartition(x, -k - 1, axis=axis), np.arange(-k), axis=axis)
        values = np.take_along_axis(x, positions, axis=axis)
        if self.sorted:
            order = np.argsort(values, axis=axis, kind="stable")  # (negating would wrap unsigned ints)
            order = np.flip(order, axis=axis) if k > 0 else order
            positions = np.take_along_axis(positions, order, axis=axis)
            values = np.take_along_axis(values, order, axis=axis)
        results = ([values] if self.return_values else []) + (
            [positions.astype(self.idx_dtype)] if self.return_indices else [])
        for cell, value in zip(output_storage, results):
            cell[0] = np.ascontiguousarray(value)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = list(input_shapes[0])
        shape[self.axis % len(shape)] = _math.abs(_math.cast(node.inputs[1], "int64"))
        return [tuple(shape)] * len(node.outputs)


def _topk(x: Any, kth: Any, axis: Any, sorted: bool, idx_dtype: str, values: bool, indices: bool) -> Any:
    x = as_tensor_variable(x)
    if axis is None:  # Theano's rule: the flattened input
        x, axis = x.flatten(), 0
    return TopKOp(int(axis), sorted, idx_dtype, values, indices)(x, kth)


def topk(x: Any, kth: Any, axis: Any = -1, sorted: bool = True, idx_dtype: str = "int64") -> Variable:
    """The ``kth`` largest entries of ``x`` along ``axis`` (the ``-kth`` smallest for kth < 0)."""
    return _topk(x, kth, axis, sorted, idx_dtype, True, False)


def argtopk(x: Any, kth: Any, axis: Any = -1, sorted: bool = True, idx_dtype: str = "int64") -> Variable:
    """The positions along ``axis`` of ``topk``'s entries."""
    return _topk(x, kth, axis, sorted, idx_dtype, False, True)


def topk_and_argtopk(x: Any, kth: Any, axis: Any = -1, sorted: bool = True,
                     idx_dtype: str = "int64") -> list[Variable]:
    """``[topk(...), argtopk(...)]`` from one node."""
    return _topk(x, kth, axis, sorted, idx_dtype, True, True)
