"""Moving between sparse and dense, and between a matrix and its three arrays.

``CSM`` builds a csr/csc matrix from (data, indices, indptr, shape) and
``csm_properties`` takes one apart; every structured op of ``ops.py`` is the
one composed with the other around a dense op on ``data``, so its gradient
comes from these two. ``dense_from_sparse`` / ``csr_from_dense`` /
``csc_from_dense`` convert, ``cast``, ``remove0`` and ``ensure_sorted_indices``
rewrite the stored values.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from arignote.graph.basic import Apply, Variable
from arignote.sparse.type import FORMAT_CLASSES, SparseType, discrete_dtypes
from arignote.sparse.variable import as_sparse_or_tensor_variable, as_sparse_variable
from arignote.tensor.alloc import ones_like, zeros_like
from arignote.tensor.hostop import HostOp
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["SparseOp", "CSM", "CSC", "CSR", "CSMProperties", "csm_properties", "csm_data", "csm_indices",
           "csm_indptr", "csm_shape", "CSMGrad", "CSMGradC", "DenseFromSparse", "dense_from_sparse", "SparseFromDense",
           "csr_from_dense", "csc_from_dense", "Cast", "cast", "bcast", "wcast", "icast", "lcast", "fcast",
           "dcast", "ccast", "zcast", "Remove0", "remove0", "EnsureSortedIndices", "ensure_sorted_indices",
           "clean", "sp_ones_like", "sp_zeros_like", "entry_positions"]


class SparseOp(HostOp):
    """An op computed by scipy.sparse on the host (there is no GPU kernel for sparse values)."""

    host_reason = "scipy.sparse runs it on the host (sparse values never move to a device)"


class ShapeKeepingOp(SparseOp):
    """A sparse op whose output has its first input's shape."""

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def entry_positions(m: Any) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of each stored value of the csr/csc matrix ``m``, in storage order."""
    return _positions(m.format, m.indices, m.indptr)


def _positions(fmt: str, indices: np.ndarray, indptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    major = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    return (major, indices) if fmt == "csr" else (indices, major)


def _int_vector(value: Any, what: str) -> Variable:
    var = as_tensor_variable(np.asarray(value, dtype="int32") if not isinstance(value, Variable) else value)
    if var.ndim != 1 or var.dtype not in discrete_dtypes:
        raise TypeError(f"CSM: {what} must be a vector of integers, got {var.describe()} ({var.type})")
    return var


class CSMProperties(SparseOp):
    """(data, indices, indptr, shape) of a csr/csc matrix: data in its dtype, the rest int32."""

    view_map = {0: [0], 1: [0], 2: [0]}

    def make_node(self, csm: Any) -> Apply:
        csm = as_sparse_variable(csm)
        return Apply(self, [csm], [TensorType(csm.dtype, (False,))(), TensorType("int32", (False,))(),
                                   TensorType("int32", (False,))(), TensorType("int32", (False,))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        (m,) = inputs
        out[0][0] = m.data
        out[1][0] = np.asarray(m.indices, dtype="int32")
        out[2][0] = np.asarray(m.indptr, dtype="int32")
        out[3][0] = np.asarray(m.shape, dtype="int32")


csm_properties = CSMProperties()


def csm_data(csm: Any) -> Variable:
    """The stored values of a sparse matrix (explicit zeros included), a vector."""
    return csm_properties(csm)[0]


def csm_indices(csm: Any) -> Variable:
    return csm_properties(csm)[1]


def csm_indptr(csm: Any) -> Variable:
    return csm_properties(csm)[2]


def csm_shape(csm: Any) -> Variable:
    """The shape as an int32 vector (Theano's)."""
    return csm_properties(csm)[3]


class CSM(SparseOp):
    """A csr or csc matrix made from (data, indices, indptr, shape); ``data`` is not copied."""

    __props__ = ("format",)
    view_map = {0: [0]}

    def __init__(self, format: str, kmap: Any = None):
        if format not in FORMAT_CLASSES:
            raise ValueError(f"CSM: format must be 'csr' or 'csc', got {format!r}")
        if kmap is not None:
            raise ValueError("CSM: kmap was removed from Theano; leave it out")
        self.format = format

    def make_node(self, data: Any, indices: Any, indptr: Any, shape: Any) -> Apply:
        data = as_tensor_variable(data)
        if data.ndim != 1:
            raise TypeError(f"CSM: data must be a vector, got {data.describe()} ({data.type})")
        inputs = [data, _int_vector(indices, "indices"), _int_vector(indptr, "indptr"),
                  _int_vector(shape, "shape")]
        return Apply(self, inputs, [SparseType(self.format, data.dtype)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        data, indices, indptr, shape = inputs
        if len(shape) != 2:
            raise ValueError(f"CSM: the shape must have 2 entries, got {list(shape)}")
        if data.shape != indices.shape:
            raise ValueError(f"CSM: data has {data.size} values but indices has {indices.size}: "
                             "give one index per stored value")
        cls = FORMAT_CLASSES[self.format]
        out[0][0] = cls((data, indices.copy(), indptr.copy()), shape=tuple(int(n) for n in shape),
                        copy=False)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False], [False], [False]]

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = node.inputs[3]
        return [(shape[0], shape[1])]


CSC = CSM("csc")
CSR = CSM("csr")


class CSMGrad(ShapeKeepingOp):
    """The gradient of ``CSM``'s data: at each stored position of x, the value of the
    gradient matrix ``g`` there (every stored copy of a repeated position gets it)."""

    __props__ = ("format",)

    def __init__(self, format: str):
        self.format = format

    def make_node(self, x_data: Any, x_indices: Any, x_indptr: Any, x_shape: Any, g: Any) -> Apply:
        g = as_sparse_or_tensor_variable(g)
        return Apply(self, [x_data, x_indices, x_indptr, x_shape, g],
                     [TensorType(g.dtype, (False,))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        _, indices, indptr, _, g = inputs
        rows, cols = _positions(self.format, indices, indptr)
        if scipy.sparse.issparse(g):
            values = np.asarray(g.tocsr()[rows, cols]).reshape(-1) if len(rows) else np.zeros(0)
        else:
            values = g[rows, cols]
        out[0][0] = np.asarray(values, dtype=node.outputs[0].dtype)


class CSMGradC(SparseOp):
    """``CSMGrad`` for a sparse gradient given by its parts: at each stored position of a (its
    values, indices, index pointers, shape), the value b (of a's format) holds there, summed
    over b's repeated entries; 0 where b stores nothing."""

    def make_node(self, a_val: Any, a_ind: Any, a_ptr: Any, a_dim: Any, b_val: Any, b_ind: Any, b_ptr: Any,
                  b_dim: Any) -> Apply:
        a_val, b_val = as_tensor_variable(a_val), as_tensor_variable(b_val)
        for what, var in (("a_val", a_val), ("b_val", b_val)):
            if var.ndim != 1:
                raise TypeError(f"CSMGradC: {what} {var.describe()} must be a vector of stored values")
        rest = [_int_vector(v, what) for v, what in ((a_ind, "a_ind"), (a_ptr, "a_ptr"), (a_dim, "a_dim"),
                                                      (b_ind, "b_ind"), (b_ptr, "b_ptr"), (b_dim, "b_dim"))]
        return Apply(self, [a_val, *rest[:3], b_val, *rest[3:]], [b_val.type()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        _, a_ind, a_ptr, _, b_val, b_ind, b_ptr, b_dim = inputs
        # major (row of csr, column of csc) by minor, the same reading for both formats
        b = scipy.sparse.csr_matrix((b_val, b_ind, b_ptr), shape=(len(b_ptr) - 1, int(max(b_dim, default=0))))
        major, minor = _positions("csr", a_ind, a_ptr)
        values = np.asarray(b[major, minor]).reshape(-1) if len(major) else np.zeros(0)
        out[0][0] = np.asarray(values, dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class DenseFromSparse(ShapeKeepingOp):
    """A sparse matrix as a dense one. ``sparse_grad=True`` (the default): the gradient is
    structured, kept only where the input stores values."""

    __props__ = ("sparse_grad",)

    def __init__(self, structured: bool = True):
        self.sparse_grad = structured

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [TensorType(x.dtype, (False, False))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        out[0][0] = np.asarray(inputs[0].toarray(), dtype=node.outputs[0].dtype)


dense_from_sparse = DenseFromSparse()


class SparseFromDense(ShapeKeepingOp):
    """A dense matrix as a sparse one of ``format`` (its zeros not stored)."""

    __props__ = ("format",)

    def __init__(self, format: str):
        if format not in FORMAT_CLASSES:
            raise ValueError(f"SparseFromDense: format must be 'csr' or 'csc', got {format!r}")
        self.format = format

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.ndim > 2:
            raise TypeError(f"{self.format}_from_dense: {x.describe()} has {x.ndim} dimensions; "
                            "a sparse matrix has 2 (reshape it first)")
        if x.ndim < 2:  # a scalar is a 1x1 matrix, a vector a row (Theano's rule)
            x = x.dimshuffle(*(["x"] * (2 - x.ndim) + list(range(x.ndim))))
        return Apply(self, [x], [SparseType(self.format, x.dtype)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        out[0][0] = FORMAT_CLASSES[self.format](inputs[0])

    def __str__(self) -> str:
        return f"SparseFromDense{{{self.format}}}"


csr_from_dense = SparseFromDense("csr")
csc_from_dense = SparseFromDense("csc")


class Cast(ShapeKeepingOp):
    """The stored values converted to ``out_type``."""

    __props__ = ("out_type",)

    def __init__(self, out_type: str):
        self.out_type = str(out_type)

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [SparseType(x.format, self.out_type)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        out[0][0] = inputs[0].astype(self.out_type)


bcast, wcast, icast, lcast = Cast("int8"), Cast("int16"), Cast("int32"), Cast("int64")
fcast, dcast, ccast, zcast = Cast("float32"), Cast("float64"), Cast("complex64"), Cast("complex128")


def cast(variable: Any, dtype: str) -> Variable:
    """``variable`` (sparse) with its values converted to ``dtype`` (itself if already so)."""
    variable = as_sparse_variable(variable)
    if dtype not in SparseType.dtype_set:
        raise TypeError(f"sparse.cast: {dtype!r} is not a sparse dtype; use one of "
                        f"{', '.join(sorted(SparseType.dtype_set))}")
    return variable if variable.dtype == dtype else Cast(dtype)(variable)


class _Tidy(ShapeKeepingOp):
    """The same matrix in a tidier storage; ``inplace=True`` tidies the input itself (the
    in-place phase makes that form where the input is not needed afterwards)."""

    __props__ = ("inplace",)

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [x.type()])


class Remove0(_Tidy):
    """The same matrix without its explicitly stored zeros."""

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        result = inputs[0] if self.inplace else inputs[0].copy()
        result.eliminate_zeros()
        out[0][0] = result


remove0 = Remove0()


class EnsureSortedIndices(_Tidy):
    """The same matrix with the indices of each row (csr) or column (csc) in order."""

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        if self.inplace:
            inputs[0].sort_indices()
        out[0][0] = inputs[0] if self.inplace else inputs[0].sorted_indices()


ensure_sorted_indices = EnsureSortedIndices()


def clean(x: Any) -> Variable:
    """``x`` with sorted indices and no stored zeros."""
    return ensure_sorted_indices(remove0(x))


def sp_ones_like(x: Any) -> Variable:
    """Ones where ``x`` stores values (the same pattern, stored zeros included)."""
    x = as_sparse_variable(x)
    data, indices, indptr, shape = csm_properties(x)
    return CSM(x.format)(ones_like(data), indices, indptr, shape)


def sp_zeros_like(x: Any) -> Variable:
    """A matrix of ``x``'s shape, format and dtype that stores nothing."""
    x = as_sparse_variable(x)
    _, _, indptr, shape = csm_properties(x)
    return CSM(x.format)(np.zeros(0, dtype=x.dtype), np.zeros(0, dtype="int32"), zeros_like(indptr), shape)
