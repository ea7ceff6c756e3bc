"""Rewrites of sparse graphs that remove a round trip (Theano's ``sparse.opt`` names).

``csm_properties(CSM(data, indices, indptr, shape))`` is its four inputs, and
``dense_from_sparse(csr_from_dense(m))`` is ``m``: neither builds the matrix.
"""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.sparse.convert import CSM, CSMProperties, DenseFromSparse, SparseFromDense
from arignote.tensor.rewrites.utils import retype


@node_rewriter([CSMProperties])
def local_csm_properties_csm(fgraph: Any, node: Apply) -> list | None:
    """``csm_properties(CSM(*parts))`` -> ``parts`` (each in the type of the output it replaces)."""
    built = node.inputs[0].owner
    if built is None or not isinstance(built.op, CSM):
        return None
    parts = [retype(part, out) for part, out in zip(built.inputs, node.outputs)]
    return None if any(p is None for p in parts) else parts


@node_rewriter([DenseFromSparse])
def local_dense_from_sparse_sparse_from_dense(fgraph: Any, node: Apply) -> list | None:
    """``dense_from_sparse(csr_from_dense(m))`` (or csc) -> ``m``, for a matrix ``m``."""
    built = node.inputs[0].owner
    if built is None or not isinstance(built.op, SparseFromDense) or built.inputs[0].ndim != 2:
        return None
    replacement = retype(built.inputs[0], node.outputs[0])
    return None if replacement is None else [replacement]


rewrites.register(local_csm_properties_csm, "specialize", "fast_run")
rewrites.register(local_dense_from_sparse_sparse_from_dense, "canonicalize", "fast_run", "fast_compile",
                  name="local_dense_from_sparse_sparse_from_dense")
rewrites.register(local_dense_from_sparse_sparse_from_dense, "specialize", "fast_run",
                  "local_dense_from_sparse_sparse_from_dense",
                  name="local_dense_from_sparse_sparse_from_dense_specialize")
