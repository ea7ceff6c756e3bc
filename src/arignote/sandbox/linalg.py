"""Theano's ``sandbox.linalg``: matrix hints (``psd``), the rewrites that use them or that
turn inverses into solves, and ``spectral_radius_bound``.

A ``Hint`` is an identity node that carries facts about a matrix (positive
semi-definite, symmetric, positive). Theano moved hints into an fgraph feature
at canonicalize; here a hint stays a node, read off the variable's owner by the
rewrites of canonicalize and stabilize, and is dropped at specialize, so it
costs nothing at run time. Importing this module registers its rewrites, as
importing Theano's did. The rules return a node's replacement (or
None) from ``(fgraph, node)``; ``RULES`` says which ops each tracks and the phases it runs in.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor import math as _math
from arignote.tensor.blas import Dot, dot
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.gradient_ops import IdentityView
from arignote.tensor.nlinalg import (Det, MatrixInverse, alloc_diag, det, diag, eig, eigh, extract_diag,
                                     matrix_inverse, trace)
from arignote.tensor.reduction import CAReduce, prod
from arignote.tensor.rewrites.utils import op_name, retype, scalar_constant
from arignote.tensor.slinalg import Cholesky, Solve, cholesky, eigvalsh, solve
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Hint", "psd", "hints", "is_hint_node", "is_psd", "is_symmetric", "is_positive",
           "spectral_radius_bound", "remove_hint_nodes", "transinv_to_invtrans", "inv_as_solve",
           "tag_solve_triangular", "no_transpose_symmetric", "psd_solve_with_chol", "local_det_chol",
           "local_log_prod_sqr", "RULES", "cholesky", "solve", "eigvalsh", "matrix_inverse", "diag",
           "extract_diag", "alloc_diag", "det", "eig", "eigh", "trace", "Cholesky", "Solve",
           "MatrixInverse"]


class Hint(IdentityView):
    """``x`` itself, with facts about it for the rewrites: ``Hint(psd=True)(x)``."""

    __props__ = ("hints",)

    def __init__(self, **kwargs: Any):
        self.hints = tuple(sorted(kwargs.items()))

    def grad(self, inputs: list, output_grads: list) -> list:
        return output_grads

    def R_op(self, inputs: list, eval_points: list) -> list:
        return eval_points


def psd(v: Any) -> Variable:
    """``v``, marked symmetric positive semi-definite (``x.T v x >= 0`` for every ``x``)."""
    return Hint(psd=True, symmetric=True)(v)


def is_hint_node(node: Apply | None) -> bool:
    return node is not None and isinstance(node.op, Hint)


def hints(variable: Variable) -> dict:
    """The facts a ``Hint`` attached to ``variable`` (none when no hint made it)."""
    return dict(variable.owner.op.hints) if is_hint_node(variable.owner) else {}


def is_psd(v: Variable) -> bool:
    return bool(hints(v).get("psd", False))


def is_symmetric(v: Variable) -> bool:
    return bool(hints(v).get("symmetric", False))


def is_positive(v: Variable) -> bool:
    """Hinted positive, or an even constant power (``x ** 2``)."""
    if hints(v).get("positive", False):
        return True
    if op_name(v) != "pow":
        return False
    exponent = scalar_constant(v.owner.inputs[1])
    return exponent is not None and not isinstance(exponent, complex) and exponent % 2 == 0


def _is_transpose(node: Apply | None) -> bool:
    return node is not None and isinstance(node.op, DimShuffle) and tuple(node.op.new_order) == (1, 0)


def _is_general_solve(node: Apply) -> bool:
    return isinstance(node.op, Solve) and node.op.A_structure == "general"


def remove_hint_nodes(fgraph: Any, node: Apply) -> list | None:
    """A hint node -> its input (at specialize: the earlier phases have read it)."""
    return list(node.inputs) if is_hint_node(node) else None


def transinv_to_invtrans(fgraph: Any, node: Apply) -> list | None:
    """``inv(X).T`` -> ``inv(X.T)``, so the transpose meets ``X`` (and other rewrites of it)."""
    if _is_transpose(node) and node.inputs[0].owner is not None:
        inverse = node.inputs[0].owner
        if isinstance(inverse.op, MatrixInverse):
            return [inverse.op(node.op(inverse.inputs[0]))]
    return None


def inv_as_solve(fgraph: Any, node: Apply) -> list | None:
    """``dot(inv(A), b)`` -> ``solve(A, b)`` and ``dot(b, inv(A))`` -> ``solve(A.T, b.T).T``:
    a solve is cheaper and more accurate than forming the inverse."""
    if not isinstance(node.op, Dot):
        return None
    left, right = node.inputs
    if left.owner is not None and isinstance(left.owner.op, MatrixInverse):
        return [retype(solve(left.owner.inputs[0], right), node.outputs[0])]
    if right.owner is not None and isinstance(right.owner.op, MatrixInverse):
        A = right.owner.inputs[0]
        return [retype(solve(A if is_symmetric(A) else A.T, left.T).T, node.outputs[0])]
    return None


def tag_solve_triangular(fgraph: Any, node: Apply) -> list | None:
    """A general solve with a Cholesky factor (or its transpose) -> the triangular solve."""
    if not _is_general_solve(node):
        return None
    A, b = node.inputs
    transposed = _is_transpose(A.owner)
    factor = A.owner.inputs[0].owner if transposed else A.owner
    if factor is None or not isinstance(factor.op, Cholesky):
        return None
    lower = factor.op.lower != transposed
    structure = "lower_triangular" if lower else "upper_triangular"
    return [Solve(structure, lower=lower)(A, b)]


def no_transpose_symmetric(fgraph: Any, node: Apply) -> list | None:
    """``X.T`` -> ``X`` for a matrix hinted symmetric."""
    if _is_transpose(node) and is_symmetric(node.inputs[0]):
        return [node.inputs[0]]
    return None


def psd_solve_with_chol(fgraph: Any, node: Apply) -> list | None:
    """``solve(A, b)`` for ``A`` hinted psd -> two triangular solves with ``L = cholesky(A)``."""
    if not _is_general_solve(node) or not is_psd(node.inputs[0]):
        return None
    A, b = node.inputs
    L = cholesky(A)
    inner = Solve("lower_triangular", lower=True)(L, b)
    return [retype(Solve("upper_triangular", lower=False)(L.T, inner), node.outputs[0])]


def local_det_chol(fgraph: Any, node: Apply) -> list | None:
    """``det(X)`` when the graph already has ``L = cholesky(X)`` -> ``prod(diag(L)) ** 2``."""
    if fgraph is None or not isinstance(node.op, Det):
        return None
    for client, _ in fgraph.clients.get(node.inputs[0], []):
        if client != "output" and isinstance(client.op, Cholesky):
            return [retype(prod(extract_diag(client.outputs[0])) ** 2, node.outputs[0])]
    return None


def local_log_prod_sqr(fgraph: Any, node: Apply) -> list | None:
    """``log(prod(p))`` -> ``sum(log(p))`` when ``p`` is known positive (no overflow of the
    product; for other ``p`` the signs forbid it)."""
    if op_name(node.outputs[0]) != "log":
        return None
    reduced = node.inputs[0].owner
    if reduced is None or not isinstance(reduced.op, CAReduce) or reduced.op.scalar_op.name != "mul":
        return None
    p = reduced.inputs[0]
    if not is_positive(p):
        return None
    return [retype(_math.log(p).sum(axis=reduced.op.axis), node.outputs[0])]


# rule -> (the op classes it looks at, its phases); Theano's registrations of each.
RULES: dict[Any, tuple[tuple[type, ...], tuple[str, ...]]] = {
    remove_hint_nodes: ((Hint,), ("specialize",)),
    transinv_to_invtrans: ((DimShuffle,), ("canonicalize",)),
    inv_as_solve: ((Dot,), ("stabilize",)),
    tag_solve_triangular: ((Solve,), ("canonicalize", "stabilize")),
    no_transpose_symmetric: ((DimShuffle,), ("canonicalize", "stabilize", "specialize")),
    psd_solve_with_chol: ((Solve,), ("stabilize",)),
    local_det_chol: ((Det,), ("stabilize", "specialize")),
    local_log_prod_sqr: ((Elemwise,), ("canonicalize", "stabilize", "specialize")),
}



def _register(rule: Any, tracks: tuple[type, ...], phases: tuple[str, ...]) -> None:
    for phase in phases:
        name = rule.__name__ if len(phases) == 1 else f"{rule.__name__}_{phase}"
        tags = ("fast_run", "fast_compile") if rule is remove_hint_nodes else ("fast_run",)
        rewrites.register(node_rewriter(tracks, name)(rule), phase, *tags, "sandbox_linalg", name=name)


for _rule, (_tracks, _phases) in RULES.items():
    _register(_rule, _tracks, _phases)


def spectral_radius_bound(X: Any, log2_exponent: int) -> Variable:
    """An upper bound of the largest eigenvalue of the symmetric matrix ``X``:
    ``trace(X ** (2 ** k)) ** (2 ** -k)`` with ``k = log2_exponent`` squarings (V. Pan,
    1990); a larger ``k`` is tighter and slower, 5 usually suffices."""
    X = as_tensor_variable(X)
    if X.ndim != 2:
        raise TypeError(f"spectral_radius_bound: X must be a matrix, got {X.describe()} with "
                        f"{X.ndim} dimensions")
    if isinstance(log2_exponent, bool) or not isinstance(log2_exponent, (int, np.integer)):
        raise TypeError(f"spectral_radius_bound: log2_exponent must be an int (the number of "
                        f"squarings), got {log2_exponent!r}")
    if log2_exponent <= 0:
        raise ValueError(f"spectral_radius_bound: log2_exponent must be positive, got {log2_exponent}")
    power = X
    for _ in range(int(log2_exponent)):
        power = dot(power, power)
    return trace(power) ** (2.0 ** -int(log2_exponent))
