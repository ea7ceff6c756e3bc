"""``theano.misc.may_share_memory``: whether two values may share memory."""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.compile.sharedvalue import shares_memory

__all__ = ["may_share_memory"]


def _array_like(value: Any) -> bool:
    return isinstance(value, np.ndarray) or getattr(value, "indptr", None) is not None


def may_share_memory(a: Any, b: Any, raise_other_type: bool = True) -> bool:
    """``numpy.may_share_memory`` for arrays; False for other values unless
    ``raise_other_type``, which makes them a TypeError as in Theano."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.may_share_memory(a, b))
    if _array_like(a) and _array_like(b):  # a scipy.sparse matrix, through its three arrays
        return bool(shares_memory(a, b))
    if raise_other_type:
        raise TypeError(f"may_share_memory takes numpy arrays, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    return False
