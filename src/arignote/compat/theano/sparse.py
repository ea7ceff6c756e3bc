"""``theano.sparse``: a view of ``arignote.sparse``, plus the few names of Theano's layout.

``enable_sparse`` is True (scipy.sparse is a core dependency). Theano's
``sparse.basic`` and ``sparse.type`` resolve to the view, ``sparse.utils`` and
``sparse.opt`` to this module (with its ``sd_csc``/``sd_csr``, ``UsmmCscDense``,
``AddSD_ccode`` and rewrites); what arignote does not implement (the other C
implementations of ``sparse.opt``, ...) is listed in
docs/theano-differences.md, and asking for it raises AttributeError naming it.
"""
from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import scipy.sparse

from arignote.sparse.products import StructuredDotCSC, StructuredDotCSR, sd_csc, sd_csr  # noqa: F401
from arignote.sparse.ops import AddSD_ccode  # noqa: F401
from arignote.sparse.rewrites import (local_csm_properties_csm,  # noqa: F401
                                      local_dense_from_sparse_sparse_from_dense, local_usmm, local_usmm_csx)
from arignote.sparse.parts import (MulSDCSC, MulSDCSR, MulSVCSR, SamplingDotCSR,  # noqa: F401
                                   StructuredAddSVCSR, mul_s_d_csc, mul_s_d_csr, mul_s_v_csr, sampling_dot_csr,
                                   structured_add_s_v_csr)
from arignote.sparse.convert import CSMGradC  # noqa: F401
from arignote.sparse.rewrites import local_csm_grad_c, local_mul_s_d, local_mul_s_v, local_structured_add_s_v  # noqa: F401
from arignote.sparse.usmm import UsmmCscDense, usmm_csc_dense, usmm_csc_dense_inplace  # noqa: F401
from arignote.sparse.type import FORMAT_CLASSES, SparseType
from arignote.sparse.variable import is_sparse_variable
from arignote.tensor.type import TensorType

__all__ = ["enable_sparse", "_is_sparse", "_is_dense", "_is_sparse_variable", "_is_dense_variable",
           "_mtypes", "hash_from_sparse", "StructuredDotCSC", "StructuredDotCSR", "sd_csc", "sd_csr",
           "local_csm_properties_csm", "local_dense_from_sparse_sparse_from_dense", "AddSD_ccode",
           "UsmmCscDense", "usmm_csc_dense", "usmm_csc_dense_inplace", "local_usmm", "local_usmm_csx",
           "MulSDCSC", "MulSDCSR", "MulSVCSR", "SamplingDotCSR", "StructuredAddSVCSR", "mul_s_d_csc", "mul_s_d_csr",
           "mul_s_v_csr", "sampling_dot_csr", "structured_add_s_v_csr", "local_mul_s_d", "local_mul_s_v",
           "local_structured_add_s_v", "CSMGradC", "local_csm_grad_c"]

enable_sparse = True
_mtypes = [FORMAT_CLASSES["csc"], FORMAT_CLASSES["csr"]]


def _is_sparse(x: Any) -> bool:
    """Whether the value ``x`` is a scipy.sparse matrix (False for an ndarray)."""
    if not isinstance(x, (scipy.sparse.spmatrix, np.ndarray, tuple, list)) and not scipy.sparse.issparse(x):
        raise NotImplementedError(f"_is_sparse takes a scipy.sparse matrix or an ndarray, got {type(x).__name__}")
    return scipy.sparse.issparse(x)


def _is_dense(x: Any) -> bool:
    return not _is_sparse(x)


def _is_sparse_variable(x: Any) -> bool:
    """Whether ``x`` is a sparse Variable (raising for what is not a Variable of an array type)."""
    if not isinstance(getattr(x, "type", None), (SparseType, TensorType)):
        raise NotImplementedError(f"_is_sparse_variable takes a sparse or tensor variable, got {x!r}")
    return is_sparse_variable(x)


def _is_dense_variable(x: Any) -> bool:
    return not _is_sparse_variable(x)


def hash_from_sparse(data: Any) -> str:
    """A digest of a sparse matrix's values, pattern, shape, dtype and format."""
    digest = hashlib.sha256()
    for part in (data.data, data.indices, data.indptr):
        digest.update(np.ascontiguousarray(part).tobytes())
    digest.update(f"{data.shape}{data.dtype}{data.format}".encode())
    return digest.hexdigest()
