"""Shared sparse matrices: ``shared(scipy.sparse matrix)`` (``arignote.shared`` dispatches here).

The aliasing promises of docs/architecture.md hold for the three arrays of a
sparse value: ``shared(v)`` and ``get_value()`` copy unless ``borrow=True``,
``set_value(v)`` copies unless ``borrow=True``, and a borrowed matrix whose
arrays another shared variable holds is copied (``compile.sharedvalue``'s
memory test sees a sparse matrix's ``data``, ``indices`` and ``indptr``).
"""
from __future__ import annotations

from typing import Any

from arignote.compile.sharedvalue import SharedVariable, shared_constructor
from arignote.sparse.type import SparseType, is_sparse_value
from arignote.sparse.variable import _SparseOperators

__all__ = ["SparseSharedVariable", "SparseTensorSharedVariable", "sparse_constructor", "shared"]


class SparseSharedVariable(_SparseOperators, SharedVariable):
    """A shared csr or csc matrix with the sparse operators."""

    def set_value(self, value: Any, borrow: bool = False) -> None:
        """Replace the value (converted to the variable's format and dtype when lossless);
        refused, the old value kept, when it does not fit."""
        new = self._filter(value)
        if not borrow and (new is value or SparseType.may_share_memory(new, value)):
            new = new.copy()
        self._assign(new, borrowed=borrow)

    def zero(self, borrow: bool = False) -> None:
        """Set the value to an empty matrix of the same shape (nothing stored)."""
        value = self.storage[0]
        self._assign(type(value)(value.shape, dtype=value.dtype))

    def _shared_options(self) -> dict:
        return {"format": self.type.format}


SparseTensorSharedVariable = SparseSharedVariable  # Theano's name


@shared_constructor
def sparse_constructor(value: Any, name: str | None = None, strict: bool = False,
                       allow_downcast: bool | None = None, borrow: bool = False,
                       format: str | None = None) -> SparseSharedVariable | None:
    """``shared(m)`` for a scipy.sparse matrix ``m``: copied unless ``borrow=True``;
    ``format`` ('csr', 'csc') converts it (a copy), default its own (other formats: csr)."""
    if not is_sparse_value(value):
        return None
    fmt = format or (value.format if value.format in ("csr", "csc") else "csr")
    stype = SparseType(fmt, value.dtype.name)
    stored = stype.filter(value)
    if not borrow and (stored is value or SparseType.may_share_memory(stored, value)):
        stored = stored.copy()
    return SparseSharedVariable(stype, stored, name=name, strict=strict, allow_downcast=allow_downcast,
                                borrowed=borrow)


def shared(value: Any, name: str | None = None, strict: bool = False, allow_downcast: bool | None = None,
           borrow: bool = False, format: str | None = None) -> SparseSharedVariable:
    """``theano.sparse.shared``: a sparse shared variable, or a TypeError for any other value."""
    var = sparse_constructor(value, name, strict, allow_downcast, borrow, format)
    if var is None:
        raise TypeError(f"sparse.shared needs a scipy.sparse matrix, got {type(value).__name__}: "
                        "use arignote.shared for arrays")
    return var
