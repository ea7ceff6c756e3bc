"""Scalar operations: the one table elementwise tensor ops are built from, and scalar graphs.

Theano's ``theano.scalar`` names are here too: each operation of the table by its
name (``scalar.add``, ``scalar.maximum``, ``scalar.or_``; ``Elemwise(scalar.add)``
builds the elementwise op), the scalar types and their constructors (``float64``,
``int8``, ..., ``floats('xyz')``; ``ScalarType(dtype)``), the dtype groups as tuples
of those types (``all_types``, ``float_types``, ...), ``constant``, ``as_scalar``
and the autocasting rules of Python numbers. Calling an op on scalar variables
builds a scalar graph, which ``function`` compiles like any other.
"""
from typing import Any

from arignote.scalar.composite import Composite
from arignote.scalar.dtypes import (ALL, BOOL, COMPLEX, FLOAT, INTEGER, NumpyAutocaster, autocast_float,
                                    autocast_float_as, autocast_int, upcast, upgrade_to_float)
from arignote.scalar.ops import TABLE, Cast, ComplexError, InRange, ScalarOp, inclosedrange, inopenrange
from arignote.scalar.type import (ScalarType, bool_, complex64, complex128, complexs, float16, float32,
                                  float64, floats, get_scalar_type, int8, int16, int32, int64, ints,
                                  uint8, uint16, uint32, uint64)
from arignote.scalar.variable import ScalarConstant, ScalarVariable, as_scalar, constant

__all__ = ["TABLE", "Cast", "ComplexError", "InRange", "inopenrange", "inclosedrange", "Composite", "ScalarOp", "ScalarType", "Scalar", "ScalarVariable",
           "ScalarConstant", "get_scalar_type", "as_scalar", "constant", "cast", "upcast", "upgrade_to_float",
           "NumpyAutocaster", "autocast_int", "autocast_float", "autocast_float_as",
           "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
           "float32", "float64", "complex64", "complex128", "floats", "ints", "complexs",
           "int_types", "uint_types", "float_types", "complex_types", "integer_types", "discrete_types",
           "continuous_types", "all_types"]

Scalar = ScalarType  # Theano 1.0's name of the type

int_types = tuple(get_scalar_type(d) for d in INTEGER if not d.startswith("u"))
uint_types = tuple(get_scalar_type(d) for d in INTEGER if d.startswith("u"))
float_types = tuple(get_scalar_type(d) for d in FLOAT)
complex_types = tuple(get_scalar_type(d) for d in COMPLEX)
integer_types = int_types + uint_types
discrete_types = (bool_,) + integer_types
continuous_types = float_types + complex_types
all_types = tuple(get_scalar_type(d) for d in BOOL + INTEGER + FLOAT + COMPLEX)
assert {t.dtype for t in all_types} == set(ALL)


def cast(x: Any, dtype: str) -> Any:
    """``x`` (a scalar variable or a number) converted to ``dtype``; ``x`` itself when it has it."""
    x = as_scalar(x)
    dtype = get_scalar_type(dtype).dtype
    return x if x.type.dtype == dtype else Cast(dtype)(x)


_OTHER_NAMES = {"bool": bool_}


def __getattr__(name: str) -> Any:
    """``scalar.add``, ``scalar.maximum``, ...: the operation of that name in the table
    (and ``scalar.bool``, which a module-level name would shadow Python's ``bool`` with)."""
    try:
        return TABLE[name] if name in TABLE else _OTHER_NAMES[name]
    except KeyError:
        raise AttributeError(f"module 'arignote.scalar' has no attribute {name!r}") from None
