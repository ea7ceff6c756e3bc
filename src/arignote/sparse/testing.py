"""``verify_grad_sparse``: finite-difference checks of gradients through sparse inputs.

The point's sparse matrices are perturbed through their stored values
(``structured=True``: only those, the pattern fixed) or through all their
entries (``structured=False``: the dense matrix, converted back to sparse),
and a sparse output is read as its dense matrix (or, structured, its stored
values), so ``arignote.verify_grad`` sees dense inputs and a dense output.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from arignote.gradient import verify_grad
from arignote.graph.basic import Variable
from arignote.sparse import convert as cv
from arignote.sparse.type import is_sparse_value
from arignote.sparse.variable import is_sparse_variable

__all__ = ["verify_grad_sparse"]


def _rebuild(p: Any, structured: bool) -> Callable[[Variable], Variable]:
    """The symbolic sparse matrix ``p`` is, made from the dense array verify_grad perturbs."""
    if not structured:
        return cv.SparseFromDense(p.format)
    csm = cv.CSM(p.format)
    indices, indptr, shape = p.indices.copy(), p.indptr.copy(), np.asarray(p.shape)
    return lambda data: csm(data, indices, indptr, shape)


def verify_grad_sparse(op: Callable[..., Variable], pt: Sequence[Any], structured: bool = False,
                       *args: Any, **kwargs: Any) -> None:
    """``verify_grad`` of ``op`` at ``pt``, whose items may be scipy.sparse matrices (csr or csc).

    ``args`` and ``kwargs`` go to ``arignote.verify_grad`` (``n_tests``, ``rng``,
    ``eps``, tolerances). Raises ``verify_grad.E_grad`` on a mismatch.
    """
    builders, points = [], []
    for p in pt:
        if is_sparse_value(p):
            p = p.tocsr() if p.format not in ("csr", "csc") else p
            points.append(np.array(p.data) if structured else p.toarray())
            builders.append(_rebuild(p, structured))
        else:
            points.append(np.asarray(p))
            builders.append(None)

    def dense_op(*inputs: Variable) -> Variable:
        out = op(*[b(i) if b is not None else i for b, i in zip(builders, inputs)])
        if is_sparse_variable(out):
            return cv.csm_data(out) if structured else cv.DenseFromSparse(structured=False)(out)
        return out

    verify_grad(dense_op, points, *args, **kwargs)
