"""Diagonals: ``diagonal`` (``ExtractDiag``), ``diag`` and ``AllocDiag``, as Theano's ``tensor`` had them.

``ExtractDiag(offset, axis1, axis2)`` is ``numpy.diagonal`` (a copy, or a view
with ``view=True``); ``AllocDiag(offset, axis1, axis2)`` is its inverse: it puts
the last axis of its input on a diagonal of two new axes, zeros elsewhere.
Their gradients (each other's) are in ``tensor/grad/linalg.py``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.tensor import math as _math
from arignote.tensor.hostop import HostOp
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["ExtractDiag", "AllocDiag", "diagonal", "diag"]


class ExtractDiag(HostOp):
    """``numpy.diagonal(x, offset, axis1, axis2)``: the two axes go, the diagonal comes last."""

    __props__ = ("offset", "axis1", "axis2", "view")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1, view: bool = False):
        if axis1 == axis2:
            raise ValueError(f"diagonal: axis1 and axis2 must differ, got {axis1} twice")
        self.offset, self.axis1, self.axis2, self.view = int(offset), int(axis1), int(axis2), bool(view)
        self.view_map = {0: [0]} if self.view else {}

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.ndim < 2:
            raise ValueError(f"diagonal of {x.describe()}: it needs at least 2 dimensions, got {x.ndim}")
        for axis in (self.axis1, self.axis2):
            if not -x.ndim <= axis < x.ndim:
                raise np.exceptions.AxisError(f"diagonal: axis {axis} is out of range for "
                                              f"{x.describe()} ({x.ndim}-d)")
        return Apply(self, [x], [TensorType(x.dtype, (False,) * (x.ndim - 1))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        d = np.diagonal(inputs[0], self.offset, self.axis1, self.axis2)
        output_storage[0][0] = d if self.view else d.copy()

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = input_shapes[0]
        a1, a2 = self.axis1 % len(shape), self.axis2 % len(shape)
        n1, n2 = shape[a1], shape[a2]
        # numpy's diagonal length: the rows left after the offset, clipped to [0, the other length].
        if self.offset >= 0:
            length = _math.clip(_math.sub(n2, self.offset), 0, n1)
        else:
            length = _math.clip(_math.add(n1, self.offset), 0, n2)
        rest = [d for k, d in enumerate(shape) if k not in (a1, a2)]
        return [tuple(rest) + (_math.cast(length, "int64"),)]


class AllocDiag(HostOp):
    """An array of zeros whose diagonal ``offset`` over axes ``axis1``/``axis2`` (taken in
    increasing order) holds the last axis of the input: ``AllocDiag()(v)`` is ``numpy.diag(v)``."""

    __props__ = ("offset", "axis1", "axis2")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1):
        if axis1 == axis2:
            raise ValueError(f"AllocDiag: axis1 and axis2 must differ, got {axis1} twice")
        self.offset, self.axis1, self.axis2 = int(offset), int(axis1), int(axis2)

    def make_node(self, d: Any) -> Apply:
        d = as_tensor_variable(d)
        if d.ndim < 1:
            raise ValueError(f"AllocDiag of {d.describe()}: it needs at least one dimension")
        if max(self.axis1, self.axis2) > d.ndim:
            raise np.exceptions.AxisError(f"AllocDiag: axes {self.axis1}, {self.axis2} do not fit a "
                                          f"{d.ndim + 1}-d result")
        return Apply(self, [d], [TensorType(d.dtype, (False,) * (d.ndim + 1))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        d = inputs[0]
        n = d.shape[-1] + abs(self.offset)
        out = np.zeros(d.shape[:-1] + (n, n), dtype=d.dtype)
        k = np.arange(d.shape[-1])
        out[..., k + max(-self.offset, 0), k + max(self.offset, 0)] = d
        # The two new axes are last; move them to axis1 < axis2.
        low, high = sorted((self.axis1, self.axis2))
        output_storage[0][0] = np.moveaxis(out, (-2, -1), (low, high))

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = list(input_shapes[0])
        n = _math.cast(_math.add(shape[-1], abs(self.offset)), "int64")
        low, high = sorted((self.axis1, self.axis2))
        rest = shape[:-1]
        rest.insert(low, n)
        rest.insert(high, n)
        return [tuple(rest)]


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """The diagonal ``offset`` of ``a`` over ``axis1``/``axis2`` (``numpy.diagonal``)."""
    return ExtractDiag(offset, axis1, axis2)(a)


def diag(v: Any, k: int = 0) -> Variable:
    """``numpy.diag``: the matrix with the vector ``v`` on diagonal ``k``, or the diagonal
    ``k`` of ``v`` when it has 2 or more dimensions."""
    v = as_tensor_variable(v)
    if v.ndim == 1:
        return AllocDiag(k)(v)
    if v.ndim >= 2:
        return diagonal(v, offset=k)
    raise ValueError(f"diag of the scalar {v.describe()}: give a vector or a matrix")
