"""Matrix products with a sparse operand: ``structured_dot``, ``dot`` and ``true_dot``.

They differ in what they return and in their gradients (Theano's contract):
``structured_dot(sparse, dense)`` is dense and its gradient with respect to
the sparse operand lives only on its stored positions; ``dot`` is always
dense with the regular gradients; ``true_dot`` is always sparse.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import upcast
from arignote.sparse.convert import ShapeKeepingOp, SparseOp, entry_positions
from arignote.sparse.ops import _as_format, _with_data, transpose
from arignote.sparse.type import SparseType
from arignote.sparse.variable import as_sparse_or_tensor_variable, as_sparse_variable, is_sparse_variable
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["StructuredDot", "structured_dot", "StructuredDotGrad", "structured_dot_grad", "Dot", "dot",
           "TrueDot", "true_dot", "SamplingDot", "sampling_dot", "StructuredDotCSC", "sd_csc", "StructuredDotCSR",
           "sd_csr"]


def _check_inner(node: Apply, x: Any, y: Any) -> None:
    if x.shape[-1] != y.shape[0]:
        raise ValueError(f"{type(node.op).__name__}: {node.inputs[0].describe()} has shape {x.shape} "
                         f"and {node.inputs[1].describe()} {np.shape(y)}: the inner lengths "
                         f"{x.shape[-1]} and {y.shape[0]} differ")


def _dense_out(x: Variable, y: Variable) -> TensorType:
    """The dense result of x . y: a dense operand's broadcastable rows (or columns) stay so."""
    rows = tuple(x.broadcastable[:-1]) if not is_sparse_variable(x) else (False,) * (x.ndim - 1)
    cols = tuple(y.broadcastable[1:]) if not is_sparse_variable(y) else (False,) * (y.ndim - 1)
    return TensorType(upcast(x.dtype, y.dtype), rows + cols)


class _Product(SparseOp):
    """A matrix product: rows of the first operand by columns of the second."""

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        x, y = input_shapes
        return [tuple(x[:-1]) + tuple(y[1:])]


class StructuredDot(_Product):
    """sparse . dense (dense result) or sparse . sparse (sparse result, the first's format)."""

    def make_node(self, a: Any, b: Any) -> Apply:
        a = as_sparse_variable(a)
        b = as_sparse_or_tensor_variable(b)
        if is_sparse_variable(b):
            return Apply(self, [a, b], [SparseType(a.format, upcast(a.dtype, b.dtype))()])
        if b.ndim not in (1, 2):
            raise TypeError(f"structured_dot: {b.describe()} has {b.ndim} dimensions; give a "
                            "vector or a matrix")
        return Apply(self, [a, b], [_dense_out(a, b)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        a, b = inputs
        _check_inner(node, a, b)
        dtype = node.outputs[0].dtype
        result = a @ b
        if scipy.sparse.issparse(result):
            out[0][0] = _as_format(result, node.outputs[0].type.format, dtype)
        else:
            out[0][0] = np.asarray(result, dtype=dtype)


_structured_dot = StructuredDot()


def structured_dot(x: Any, y: Any) -> Variable:
    """x . y with x sparse (or y sparse and x dense: computed as (y.T . x.T).T)."""
    if not is_sparse_variable(x) and not scipy.sparse.issparse(x):
        y = as_sparse_variable(y)
        x = as_tensor_variable(x)
        if x.ndim != 2:
            raise TypeError(f"structured_dot: with a sparse right operand the left one must be a "
                            f"matrix, got {x.describe()} with {x.ndim} dimensions")
        return _structured_dot(transpose(y), x.T).T
    return _structured_dot(x, y)


class StructuredDotGrad(ShapeKeepingOp):
    """The gradient of structured_dot(a, b) with respect to the sparse ``a``: ``gz . b.T``
    on a's stored positions only, in a's format."""

    def make_node(self, a: Any, b: Any, gz: Any) -> Apply:
        a, b, gz = as_sparse_variable(a), as_tensor_variable(b), as_tensor_variable(gz)
        return Apply(self, [a, b, gz], [SparseType(a.format, upcast(a.dtype, gz.dtype))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        a, b, gz = inputs
        rows, cols = entry_positions(a)
        if b.ndim == 1:
            values = gz[rows] * b[cols]
        else:
            values = np.einsum("ij,ij->i", gz[rows], b[cols]) if len(rows) else np.zeros(0)
        out[0][0] = _with_data(a, values, node.outputs[0].dtype)


structured_dot_grad = StructuredDotGrad()


class Dot(_Product):
    """x . y where one or both are sparse: always dense, regular gradients."""

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
        if not (is_sparse_variable(x) or is_sparse_variable(y)):
            raise TypeError(f"sparse.dot: one of {x.describe()} and {y.describe()} must be sparse; "
                            "use tensor.dot for dense operands")
        for k, v in enumerate((x, y)):
            if v.ndim not in (1, 2):
                raise TypeError(f"sparse.dot: input {k} {v.describe()} must have 1 or 2 dimensions, "
                                f"got {v.ndim}")
        return Apply(self, [x, y], [_dense_out(x, y)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y = inputs
        _check_inner(node, x, y)
        result = x @ y
        if scipy.sparse.issparse(result):
            result = result.toarray()
        out[0][0] = np.asarray(result, dtype=node.outputs[0].dtype)


_dot = Dot()


def dot(x: Any, y: Any) -> Variable:
    """x . y where one or both are sparse (csr or csc): a dense result."""
    return _dot(x, y)


class TrueDot(_Product):
    """sparse . (sparse or dense) as a sparse matrix of the first's format.
    ``grad_preserves_dense``: a dense operand's gradient is dense (else sparse)."""

    __props__ = ("grad_preserves_dense",)

    def __init__(self, grad_preserves_dense: bool = True):
        self.grad_preserves_dense = bool(grad_preserves_dense)

    def make_node(self, x: Any, y: Any) -> Apply:
        x = as_sparse_variable(x)
        y = as_sparse_or_tensor_variable(y)
        if y.ndim != 2:
            raise TypeError(f"true_dot: {y.describe()} must be a matrix, got {y.ndim} dimensions")
        return Apply(self, [x, y], [SparseType(x.format, upcast(x.dtype, y.dtype))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y = inputs
        _check_inner(node, x, y)
        result = x @ y
        fmt, dtype = node.outputs[0].type.format, node.outputs[0].dtype
        out[0][0] = _as_format(result if scipy.sparse.issparse(result) else scipy.sparse.csr_matrix(result),
                               fmt, dtype)


def true_dot(x: Any, y: Any, grad_preserves_dense: bool = True) -> Variable:
    """x . y as a sparse matrix; one of them sparse (a dense x: computed as (y.T . x.T).T)."""
    if is_sparse_variable(x) or scipy.sparse.issparse(x):
        return TrueDot(grad_preserves_dense)(x, y)
    y = as_sparse_variable(y)
    return transpose(TrueDot(grad_preserves_dense)(transpose(y), as_tensor_variable(x).T))


class SamplingDot(SparseOp):
    """``x . y.T`` computed only where the sparse ``p`` stores values, times those values:
    sparse in p's format (``x`` and ``y`` dense matrices)."""

    def make_node(self, x: Any, y: Any, p: Any) -> Apply:
        x, y, p = as_tensor_variable(x), as_tensor_variable(y), as_sparse_variable(p)
        if x.ndim != 2 or y.ndim != 2:
            raise TypeError(f"sampling_dot: {x.describe()} and {y.describe()} must be matrices")
        return Apply(self, [x, y, p], [SparseType(p.format, upcast(x.dtype, y.dtype, p.dtype))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y, p = inputs
        if x.shape[1] != y.shape[1] or p.shape != (x.shape[0], y.shape[0]):
            raise ValueError(f"sampling_dot: x {x.shape}, y {y.shape} and p {p.shape} do not fit: "
                             "p must have shape (len(x), len(y)) and x, y the same number of columns")
        rows, cols = entry_positions(p)
        values = np.einsum("ij,ij->i", x[rows], y[cols]) if len(rows) else np.zeros(0)
        out[0][0] = _with_data(p, values * p.data, node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[2]]


sampling_dot = SamplingDot()


class _ComponentsDot(SparseOp):
    """``a . b`` for a sparse ``a`` given by its parts (values, indices, index pointers) and a
    dense matrix ``b``: Theano's forms of ``structured_dot`` after its specialization."""

    format = ""

    def _parts(self, a_val: Any, a_ind: Any, a_ptr: Any, b: Any) -> tuple[list, TensorType]:
        a_val, b = as_tensor_variable(a_val), as_tensor_variable(b)
        a_ind, a_ptr = (as_tensor_variable(v) for v in (a_ind, a_ptr))
        name = type(self).__name__
        for what, part, var in (("a_val", "data", a_val), ("a_ind", "indices", a_ind), ("a_ptr", "indptr", a_ptr)):
            if var.ndim != 1:
                raise TypeError(f"{name}: {what} {var.describe()} must be a vector (the matrix's .{part})")
        if a_ind.dtype not in ("int32", "int64") or a_ptr.dtype not in ("int32", "int64"):
            raise TypeError(f"{name}: a_ind and a_ptr must be int vectors, got {a_ind.dtype} and {a_ptr.dtype}")
        if b.ndim != 2:
            raise TypeError(f"{name}: b {b.describe()} must be a dense matrix, got {b.ndim} dimensions")
        return [a_val, a_ind, a_ptr, b], TensorType(upcast(a_val.dtype, b.dtype), (False, b.broadcastable[1]))

    def _product(self, node: Apply, a: Any, b: np.ndarray, out: list[list]) -> None:
        _check_inner(node, a, b)
        out[0][0] = np.asarray(a @ b, dtype=node.outputs[0].dtype)


class StructuredDotCSC(_ComponentsDot):
    """``sd_csc(a_val, a_ind, a_ptr, a_nrows, b)``: a csc matrix of ``a_nrows`` rows times ``b``."""

    def make_node(self, a_val: Any, a_ind: Any, a_ptr: Any, a_nrows: Any, b: Any) -> Apply:
        inputs, out = self._parts(a_val, a_ind, a_ptr, b)
        a_nrows = as_tensor_variable(a_nrows)
        if a_nrows.ndim != 0 or a_nrows.dtype not in ("int32", "int64"):
            raise TypeError(f"StructuredDotCSC: a_nrows must be an int scalar, got {a_nrows.describe()}")
        return Apply(self, inputs[:3] + [a_nrows, inputs[3]], [out()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        a_val, a_ind, a_ptr, a_nrows, b = inputs
        a = scipy.sparse.csc_matrix((a_val, a_ind, a_ptr), shape=(int(a_nrows), len(a_ptr) - 1))
        self._product(node, a, b, out)


class StructuredDotCSR(_ComponentsDot):
    """``sd_csr(a_val, a_ind, a_ptr, b)``: a csr matrix (one row per index pointer but the
    last, as many columns as ``b`` has rows) times ``b``."""

    def make_node(self, a_val: Any, a_ind: Any, a_ptr: Any, b: Any) -> Apply:
        inputs, out = self._parts(a_val, a_ind, a_ptr, b)
        return Apply(self, inputs, [out()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        a_val, a_ind, a_ptr, b = inputs
        a = scipy.sparse.csr_matrix((a_val, a_ind, a_ptr), shape=(len(a_ptr) - 1, b.shape[0]))
        self._product(node, a, b, out)


sd_csc = StructuredDotCSC()
sd_csr = StructuredDotCSR()
