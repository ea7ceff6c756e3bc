"""``theano.tensor.blas_c``: the names of Theano's C implementations of Ger and Gemv.

arignote compiles no C for them: ``CGer`` and ``CGemv`` are Ger and Gemv (numpy's BLAS), and
its rewrites create Gemv itself, not CGemv (docs/theano-differences.md).
"""
from __future__ import annotations

from arignote.tensor.gemm import Gemv, Ger

__all__ = ["CGer", "CGemv", "cger_inplace", "cger_no_inplace", "cgemv_inplace", "cgemv_no_inplace",
           "check_force_gemv_init"]


class CGer(Ger):
    """Theano's C Ger: here Ger itself."""


class CGemv(Gemv):
    """Theano's C Gemv: here Gemv itself."""


cger_inplace, cger_no_inplace = CGer(True), CGer(False)
cgemv_inplace, cgemv_no_inplace = CGemv(True), CGemv(False)


def check_force_gemv_init() -> bool:
    """Whether Gemv must zero ``y`` before a ``beta == 0`` call (some BLAS read it, NaN
    included): False, as arignote's Gemv ignores ``y`` then."""
    return False
