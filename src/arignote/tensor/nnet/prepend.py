"""Theano's ops that prepend a scalar to each row of a matrix (a bias column).

``Prepend_scalar_constant_to_each_row(val)`` holds its scalar; ``Prepend_scalar_to_each_row``
takes it as a first input, so it can be a variable (and gets a gradient).
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.tensor.hostop import HostOp
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["Prepend_scalar_constant_to_each_row", "Prepend_scalar_to_each_row",
           "prepend_scalar_to_each_row", "prepend_0_to_each_row", "prepend_1_to_each_row"]


def _matrix(mat: Any, what: str) -> Variable:
    mat = as_tensor_variable(mat)
    if mat.ndim != 2:
        raise TypeError(f"{what}: expected a matrix, got {mat.describe()} ({mat.type.describe()})")
    return mat


def _widened(mat: Variable) -> Variable:
    """An output of ``mat``'s dtype with one more column (never broadcastable)."""
    return TensorType(mat.dtype, (mat.broadcastable[0], False))()


def _prepend(val: Any, mat: np.ndarray) -> np.ndarray:
    out = np.empty((mat.shape[0], mat.shape[1] + 1), dtype=mat.dtype)
    out[:, 0] = val
    out[:, 1:] = mat
    return out


class Prepend_scalar_constant_to_each_row(HostOp):  # noqa: N801 (Theano's name)
    """The matrix with a first column of the number ``val`` (default 0)."""

    __props__ = ("val",)

    def __init__(self, val: Any = 0):
        if isinstance(val, Variable) or not isinstance(val, (numbers.Real, np.number)):
            raise TypeError(f"Prepend_scalar_constant_to_each_row: val must be a number, got "
                            f"{val!r}; use Prepend_scalar_to_each_row for a variable")
        self.val = val.item() if isinstance(val, np.generic) else val

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.val}}}"

    def make_node(self, mat: Any) -> Apply:
        mat = _matrix(mat, "Prepend_scalar_constant_to_each_row")
        return Apply(self, [mat], [_widened(mat)])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = _prepend(self.val, inputs[0])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        rows, cols = input_shapes[0]
        return [(rows, cols + 1)]


class Prepend_scalar_to_each_row(HostOp):  # noqa: N801 (Theano's name)
    """``(val, mat)`` -> the matrix with a first column of the scalar ``val``."""

    def make_node(self, val: Any, mat: Any) -> Apply:
        mat = _matrix(mat, "Prepend_scalar_to_each_row")
        if isinstance(val, (numbers.Real, np.number)):
            val = constant(np.asarray(val, dtype=mat.dtype))
        val = as_tensor_variable(val)
        if val.ndim != 0:
            raise TypeError(f"Prepend_scalar_to_each_row: val must be a scalar, got "
                            f"{val.describe()} ({val.type.describe()})")
        return Apply(self, [val, mat], [_widened(mat)])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = _prepend(inputs[0], inputs[1])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        rows, cols = input_shapes[1]
        return [(rows, cols + 1)]


prepend_scalar_to_each_row = Prepend_scalar_to_each_row()
prepend_0_to_each_row = Prepend_scalar_constant_to_each_row(0.0)
prepend_1_to_each_row = Prepend_scalar_constant_to_each_row(1.0)
