"""Dtype rules shared by every scalar op: upcasting and promotion to float.

The rules are numpy's array promotion (never value-based) with Theano's one
amendment for GPU users: when ``config.floatX`` is float32 (or float16), mixing
a float of that width with integers stays at floatX instead of widening to
float64, unless an input is explicitly of a wider float dtype. Under the
default floatX=float64 the rules are exactly numpy's.
"""
from __future__ import annotations

import functools

import numpy as np

from arignote.config import config

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
_FLOAT_RANK = {"float16": 0, "float32": 1, "float64": 2}


def upcast(*dtypes: str) -> str:
    """The dtype of an elementwise result from inputs of these dtypes.

    numpy's promotion of arrays (``int8`` with ``int16`` is ``int16``, ``int32``
    with ``float32`` is ``float64``), except that a float result is kept at
    floatX when floatX is narrower than float64 and no input float is wider
    than floatX: under floatX=float32, ``int32`` with ``float32`` is ``float32``.
    """
    return _upcast(dtypes, config.floatX)


@functools.lru_cache(maxsize=4096)
def _upcast(dtypes: tuple[str, ...], floatx: str) -> str:
    # Memoized: asking numpy (result_type, then the dtype's name) costs microseconds, and
    # building a graph asks for the same few combinations hundreds of times.
    dtype = np.result_type(*dtypes).name
    if dtype in _FLOAT_RANK and floatx != "float64" and _FLOAT_RANK[dtype] > _FLOAT_RANK[floatx]:
        widest = max((_FLOAT_RANK[d] for d in dtypes if d in _FLOAT_RANK), default=None)
        if widest is not None and widest <= _FLOAT_RANK[floatx]:
            return floatx
    return dtype


def upgrade_to_float(*dtypes: str) -> str:
    """The upcast of ``dtypes`` with each discrete dtype first made a float:
    8- and 16-bit integers and bool become float32, wider integers float64."""
    return upcast(*[_TO_FLOAT.get(d, d) for d in dtypes])


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


class NumpyAutocaster:
    """Theano's dtype for a Python number: the first of ``dtypes`` that holds it exactly.

    A numpy value whose dtype is one of ``dtypes`` keeps it. A Python float takes
    floatX when floatX is narrower than float64 and one of ``dtypes``; float16 is
    tried only under floatX=float16; NaN and infinities fit every float. When no
    dtype holds the number exactly it takes the last one (an int past int64:
    uint64). ``autocast_float_as`` changes ``dtypes`` for a ``with`` block. Under
    ``config.cast_policy='numpy'`` a number takes numpy's dtype, and under
    'numpy+floatX' numpy's except that a Python float takes floatX.
    """

    def __init__(self, dtypes: tuple[str, ...]):
        self.dtypes = tuple(dtypes)

    def dtype_of(self, x: object) -> str:
        dtype = getattr(x, "dtype", None)
        floatx = config.floatX
        # Theano's flag, there only under the theano alias (read without building an error).
        policy = config._values.get("cast_policy", "custom")
        if policy != "custom":  # numpy's dtype; 'numpy+floatX': a Python float is floatX
            numpy_dtype = np.asarray(x).dtype.name
            keep = dtype is not None or policy == "numpy" or numpy_dtype not in FLOAT
            return numpy_dtype if keep else floatx
        if dtype is not None and str(dtype) in self.dtypes:
            return str(dtype)
        if isinstance(x, float) and floatx in self.dtypes and floatx != "float64":
            return floatx
        tries = [d for d in self.dtypes if floatx == "float16" or d != "float16"] or list(self.dtypes)
        for dtype in tries:
            if _holds(dtype, x):
                return dtype
        if type(x) is int:  # past int64: uint64 up to its limit, as numpy (OverflowError beyond)
            return smallest_int_dtype(x)
        return tries[-1]

    def __call__(self, x: object) -> np.ndarray:
        return np.asarray(x, dtype=self.dtype_of(x))


def _holds(dtype: str, x: object) -> bool:
    """Whether ``dtype`` represents the number ``x`` exactly (NaN: any float does)."""
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            value = np.asarray(x, dtype=dtype).item()
        except (OverflowError, ValueError):
            return False
    return value == x or (x != x and value != value)


autocast_int = NumpyAutocaster(("int8", "int16", "int32", "int64"))
autocast_float = NumpyAutocaster(("float16", "float32", "float64"))


class autocast_float_as:  # Theano's name, a class used as a context manager
    """``with autocast_float_as('float32'):`` Python floats become float32 constants within."""

    def __init__(self, *dtypes: str):
        self.dtypes = dtypes

    def __enter__(self) -> None:
        self.old_dtypes = autocast_float.dtypes
        autocast_float.dtypes = self.dtypes

    def __exit__(self, *exc: object) -> None:
        autocast_float.dtypes = self.old_dtypes
