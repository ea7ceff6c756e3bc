"""Joining sparse matrices side by side (``hstack``) or one above the other (``vstack``)."""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import scipy.sparse

from arignote.config import config
from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import upcast
from arignote.sparse.convert import SparseOp
from arignote.sparse.type import SparseType
from arignote.sparse.variable import as_sparse_variable

__all__ = ["HStack", "VStack", "hstack", "vstack"]


class HStack(SparseOp):
    """Sparse matrices side by side, as one matrix of ``format`` and ``dtype``."""

    __props__ = ("format", "dtype")
    join = staticmethod(scipy.sparse.hstack)
    axis = 1

    def __init__(self, format: str | None = None, dtype: str | None = None):
        self.format = format or "csc"
        self.dtype = dtype or config.floatX

    def make_node(self, *blocks: Any) -> Apply:
        if not blocks:
            raise ValueError(f"{type(self).__name__.lower()}: give at least one block")
        blocks = [as_sparse_variable(b) for b in blocks]
        return Apply(self, blocks, [SparseType(self.format, self.dtype)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        try:
            out[0][0] = self.join(inputs, format=self.format, dtype=self.dtype)
        except ValueError as err:
            shapes = ", ".join(str(b.shape) for b in inputs)
            raise ValueError(f"{type(self).__name__.lower()}: blocks of shapes {shapes} do not join "
                             f"along axis {1 - self.axis} ({err})") from None


    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        joined = input_shapes[0][self.axis]
        for shape in input_shapes[1:]:
            joined = joined + shape[self.axis]
        kept = input_shapes[0][1 - self.axis]
        return [(kept, joined) if self.axis == 1 else (joined, kept)]


class VStack(HStack):
    """Sparse matrices one above the other, as one matrix of ``format`` and ``dtype``."""

    join = staticmethod(scipy.sparse.vstack)
    axis = 0

    def __init__(self, format: str | None = None, dtype: str | None = None):
        super().__init__(format or "csr", dtype)


def _stack(op_type: type, blocks: Sequence[Any], format: str | None, dtype: str | None) -> Variable:
    blocks = [as_sparse_variable(b) for b in blocks]
    return op_type(format, dtype or upcast(*[b.dtype for b in blocks]))(*blocks)


def hstack(blocks: Sequence[Any], format: str | None = None, dtype: str | None = None) -> Variable:
    """The sparse ``blocks`` side by side (``format`` default csc, ``dtype`` the upcast)."""
    return _stack(HStack, blocks, format, dtype)


def vstack(blocks: Sequence[Any], format: str | None = None, dtype: str | None = None) -> Variable:
    """The sparse ``blocks`` one above the other (``format`` default csr, ``dtype`` the upcast)."""
    return _stack(VStack, blocks, format, dtype)
