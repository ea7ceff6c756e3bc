"""Indexing sparse matrices, and ``sparse_grad``: a dense ``W[idx]`` whose gradient is sparse.

``x[i, j]`` (two scalars) is a dense scalar, ``x[a:b, c:d]`` a sparse matrix,
``x[list]`` the listed rows (sparse), ``x[list, list]`` the listed entries (a
dense vector). ``sparse_grad(W[idx])`` keeps the value and makes the gradient
with respect to ``W`` a sparse matrix holding only the rows ``idx`` read:
what large embeddings trained by SGD need.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from arignote.graph.basic import Apply, Variable
from arignote.sparse.convert import ShapeKeepingOp, SparseOp
from arignote.sparse.type import SparseType
from arignote.sparse.variable import as_sparse_variable
from arignote.scalar.dtypes import INTEGER
from arignote.tensor.subtensor.read import AdvancedSubtensor1
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["GetItem2d", "get_item_2d", "GetItemList", "get_item_list", "GetItem2Lists", "get_item_2lists",
           "GetItemScalar", "get_item_scalar", "ScatterSparse", "getitem", "SparseGradSubtensor1", "sparse_grad",
           "ConstructSparseFromList", "construct_sparse_from_list"]


def _index(value: Any, what: str) -> Variable:
    var = as_tensor_variable(value)
    if var.ndim != 0 or var.dtype not in INTEGER:
        raise TypeError(f"sparse indexing: {what} must be an integer scalar, got {var.describe()} "
                        f"({var.type})")
    return var


def _index_list(value: Any, what: str) -> Variable:
    var = as_tensor_variable(np.asarray(value, dtype="int64") if isinstance(value, list) else value)
    if var.ndim != 1 or var.dtype not in INTEGER:
        raise TypeError(f"sparse indexing: {what} must be a vector of integers, got {var.describe()}")
    return var


class GetItem2d(SparseOp):
    """``x[a:b:s, c:d:t]``: a sparse matrix. ``given`` says which of the six bounds are
    inputs (the others are None)."""

    __props__ = ("given",)

    def __init__(self, given: tuple[bool, ...] = (False,) * 6):
        self.given = tuple(bool(g) for g in given)

    def make_node(self, x: Any, *bounds: Any) -> Apply:
        x = as_sparse_variable(x)
        if len(bounds) != sum(self.given):
            raise ValueError(f"GetItem2d: {sum(self.given)} bounds expected, got {len(bounds)}")
        return Apply(self, [x] + [_index(b, "a slice bound") for b in bounds], [x.type()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, *values = inputs
        it = iter(int(v) for v in values)
        parts = [next(it) if g else None for g in self.given]
        out[0][0] = x[slice(*parts[:3]), slice(*parts[3:])]


def get_item_2d(x: Any, index: tuple) -> Variable:
    """``x[index]`` for one or two slices: a sparse matrix."""
    bounds: list[Any] = []
    for item in index:
        if not isinstance(item, slice):
            raise TypeError(f"get_item_2d takes slices, got {item!r}")
        bounds += [item.start, item.stop, item.step]
    while len(bounds) < 6:
        bounds.append(None)
    given = tuple(b is not None for b in bounds)
    return GetItem2d(given)(x, *[b for b in bounds if b is not None])


class GetItemScalar(SparseOp):
    """``x[i, j]``: a dense scalar (zero where nothing is stored)."""

    def make_node(self, x: Any, i: Any, j: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x, _index(i, "the row"), _index(j, "the column")], [TensorType(x.dtype, ())()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, i, j = inputs
        out[0][0] = np.asarray(x[int(i), int(j)], dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [()]


get_item_scalar = GetItemScalar()


class GetItemList(SparseOp):
    """``x[rows]``: the listed rows (repeats allowed), sparse in x's format."""

    def make_node(self, x: Any, index: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x, _index_list(index, "the rows")], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(input_shapes[1][0], input_shapes[0][1])]

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, rows = inputs
        out[0][0] = x.tocsr()[rows].asformat(x.format)


get_item_list = GetItemList()


class GetItem2Lists(SparseOp):
    """``x[rows, cols]``: the entries at the listed (row, column) pairs, a dense vector."""

    def make_node(self, x: Any, ind1: Any, ind2: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x, _index_list(ind1, "the rows"), _index_list(ind2, "the columns")],
                     [TensorType(x.dtype, (False,))()])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[1]]

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, rows, cols = inputs
        values = x.tocsr()[rows, cols] if len(rows) else np.zeros(0)
        out[0][0] = np.asarray(values, dtype=node.outputs[0].dtype).reshape(-1)


get_item_2lists = GetItem2Lists()


class ScatterSparse(ShapeKeepingOp):
    """A sparse matrix of ``x``'s shape and format holding ``g`` where ``x`` was read: the
    gradient of ``x[rows]`` (``g`` sparse, its rows added into rows ``rows``) or of
    ``x[rows, cols]`` (``g`` a vector, added at those positions)."""

    __props__ = ("pairs",)

    def __init__(self, pairs: bool):
        self.pairs = bool(pairs)

    def make_node(self, x: Any, g: Any, rows: Any, cols: Any = None) -> Apply:
        x = as_sparse_variable(x)
        g = as_sparse_variable(g) if not self.pairs else as_tensor_variable(g)
        inputs = [x, g, as_tensor_variable(rows)] + ([as_tensor_variable(cols)] if self.pairs else [])
        return Apply(self, inputs, [x.type()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, g, rows, *cols = inputs
        n_rows = x.shape[0]
        if self.pairs:
            r, c, values = rows, cols[0], g
        else:
            coo = g.tocoo()
            r, c, values = np.asarray(rows)[coo.row], coo.col, coo.data
        coo = scipy.sparse.coo_matrix((values, (np.where(r < 0, r + n_rows, r), c)), shape=x.shape)
        out[0][0] = coo.asformat(x.format).astype(node.outputs[0].dtype)


def _is_scalar_index(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) or (
        isinstance(item, Variable) and isinstance(item.type, TensorType) and item.ndim == 0)


def getitem(x: Variable, index: Any) -> Variable:
    """``x[index]`` for a sparse ``x`` (see the module's docstring for what is supported)."""
    index = index if isinstance(index, tuple) else (index,)
    if len(index) > 2:
        raise IndexError(f"{x.describe()} is a matrix: give at most two indices, got {len(index)}")
    if len(index) == 2 and _is_scalar_index(index[0]) and _is_scalar_index(index[1]):
        return get_item_scalar(x, *index)
    if len(index) == 2 and isinstance(index[0], (list, Variable)) and not _is_scalar_index(index[0]) \
            and isinstance(index[1], (list, Variable)) and not _is_scalar_index(index[1]):
        return get_item_2lists(x, index[0], index[1])
    if len(index) == 1 and not isinstance(index[0], slice) and not _is_scalar_index(index[0]):
        return get_item_list(x, index[0])
    if all(isinstance(i, slice) for i in index):
        return get_item_2d(x, index)
    if any(isinstance(i, slice) for i in index) and all(isinstance(i, slice) or _is_scalar_index(i)
                                                        for i in index):
        raise NotImplementedError(
            f"sparse indexing of {x.describe()} with {index!r}: an integer beside a slice would make "
            "a sparse vector, which does not exist (Theano's rule): write x[i:i+1, a:b] or x[a:b, j:j+1]")
    raise IndexError(f"sparse indexing of {x.describe()} with {index!r}: use two slices, two "
                     "scalars, a list of rows or two lists")


# ------------------------------------------------------------ sparse_grad
class SparseGradSubtensor1(AdvancedSubtensor1):
    """``W[idx]`` (rows of a matrix) whose gradient with respect to ``W`` is sparse."""

    sparse_grad = True

    def __str__(self) -> str:
        return "AdvancedSubtensor1{sparse_grad}"


def sparse_grad(var: Variable) -> Variable:
    """``var`` (a ``W[idx]`` of a dense matrix ``W``) computed so that its gradient with
    respect to ``W`` is a sparse matrix (Theano's ``theano.sparse_grad``)."""
    node = var.owner
    if node is None or type(node.op) is not AdvancedSubtensor1 or node.inputs[0].ndim != 2:
        raise TypeError(f"sparse_grad: {var.describe()} must be rows of a matrix read with a vector "
                        "of indices (W[idx]), the only indexing whose gradient can be sparse")
    return SparseGradSubtensor1()(*node.inputs)


class ConstructSparseFromList(ShapeKeepingOp):
    """A csr matrix of ``like``'s shape holding ``values[k]`` in row ``rows[k]`` (repeated rows
    summed): the sparse gradient of ``like[rows]``."""

    def make_node(self, like: Any, values: Any, rows: Any) -> Apply:
        like, values, rows = as_tensor_variable(like), as_tensor_variable(values), as_tensor_variable(rows)
        if like.ndim != 2 or values.ndim != 2:
            raise TypeError("construct_sparse_from_list: like and values must be matrices")
        return Apply(self, [like, values, rows], [SparseType("csr", values.dtype)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        like, values, rows = inputs
        n_rows, n_cols = like.shape
        rows = np.where(rows < 0, rows + n_rows, rows)
        coo = scipy.sparse.coo_matrix(
            (values.reshape(-1), (np.repeat(rows, n_cols), np.tile(np.arange(n_cols), len(rows)))),
            shape=(n_rows, n_cols))
        result = coo.tocsr()  # sums repeated rows
        out[0][0] = result.astype(node.outputs[0].dtype) if result.dtype != node.outputs[0].dtype else result


construct_sparse_from_list = ConstructSparseFromList()
