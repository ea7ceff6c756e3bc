"""SparseType: a scipy.sparse matrix in the csr or csc format, and its checks on values.

A sparse value is a host object (three numpy arrays and a shape), never a
device array: every sparse op runs on the host, and the GPU placement pass
leaves it there. The type holds only the format and the dtype, as Theano's
did; the shape is a value, read with ``x.shape`` at run time.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from arignote.compile.output_copies import CopyRule, register_copy
from arignote.config import config
from arignote.graph.basic import Type, Variable

__all__ = ["SparseType", "sparse_formats", "all_dtypes", "float_dtypes", "int_dtypes", "uint_dtypes",
           "complex_dtypes", "integer_dtypes", "discrete_dtypes", "continuous_dtypes", "is_sparse_value",
           "describe_value"]

FORMAT_CLASSES = {"csr": scipy.sparse.csr_matrix, "csc": scipy.sparse.csc_matrix}
sparse_formats = ["csc", "csr"]
all_dtypes = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float32", "float64", "complex64", "complex128"}
complex_dtypes = sorted(t for t in all_dtypes if t.startswith("complex"))
float_dtypes = sorted(t for t in all_dtypes if t.startswith("float"))
int_dtypes = sorted(t for t in all_dtypes if t.startswith("int"))
uint_dtypes = sorted(t for t in all_dtypes if t.startswith("uint"))
integer_dtypes = int_dtypes + uint_dtypes
discrete_dtypes = integer_dtypes
continuous_dtypes = complex_dtypes + float_dtypes


def is_sparse_value(value: Any) -> bool:
    """Whether ``value`` is a scipy.sparse matrix or array (of any format)."""
    return scipy.sparse.issparse(value)


def describe_value(value: Any) -> str:
    """For error messages: ``float64 csr matrix of shape (3, 4) with 5 stored values``."""
    if is_sparse_value(value):
        return (f"{value.dtype} {value.format} matrix of shape {value.shape} with {value.nnz} "
                "stored values")
    if isinstance(value, np.ndarray):
        return f"{value.dtype} array of shape {value.shape}"
    return f"{type(value).__name__} {value!r:.60}"


class SparseType(Type):
    """The type of a 2-d scipy.sparse matrix of one ``format`` ('csr' or 'csc') and ``dtype``."""

    ndim = 2
    broadcastable = (False, False)  # never broadcasts; shape inference reads its two lengths
    sparse = True  # what the dense layers ask (they do not import this package)
    dtype_set = all_dtypes
    format_cls = FORMAT_CLASSES

    def __init__(self, format: str, dtype: str):
        dtype = str(dtype)
        if dtype == "floatX":
            dtype = config.floatX
        if dtype not in all_dtypes:
            raise TypeError(f"SparseType: unsupported dtype {dtype!r}; use one of "
                            f"{', '.join(sorted(all_dtypes))}")
        if format not in FORMAT_CLASSES:
            raise TypeError(f"SparseType: unsupported format {format!r}; arignote has 'csr' and "
                            "'csc' (convert others with scipy's .tocsr() or .tocsc())")
        self.format = format
        self.dtype = dtype
        self.numpy_dtype = np.dtype(dtype)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.format == self.format and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash((SparseType, self.format, self.dtype))

    def __reduce__(self) -> tuple:
        return SparseType, (self.format, self.dtype)

    def __str__(self) -> str:
        return f"Sparse[{self.dtype}, {self.format}]"

    __repr__ = __str__

    def describe(self) -> str:
        return f"{self.dtype} {self.format} sparse matrix"

    def clone(self, format: str | None = None, dtype: str | None = None) -> SparseType:
        return SparseType(format or self.format, dtype or self.dtype)

    # ------------------------------------------------------------ values
    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None,
               name: str = "value", relax: str = "compile with allow_input_downcast=True") -> Any:
        """``value`` as a scipy matrix of this format and dtype, or a TypeError saying why not.

        A matrix of exactly this format and dtype passes as it is. Otherwise (not
        with ``strict``) another format or a 2-d array is converted, and another
        dtype only when the conversion is lossless (or ``allow_downcast``).
        """
        cls = FORMAT_CLASSES[self.format]
        if type(value) is cls and value.dtype == self.numpy_dtype:
            return value
        if isinstance(value, Variable):
            raise TypeError(f"{name} expects a value ({self.describe()}), got the symbolic variable "
                            f"{value}: pass a scipy.sparse matrix")
        if strict:
            raise TypeError(f"{name} expects a {self.describe()}, got {describe_value(value)}: "
                            f"pass scipy.sparse.{cls.__name__}(v, dtype={self.dtype!r}) "
                            "(strict=True converts nothing)")
        if not is_sparse_value(value):
            array = np.asarray(value) if not isinstance(value, np.ndarray) else value
            if array.dtype.kind not in "biufc" or array.ndim != 2:
                raise TypeError(f"{name} expects a {self.describe()}, got {describe_value(value)}: "
                                f"pass a scipy.sparse matrix, or a 2-d array to be converted")
            value = array
        dtype = np.dtype(value.dtype)
        if dtype != self.numpy_dtype and not allow_downcast and \
                np.result_type(dtype, self.numpy_dtype) != self.numpy_dtype:
            raise TypeError(f"{name} expects a {self.describe()}, got {describe_value(value)}, "
                            f"which would lose precision: convert it with v.astype({self.dtype!r}), "
                            f"or {relax}")
        converted = cls(value, dtype=self.numpy_dtype)
        return converted

    def is_valid_value(self, value: Any) -> bool:
        return is_sparse_value(value) and value.format == self.format

    def values_eq(self, a: Any, b: Any) -> bool:
        """The same shape and values (stored zeros equal absent ones)."""
        return (is_sparse_value(a) and is_sparse_value(b) and a.shape == b.shape
                and abs(a - b).sum() == 0)

    def values_eq_approx(self, a: Any, b: Any, eps: float = 1e-6) -> bool:
        if not (is_sparse_value(a) and is_sparse_value(b)) or a.shape != b.shape:
            return False
        diff = abs(a - b)
        return diff.nnz == 0 or bool(np.max(diff.data) < eps)

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """Whether two values (sparse matrices or arrays) may share memory, through any of
        a sparse matrix's three arrays."""
        parts_a = _parts(a)
        parts_b = _parts(b)
        return any(np.may_share_memory(x, y) for x in parts_a for y in parts_b)

    def get_shape_info(self, value: Any) -> tuple:
        value = self.filter(value)
        return value.shape, value.data.size, value.indices.size, value.indptr.size, value.nnz

    def get_size(self, shape_info: tuple) -> int:
        return (shape_info[1] * self.numpy_dtype.itemsize
                + (shape_info[2] + shape_info[3]) * np.dtype("int32").itemsize)


register_copy(SparseType, CopyRule())  # scipy.sparse's copy() copies the three arrays


def _parts(value: Any) -> list:
    if is_sparse_value(value):  # csr/csc: data, indices, indptr; coo: data, row, col
        return [getattr(value, k) for k in ("data", "indices", "indptr", "row", "col")
                if isinstance(getattr(value, k, None), np.ndarray)]
    if isinstance(value, np.ndarray):
        return [value]
    return []
