"""Rewrites of sparse graphs (Theano's ``sparse.opt`` names).

``csm_properties(CSM(data, indices, indptr, shape))`` is its four inputs, and
``dense_from_sparse(csr_from_dense(m))`` is ``m``: neither builds the matrix.
``z - a * dot(x, y)`` becomes one ``usmm`` (usmm.py). The in-place phase lets
the ops that can overwrite an input do so where nothing needs it afterwards.
"""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply, Variable
from arignote.graph.destroyhandler import can_destroy, replace_in_place
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter, node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.sparse.convert import (CSM, CSMGrad, CSMGradC, CSMProperties, DenseFromSparse,
                                     EnsureSortedIndices, Remove0, SparseFromDense, csm_properties)
from arignote.sparse.ops import AddSD, AddSD_ccode, MulSD, StructuredAddSV
from arignote.sparse.parts import mul_s_d_csc, mul_s_d_csr, mul_s_v_csr, sdg_csc, sdg_csr, structured_add_s_v_csr
from arignote.sparse.products import Dot, StructuredDotGrad
from arignote.sparse.usmm import Usmm, UsmmCscDense, usmm, usmm_csc_dense, usmm_csc_dense_inplace
from arignote.sparse.variable import is_sparse_variable
from arignote.tensor import math as tm
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.rewrites.utils import op_name, retype, single_client


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


@node_rewriter([CSMGrad])
def local_csm_grad_c(fgraph: Any, node: Apply) -> list | None:
    """``CSMGrad`` of a sparse gradient of the matrix's format -> ``CSMGradC`` on the
    gradient's parts (which local_csm_properties_csm then reads from where it was built)."""
    g = node.inputs[4]
    if not is_sparse_variable(g) or g.format != node.op.format:
        return None
    return [CSMGradC()(*node.inputs[:4], *csm_properties(g))]


def _on_parts(values_op: Any, node: Apply) -> list:
    """``node``'s sparse result as ``CSM(values_op(x's parts, b), x's indices, indptr, shape)``."""
    x, b = node.inputs
    data, indices, indptr, shape = csm_properties(x)
    return [CSM(x.format)(values_op(data, indices, indptr, b), indices, indptr, shape)]


@node_rewriter([MulSD])
def local_mul_s_d(fgraph: Any, node: Apply) -> list | None:
    """``mul_s_d(x, m)`` for a full dense matrix ``m`` -> the values ``mul_s_d_csr``/``_csc``
    computes, on x's pattern."""
    if type(node.op) is not MulSD or node.inputs[1].ndim != 2 or any(node.inputs[1].broadcastable):
        return None
    return _on_parts(mul_s_d_csr if node.inputs[0].format == "csr" else mul_s_d_csc, node)


@node_rewriter([MulSD])
def local_mul_s_v(fgraph: Any, node: Apply) -> list | None:
    """``mul_s_v(x, v)`` (or ``mul_s_d`` of a vector) for a csr ``x`` -> ``mul_s_v_csr``'s values."""
    return _on_parts(mul_s_v_csr, node) if node.inputs[1].ndim == 1 and node.inputs[0].format == "csr" else None


@node_rewriter([StructuredAddSV])
def local_structured_add_s_v(fgraph: Any, node: Apply) -> list | None:
    """``structured_add_s_v(x, v)`` for a csr ``x`` -> ``structured_add_s_v_csr``'s values."""
    return _on_parts(structured_add_s_v_csr, node) if node.inputs[0].format == "csr" else None


@node_rewriter([StructuredDotGrad])
def local_structured_dot_grad(fgraph: Any, node: Apply) -> list | None:
    """``structured_dot``'s gradient with respect to ``a`` -> ``sdg_csr``/``sdg_csc``'s values
    on a's pattern."""
    a, b, gz = node.inputs
    if gz.ndim != 2:
        return None
    _, indices, indptr, shape = csm_properties(a)
    values = (sdg_csr if a.format == "csr" else sdg_csc)(indices, indptr, b, gz)
    dtype = node.outputs[0].dtype
    return [CSM(a.format)(values if values.dtype == dtype else tm.cast(values, dtype), indices, indptr, shape)]


# The sum Elemwise usmm absorbs -> the sign of the product in it and which of its two inputs
# may hold the product.
_USMM_SUMS = {"sub": (-1, (1,)), "add": (1, (1, 0))}


def _scaled_dot(fgraph: Any, var: Variable) -> tuple[Variable | None, Variable, Variable] | None:
    """``(alpha, x, y)`` when ``var`` is ``alpha * dot(x, y)`` (a sparse Dot of matrices times
    scalar factors, the products nested or not; ``alpha`` None for the bare Dot), each used only
    there, else None."""
    if not single_client(fgraph, var):
        return None
    if var.owner is not None and type(var.owner.op) is Dot:
        return (None, *var.owner.inputs) if all(v.ndim == 2 for v in (var, *var.owner.inputs)) else None
    if op_name(var) != "mul":
        return None
    scales = [f for f in var.owner.inputs if all(f.broadcastable)]
    rest = [f for f in var.owner.inputs if not all(f.broadcastable)]
    found = _scaled_dot(fgraph, rest[0]) if len(rest) == 1 and scales else None
    if found is None:
        return None
    alpha, x, y = found
    scales += [] if alpha is None else [alpha]
    return (scales[0] if len(scales) == 1 else tm.mul(*scales)), x, y


@node_rewriter([Elemwise])
def local_usmm(fgraph: Any, node: Apply) -> list | None:
    """``z - a * dot(x, y)`` -> ``usmm(-a, x, y, z)`` (and ``z + a * dot(x, y)``, in either
    order, -> ``usmm(a, x, y, z)``) where ``x`` or ``y`` is sparse and ``a`` a scalar."""
    found = _USMM_SUMS.get(op_name(node.outputs[0]))
    if found is None or len(node.inputs) != 2:
        return None
    sign, positions = found
    for at in positions:
        scaled = _scaled_dot(fgraph, node.inputs[at])
        z = node.inputs[1 - at]
        if scaled is not None and scaled[0] is not None and z.ndim == 2 and not is_sparse_variable(z):
            alpha, x, y = scaled
            new = usmm(tm.neg(alpha) if sign < 0 else alpha, x, y, z)
            replacement = retype(new, node.outputs[0], same_shape=True)
            return None if replacement is None else [replacement]
    return None


@node_rewriter([Usmm])
def local_usmm_csx(fgraph: Any, node: Apply) -> list | None:
    """``usmm`` of a csc ``x`` and a dense ``y`` -> ``UsmmCscDense`` on x's parts (a float
    result), the form the in-place phase can make write into ``z``."""
    alpha, x, y, z = node.inputs
    if not is_sparse_variable(x) or x.format != "csc" or is_sparse_variable(y) \
            or node.outputs[0].dtype not in ("float32", "float64"):
        return None
    data, indices, indptr, shape = csm_properties(x)
    return [usmm_csc_dense(alpha, data, indices, indptr, shape[0], y, z)]


# An op that can overwrite one of its inputs -> (that input's position, whether a node of it
# still copies, its in-place form for the node).
_INPLACE = {
    UsmmCscDense: (6, lambda op: not op.inplace, lambda node: usmm_csc_dense_inplace),
    AddSD: (1, lambda op: not getattr(op, "inplace", False),
            lambda node: AddSD_ccode(node.inputs[0].format, inplace=True)),
    AddSD_ccode: (1, lambda op: not op.inplace, lambda node: AddSD_ccode(node.op.format, inplace=True)),
    Remove0: (0, lambda op: not op.inplace, lambda node: Remove0(inplace=True)),
    EnsureSortedIndices: (0, lambda op: not op.inplace, lambda node: EnsureSortedIndices(inplace=True)),
}


class InplaceSparse(GraphRewriter):
    """Each op of ``_INPLACE`` writes into its input where the destroy check proves nothing
    else needs that buffer and the buffer has the result's type (Theano's
    ``local_inplace_remove0``, ``local_inplace_addsd_ccode``, ``local_usmm_csc_dense_inplace``)."""

    name = "local_inplace_sparse"

    def apply(self, fgraph: FunctionGraph) -> int:
        changes = 0
        for node in fgraph.toposort():
            found = _INPLACE.get(type(node.op)) if node in fgraph.apply_nodes else None
            if found is None:
                continue
            at, copies, inplace_op = found
            if copies(node.op) and node.inputs[at].type == node.outputs[0].type and can_destroy(
                    fgraph, node, at) and replace_in_place(fgraph, node.outputs[0], inplace_op(node)(*node.inputs),
                                                           self.name):
                changes += 1
        return changes


for _rewrite in (local_csm_grad_c, local_mul_s_d, local_mul_s_v, local_structured_add_s_v,
                 local_structured_dot_grad):
    rewrites.register(_rewrite, "specialize", "fast_run", name=_rewrite.name)
rewrites.register(local_usmm, "specialize", "fast_run", name="local_usmm")
rewrites.register(local_usmm_csx, "specialize", "fast_run", name="local_usmm_csx")
rewrites.register(InplaceSparse(), "inplace", "fast_run")
