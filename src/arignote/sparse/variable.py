"""SparseVariable and SparseConstant: the operators users write, and the constructors.

Arithmetic on a sparse variable builds sparse ops (``x + y`` is ``add``,
``x * y`` is ``mul``, ``x.T`` is ``transpose``); turning one into a dense
tensor is always explicit (``x.toarray()``, ``dense_from_sparse``), as in
Theano, so a large matrix is never densified by accident.
"""
from __future__ import annotations

from typing import Any

from arignote.config import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.sparse.type import SparseType, describe_value, is_sparse_value
from arignote.tensor.shape import shape as _shape_of
from arignote.tensor.variable import as_tensor_variable

__all__ = ["SparseVariable", "SparseConstant", "as_sparse_variable", "as_sparse",
           "as_sparse_or_tensor_variable", "constant", "matrix", "csc_matrix", "csr_matrix",
           "is_sparse_variable", "csc_dmatrix", "csr_dmatrix", "csc_fmatrix", "csr_fmatrix"]


class _SparseOperators:
    """Operators shared by sparse variables, constants and shared variables."""

    type: SparseType
    # numpy defers to these operators (``ndarray * x`` calls ``x.__rmul__``).
    __array_priority__ = 1001
    __array_ufunc__ = None

    @property
    def ndim(self) -> int:
        return 2

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def format(self) -> str:
        return self.type.format

    @property
    def broadcastable(self) -> tuple[bool, bool]:
        return (False, False)

    @property
    def T(self) -> Variable:
        return _ops.transpose(self)

    @property
    def shape(self) -> Variable:
        """The shape as an int64 vector, read from the matrix (never densified); shape
        inference computes it from the ops' inputs where it can."""
        return _shape_of(self)

    @property
    def size(self) -> Variable:
        """The number of stored values (stored zeros count), as in scipy and Theano."""
        return _convert.csm_data(self).size

    def toarray(self) -> Variable:
        return _convert.dense_from_sparse(self)

    def astype(self, dtype: str) -> Variable:
        return _convert.cast(self, dtype)

    def zeros_like(self) -> Variable:
        return _convert.sp_zeros_like(self)

    def ones_like(self) -> Variable:
        return _convert.sp_ones_like(self)

    def __neg__(self): return _ops.neg(self)
    def __add__(self, other): return _ops.add(self, other)
    def __radd__(self, other): return _ops.add(other, self)
    def __sub__(self, other): return _ops.sub(self, other)
    def __rsub__(self, other): return _ops.sub(other, self)
    def __mul__(self, other): return _ops.mul(self, other)
    def __rmul__(self, other): return _ops.mul(other, self)
    def __lt__(self, other): return _ops.lt(self, other)
    def __le__(self, other): return _ops.le(self, other)
    def __gt__(self, other): return _ops.gt(self, other)
    def __ge__(self, other): return _ops.ge(self, other)
    # == and != keep identity semantics (variables are dict keys); use eq()/neq().

    def __dot__(self, other): return _dot.structured_dot(self, other)
    def __rdot__(self, other): return _dot.structured_dot(other, self)

    def __getitem__(self, index: Any) -> Variable:
        return _subtensor.getitem(self, index)

    def __len__(self) -> int:
        raise TypeError(f"len() of symbolic {self} is unknown until the function runs: "
                        "use x.shape[0]")

    def __iter__(self):
        raise TypeError(f"cannot iterate over the sparse variable {self}")


class SparseVariable(_SparseOperators, Variable):
    """A sparse matrix in the graph."""

    def __str__(self) -> str:
        if self.name is not None or self.owner is not None:
            return Variable.__str__(self)
        return f"SparseVariable{{{self.format},{self.dtype}}}"


class SparseConstant(_SparseOperators, Constant):
    """A sparse matrix fixed when the graph is built; merged with equal constants by value."""

    def signature(self) -> tuple:
        d = self.data
        return (self.type, d.shape, d.data.tobytes(), d.indices.tobytes(), d.indptr.tobytes())

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        return f"SparseConstant{{{self.format},{self.dtype},shape={self.data.shape},nnz={self.data.nnz}}}"


SparseType.variable_type = SparseVariable
SparseType.constant_type = SparseConstant


def is_sparse_variable(x: Any) -> bool:
    return isinstance(x, Variable) and isinstance(x.type, SparseType)


def constant(x: Any, name: str | None = None) -> SparseConstant:
    """A constant holding a copy of the scipy.sparse matrix ``x`` (csr or csc)."""
    if not is_sparse_value(x):
        raise TypeError(f"sparse.constant needs a scipy.sparse matrix, got {describe_value(x)}")
    fmt = x.format if x.format in ("csr", "csc") else "csr"
    return SparseConstant(SparseType(fmt, x.dtype.name), x.copy() if fmt == x.format else x.asformat(fmt),
                          name=name)


def as_sparse_variable(x: Any, name: str | None = None) -> Variable:
    """``x`` as a sparse Variable: sparse variables pass, scipy matrices become constants."""
    if isinstance(x, Apply):
        if len(x.outputs) != 1:
            raise ValueError(f"as_sparse_variable: {x.op} has {len(x.outputs)} outputs; pick one")
        x = x.outputs[0]
    if isinstance(x, Variable):
        if not isinstance(x.type, SparseType):
            raise TypeError(f"expected a sparse variable, got {x.describe()} of type {x.type}: "
                            "convert a dense one with csr_from_dense or csc_from_dense")
        return x
    return constant(x, name=name)


as_sparse = as_sparse_variable


def as_sparse_or_tensor_variable(x: Any, name: str | None = None) -> Variable:
    """``x`` as a sparse Variable when it is sparse, else as a tensor Variable."""
    if is_sparse_variable(x) or is_sparse_value(x):
        return as_sparse_variable(x, name)
    return as_tensor_variable(x, name)


def matrix(format: str, name: str | None = None, dtype: str | None = None) -> SparseVariable:
    """A symbolic sparse matrix of ``format`` ('csr' or 'csc'); ``dtype`` defaults to floatX."""
    return SparseType(format, dtype or config.floatX)(name)


def csc_matrix(name: str | None = None, dtype: str | None = None) -> SparseVariable:
    return matrix("csc", name, dtype)


def csr_matrix(name: str | None = None, dtype: str | None = None) -> SparseVariable:
    return matrix("csr", name, dtype)


csc_dmatrix = SparseType("csc", "float64")
csr_dmatrix = SparseType("csr", "float64")
csc_fmatrix = SparseType("csc", "float32")
csr_fmatrix = SparseType("csr", "float32")


# The operators above dispatch to these modules, which import this one.
from arignote.sparse import convert as _convert  # noqa: E402
from arignote.sparse import ops as _ops  # noqa: E402
from arignote.sparse import products as _dot  # noqa: E402
from arignote.sparse import subtensor as _subtensor  # noqa: E402
