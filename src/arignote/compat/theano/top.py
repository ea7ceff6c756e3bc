"""Names the ``theano`` package had at its top level that arignote keeps out of its own."""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.compile.profiling import ProfileStats
from arignote.graph.types import generic

__all__ = ["_asarray", "generic", "ProfileStats", "sparse_grad"]


def _asarray(a: Any, dtype: Any, order: str | None = None) -> np.ndarray:
    """Theano's ``theano._asarray``: ``numpy.asarray`` that always returns exactly ``dtype``."""
    dtype = np.dtype(dtype)
    result = np.asarray(a, dtype=dtype, order=order)
    return result if result.dtype == dtype else result.view(dtype)


def sparse_grad(var: Any) -> Any:
    """Theano's ``theano.sparse_grad``: ``var`` (``W[idx]``) whose gradient with respect to ``W``
    is sparse; see ``arignote.sparse.sparse_grad``."""
    # Imported here: scipy.sparse would cost every ``import theano`` half a second.
    from arignote.sparse.subtensor import sparse_grad as make
    return make(var)
