"""``theano.tensor.blas_scipy``: Theano's Ger through scipy's BLAS (``?ger``, ``?geru``).

arignote's rewrites do not create it (its Gemm and Ger use numpy's BLAS: see
``arignote.tensor.gemm`` on the second OpenBLAS thread pool scipy brings); Theano code that
builds it by hand gets the same values as ``Ger``.
"""
from __future__ import annotations


import numpy as np

from arignote.graph.basic import Apply
from arignote.tensor.gemm import Ger

__all__ = ["ScipyGer", "scipy_ger_no_inplace", "scipy_ger_inplace", "have_fblas"]

try:
    from scipy.linalg import blas as _scipy_blas
except ImportError:  # scipy is optional: Ger's numpy form then computes it
    _scipy_blas = None
have_fblas = _scipy_blas is not None
# dtype -> scipy's rank-1 update (the unconjugated one for complex, as Ger's outer product).
_GER_FUNCTIONS = {"float32": "sger", "float64": "dger", "complex64": "cgeru", "complex128": "zgeru"}


class ScipyGer(Ger):
    """``A + alpha * outer(x, y)`` computed by scipy's BLAS where it has the dtype."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        A, alpha, x, y = inputs
        name = _GER_FUNCTIONS.get(A.dtype.name)
        if not have_fblas or name is None or A.size == 0 or A.shape != (x.shape[0], y.shape[0]):
            super().perform(node, inputs, output_storage)  # Ger's numpy form (and its shape error)
            return
        ger = getattr(_scipy_blas, name)
        if A.flags.c_contiguous:  # BLAS is column-major: A's transpose is, so update that
            out = ger(alpha, y, x, a=A.T, overwrite_a=self.destructive).T
        else:
            out = ger(alpha, x, y, a=A, overwrite_a=self.destructive)
        output_storage[0][0] = np.asarray(out, dtype=A.dtype)


scipy_ger_no_inplace = ScipyGer(False)
scipy_ger_inplace = ScipyGer(True)
