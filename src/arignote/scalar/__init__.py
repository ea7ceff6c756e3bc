"""Scalar operations: the one table elementwise tensor ops are built from.

Theano's ``theano.scalar`` names are here too: each operation of the table by its
name (``scalar.add``, ``scalar.maximum``, ``scalar.or_``; ``Elemwise(scalar.add)``
builds the elementwise op), the dtype groups (``all_types``, ``float_types``, ...,
as dtype names), and ``constant`` (a 0-d tensor constant: arignote has no separate
scalar type).
"""
from typing import Any

from arignote.scalar.dtypes import ALL, BOOL, COMPLEX, FLOAT, INTEGER, upcast, upgrade_to_float
from arignote.scalar.ops import TABLE, Cast, ScalarOp

__all__ = ["TABLE", "Cast", "ScalarOp", "upcast", "upgrade_to_float", "constant", "int_types",
           "uint_types", "float_types", "complex_types", "integer_types", "discrete_types",
           "continuous_types", "all_types"]

int_types = tuple(d for d in INTEGER if not d.startswith("u"))
uint_types = tuple(d for d in INTEGER if d.startswith("u"))
float_types = FLOAT
complex_types = COMPLEX
integer_types = int_types + uint_types
discrete_types = BOOL + integer_types
continuous_types = FLOAT + COMPLEX
all_types = ALL


def constant(x: Any, name: str | None = None, dtype: str | None = None) -> Any:
    """Theano's ``scalar.constant``: the 0-d constant of the number ``x``."""
    from arignote.tensor.variable import constant as tensor_constant

    result = tensor_constant(x, name=name, dtype=dtype)
    if result.ndim != 0:
        raise TypeError(f"scalar.constant takes a number, got a value of shape {result.data.shape}: "
                        "use tensor.constant for arrays")
    return result


def __getattr__(name: str) -> ScalarOp:
    """``scalar.add``, ``scalar.maximum``, ...: the operation of that name in the table."""
    try:
        return TABLE[name]
    except KeyError:
        raise AttributeError(f"module 'arignote.scalar' has no attribute {name!r}") from None
