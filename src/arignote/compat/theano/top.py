"""Names the ``theano`` package had at its top level that arignote keeps out of its own."""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from arignote.compile.profiling import ProfileStats
from arignote.graph.types import Generic, generic

__all__ = ["_asarray", "Generic", "generic", "ProfileStats", "sparse_grad"]

# Theano's logger and its handler: arignote's modules log under ``arignote.*``, so the alias's
# ``theano_logger`` is that logger, with Theano's handler and format (``WARNING (name): text``).
theano_logger = logging.getLogger("arignote")
logging_default_handler = logging.StreamHandler()
logging_default_handler.setFormatter(logging.Formatter(fmt="%(levelname)s (%(name)s): %(message)s"))
if not theano_logger.handlers:
    theano_logger.addHandler(logging_default_handler)
__all__ += ["theano_logger", "logging_default_handler"]


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

# Theano's top level re-exported the linkers of ``theano.gof``.
from arignote.compat.theano.gof import (CLinker, Container, DualLinker, LocalLinker, OpWiseCLinker,  # noqa: E402
                                        PerformLinker)
from arignote.compile.linkers import Linker  # noqa: E402
from arignote.graph.errors import InconsistencyError  # noqa: E402

__all__ += ["CLinker", "Container", "DualLinker", "Linker", "LocalLinker", "OpWiseCLinker", "PerformLinker",
            "InconsistencyError"]
