"""Dtype rules shared by every scalar op: upcasting and promotion to float."""
from __future__ import annotations

import numpy as np

BOOL = ("bool",)
INTEGER = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT = ("float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
ALL = BOOL + INTEGER + FLOAT + COMPLEX
DISCRETE = BOOL + INTEGER

# Integers become the smallest float that represents them exactly enough, as Theano did.
_TO_FLOAT = {"bool": "float32", "int8": "float32", "uint8": "float32", "int16": "float32",
             "uint16": "float32", "int32": "float64", "uint32": "float64",
             "int64": "float64", "uint64": "float64"}


def upcast(*dtypes: str) -> str:
    """The dtype numpy gives when arrays of these dtypes meet (never value-based)."""
    return np.result_type(*[np.dtype(d) for d in dtypes]).name


def upgrade_to_float(*dtypes: str) -> str:
    """The upcast of ``dtypes``, promoted to a float dtype when it is discrete."""
    dtype = upcast(*dtypes)
    return _TO_FLOAT.get(dtype, dtype)


def is_discrete(dtype: str) -> bool:
    return dtype in DISCRETE


def smallest_int_dtype(value: int) -> str:
    for dtype in ("int8", "int16", "int32", "int64"):
        info = np.iinfo(dtype)
        if info.min <= value <= info.max:
            return dtype
    if 0 <= value <= np.iinfo("uint64").max:
        return "uint64"
    raise OverflowError(f"integer {value} does not fit in 64 bits")
