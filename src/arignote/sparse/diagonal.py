"""The diagonal of a square sparse matrix (``diag``) and the sparse matrix with a given
diagonal (``square_diagonal``): each is the other's gradient."""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from arignote.graph.basic import Apply
from arignote.sparse.convert import SparseOp
from arignote.sparse.type import SparseType
from arignote.sparse.variable import as_sparse_variable
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Diag", "diag", "SquareDiagonal", "square_diagonal"]


class Diag(SparseOp):
    """The diagonal of a square sparse matrix, a dense vector."""

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [TensorType(x.dtype, (False,))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        (x,) = inputs
        if x.shape[0] != x.shape[1]:
            raise ValueError(f"diag: {node.inputs[0].describe()} has shape {x.shape}; it must be square")
        out[0][0] = np.asarray(x.diagonal(), dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(input_shapes[0][0],)]


diag = Diag()


class SquareDiagonal(SparseOp):
    """The square csc matrix whose diagonal is the dense vector ``d`` (zeros of ``d`` stored)."""

    def make_node(self, d: Any) -> Apply:
        d = as_tensor_variable(d)
        if d.ndim != 1:
            raise TypeError(f"square_diagonal: {d.describe()} must be a vector, got {d.ndim} dimensions")
        return Apply(self, [d], [SparseType("csc", d.dtype)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        (d,) = inputs
        n = len(d)
        out[0][0] = scipy.sparse.csc_matrix((d.copy(), np.arange(n), np.arange(n + 1)), shape=(n, n))

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        n = input_shapes[0][0]
        return [(n, n)]


square_diagonal = SquareDiagonal()
