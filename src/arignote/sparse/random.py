"""Random sparse matrices (Theano's ``sparse.sandbox.sp2``): ``poisson``, ``Binomial``,
``multinomial``.

As in Theano, they draw from numpy's global generator (``numpy.random.seed``
makes them repeatable), so two calls with the same inputs differ: they are
never constant-folded (``foldable = False``), and they have no gradient.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.gradient import grad_undefined
from arignote.graph.basic import Apply
from arignote.graph.types import disconnected_type
from arignote.scalar.dtypes import FLOAT, INTEGER
from arignote.sparse.convert import ShapeKeepingOp, SparseOp, remove0
from arignote.sparse.ops import _with_data
from arignote.sparse.type import FORMAT_CLASSES, SparseType
from arignote.sparse.variable import as_sparse_variable
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Poisson", "poisson", "Binomial", "csr_fbinomial", "csc_fbinomial", "csr_dbinomial",
           "csc_dbinomial", "Multinomial", "multinomial", "eliminate_zeros"]

eliminate_zeros = remove0


class Poisson(ShapeKeepingOp):
    """Each stored value ``v`` of a sparse matrix replaced by a Poisson draw of mean ``v``
    (draws of 0 not stored)."""

    foldable = False

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        (x,) = inputs
        result = _with_data(x, np.random.poisson(x.data), x.dtype)
        result.eliminate_zeros()
        out[0][0] = result

    def grad(self, inputs: list, output_grads: list) -> list:
        return [grad_undefined(self, 0, inputs[0], "a Poisson draw has no gradient")]


poisson = Poisson()


class Binomial(SparseOp):
    """A sparse matrix of ``format`` and ``dtype`` and the given ``shape`` whose entries are
    binomial draws of ``n`` trials with success probability ``p``."""

    __props__ = ("format", "dtype")
    foldable = False

    def __init__(self, format: str, dtype: str):
        self.format = format
        self.dtype = dtype

    def make_node(self, n: Any, p: Any, shape: Any) -> Apply:
        n, p, shape = as_tensor_variable(n), as_tensor_variable(p), as_tensor_variable(shape)
        for var, what, kinds in ((n, "n", INTEGER), (p, "p", FLOAT), (shape, "shape", INTEGER)):
            if var.dtype not in kinds:
                raise TypeError(f"Binomial: {what} must be {'a float' if kinds is FLOAT else 'an integer'} "
                                f"tensor, got {var.describe()} ({var.type})")
        return Apply(self, [n, p, shape], [SparseType(self.format, self.dtype)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        n, p, shape = inputs
        draws = np.random.binomial(n, p, size=tuple(int(s) for s in shape))
        out[0][0] = FORMAT_CLASSES[self.format](draws, dtype=self.dtype)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [True], [False]]

    def grad(self, inputs: list, output_grads: list) -> list:
        n, p, _ = inputs
        return [grad_undefined(self, 0, n, "the number of trials has no gradient"),
                grad_undefined(self, 1, p, "a binomial draw has no gradient"), disconnected_type()]

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = node.inputs[2]
        return [(shape[0], shape[1])]


csr_fbinomial = Binomial("csr", "float32")
csc_fbinomial = Binomial("csc", "float32")
csr_dbinomial = Binomial("csr", "float64")
csc_dbinomial = Binomial("csc", "float64")


class Multinomial(SparseOp):
    """Row ``i`` of the csr matrix ``p`` (probabilities over its stored positions, summing
    to one) replaced by a multinomial draw of ``n`` (or ``n[i]``) trials."""

    foldable = False

    def make_node(self, n: Any, p: Any) -> Apply:
        n, p = as_tensor_variable(n), as_sparse_variable(p)
        if n.ndim > 1:
            raise TypeError(f"multinomial: n must be a scalar or a vector, got {n.describe()}")
        return Apply(self, [n, p], [p.type()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        n, p = inputs
        if p.format != "csr":
            raise NotImplementedError("multinomial draws rows of a csr matrix: convert p with "
                                      "csr_from_dense or .tocsr() first")
        trials = np.broadcast_to(n, (p.shape[0],)) if np.ndim(n) == 0 else n
        if len(trials) != p.shape[0]:
            raise ValueError(f"multinomial: n has {len(trials)} entries for {p.shape[0]} rows of p")
        data = np.empty_like(p.data)
        for i in range(p.shape[0]):
            start, stop = p.indptr[i], p.indptr[i + 1]
            data[start:stop] = np.random.multinomial(trials[i], p.data[start:stop])
        out[0][0] = _with_data(p, data, p.dtype)

    def grad(self, inputs: list, output_grads: list) -> list:
        n, p = inputs
        return [grad_undefined(self, 0, n, "the number of trials has no gradient"),
                grad_undefined(self, 1, p, "a multinomial draw has no gradient")]

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[1]]


multinomial = Multinomial()
