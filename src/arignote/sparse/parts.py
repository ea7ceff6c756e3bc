"""Elementwise sparse ops on a matrix's parts (values, indices, index pointers): Theano's
``sparse.opt`` forms ``mul_s_d_csc``/``_csr``, ``mul_s_v_csr``, ``structured_add_s_v_csr``
and ``sampling_dot_csr``, and ``sparse.basic``'s ``StructuredDotGradCSC``/``CSR``.

Each computes only the new values array; the specialize rewrites (rewrites.py) turn
``mul_s_d``, ``mul_s_v``, ``structured_add_s_v`` and ``structured_dot``'s gradient into
``CSM(values, indices, indptr, shape)`` of these, so the pattern passes through unchanged and a later
``csm_properties`` of the result reads the input's arrays instead of a built matrix.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import upcast
from arignote.sparse.convert import SparseOp, _positions
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["MulSDCSC", "mul_s_d_csc", "MulSDCSR", "mul_s_d_csr", "MulSVCSR", "mul_s_v_csr", "StructuredAddSVCSR",
           "structured_add_s_v_csr", "SamplingDotCSR", "sampling_dot_csr", "StructuredDotGradCSC", "sdg_csc",
           "StructuredDotGradCSR", "sdg_csr"]

_INDEX_DTYPES = ("int32", "int64")


def _parts(op: str, a_data: Any, a_indices: Any, a_indptr: Any) -> list[Variable]:
    """The three arrays of a csr/csc matrix as vectors, checked (integer indices)."""
    parts = [as_tensor_variable(v) for v in (a_data, a_indices, a_indptr)]
    for what, var in zip(("a_data", "a_indices", "a_indptr"), parts):
        if var.ndim != 1:
            raise TypeError(f"{op}: {what} {var.describe()} must be a vector (the matrix's .{what[2:]}), "
                            f"got {var.ndim} dimensions")
    for what, var in zip(("a_indices", "a_indptr"), parts[1:]):
        if var.dtype not in _INDEX_DTYPES:
            raise TypeError(f"{op}: {what} {var.describe()} must hold int32 or int64, got {var.dtype}")
    return parts


def _operand(op: str, b: Any, ndim: int) -> Variable:
    b = as_tensor_variable(b)
    if b.ndim != ndim:
        raise TypeError(f"{op}: b {b.describe()} must be a dense {('vector', 'matrix')[ndim - 1]}, "
                        f"got {b.ndim} dimensions")
    return b


class _ValuesOp(SparseOp):
    """``combine(a's stored values, b at their positions)``: a new values array of a's
    pattern. ``format`` is the matrix's, ``ndim`` b's; a vector b is indexed by column."""

    format = "csr"
    ndim = 2
    combine = staticmethod(np.multiply)

    def make_node(self, a_data: Any, a_indices: Any, a_indptr: Any, b: Any) -> Apply:
        name = type(self).__name__
        parts, b = _parts(name, a_data, a_indices, a_indptr), _operand(name, b, self.ndim)
        return Apply(self, parts + [b], [TensorType(upcast(parts[0].dtype, b.dtype), (False,))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        data, indices, indptr, b = inputs
        rows, cols = _positions(self.format, indices, indptr)
        try:
            at = b[rows, cols] if self.ndim == 2 else b[cols]
        except IndexError:
            raise ValueError(f"{type(self).__name__}: b {node.inputs[3].describe()} of shape {b.shape} is "
                             "smaller than the sparse matrix; give it the matrix's shape "
                             f"({'its number of columns' if self.ndim == 1 else 'rows and columns'})") from None
        out[0][0] = np.asarray(self.combine(data, at), dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class MulSDCSC(_ValuesOp):
    """The stored values of a csc matrix times a dense matrix's entries at their positions."""

    format = "csc"


class MulSDCSR(_ValuesOp):
    """The stored values of a csr matrix times a dense matrix's entries at their positions."""


class MulSVCSR(_ValuesOp):
    """The stored values of a csr matrix times ``b[column]`` for a vector ``b``."""

    ndim = 1


class StructuredAddSVCSR(_ValuesOp):
    """The stored values of a csr matrix plus ``b[column]`` for a vector ``b``."""

    ndim = 1
    combine = staticmethod(np.add)


mul_s_d_csc, mul_s_d_csr, mul_s_v_csr = MulSDCSC(), MulSDCSR(), MulSVCSR()
structured_add_s_v_csr = StructuredAddSVCSR()


class SamplingDotCSR(SparseOp):
    """``sampling_dot`` on the parts of a csr ``p`` with ``p_ncols`` columns: the values
    ``dot(x[i], y[j]) * p[i, j]`` at p's positions, and p's indices and index pointers (its
    three outputs, the parts of the csr result)."""

    def make_node(self, x: Any, y: Any, p_data: Any, p_ind: Any, p_ptr: Any, p_ncols: Any) -> Apply:
        name = "SamplingDotCSR"
        x, y = _operand(name, x, 2), _operand(name, y, 2)
        parts = _parts(name, p_data, p_ind, p_ptr)
        p_ncols = as_tensor_variable(p_ncols)
        if p_ncols.ndim != 0 or p_ncols.dtype not in _INDEX_DTYPES:
            raise TypeError(f"{name}: p_ncols {p_ncols.describe()} must be an integer scalar")
        dtype = upcast(x.dtype, y.dtype, parts[0].dtype)
        return Apply(self, [x, y] + parts + [p_ncols], [TensorType(dtype, (False,))(), parts[1].type(),
                                                        parts[2].type()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y, data, indices, indptr, ncols = inputs
        if x.shape[1] != y.shape[1] or len(indptr) - 1 != x.shape[0] or y.shape[0] != int(ncols):
            raise ValueError(f"SamplingDotCSR: x {x.shape}, y {y.shape} and p ({len(indptr) - 1}, {int(ncols)}) "
                             "do not fit: p must have shape (len(x), len(y)) and x, y the same number of columns")
        rows, cols = _positions("csr", indices, indptr)
        products = np.einsum("ij,ij->i", x[rows], y[cols]) if len(rows) else np.zeros(0)
        out[0][0] = np.asarray(products * data, dtype=node.outputs[0].dtype)
        out[1][0], out[2][0] = indices.copy(), indptr.copy()

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[2], input_shapes[3], input_shapes[4]]


sampling_dot_csr = SamplingDotCSR()


class StructuredDotGradCSC(SparseOp):
    """The values of ``structured_dot(a, b)``'s gradient with respect to a csc ``a`` (given
    by its indices and index pointers): ``dot(g_ab[i], b[j])`` at each stored position (i, j)."""

    format = "csc"

    def make_node(self, a_indices: Any, a_indptr: Any, b: Any, g_ab: Any) -> Apply:
        name = type(self).__name__
        _, a_indices, a_indptr = _parts(name, np.zeros(0), a_indices, a_indptr)
        b, g_ab = as_tensor_variable(b), _operand(name, g_ab, 2)
        if b.ndim not in (1, 2):
            raise TypeError(f"{name}: b {b.describe()} must be a vector or a matrix, got {b.ndim} dimensions")
        return Apply(self, [a_indices, a_indptr, b, g_ab], [TensorType(upcast(b.dtype, g_ab.dtype), (False,))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        indices, indptr, b, g_ab = inputs
        rows, cols = _positions(self.format, indices, indptr)
        b = b.reshape(len(b), -1)
        values = np.einsum("ij,ij->i", g_ab[rows], b[cols]) if len(rows) else np.zeros(0)
        out[0][0] = np.asarray(values, dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class StructuredDotGradCSR(StructuredDotGradCSC):
    """The values of ``structured_dot(a, b)``'s gradient with respect to a csr ``a``."""

    format = "csr"


sdg_csc, sdg_csr = StructuredDotGradCSC(), StructuredDotGradCSR()
