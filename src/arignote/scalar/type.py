"""ScalarType: the type of 0-d scalar-typed graph variables (Theano's ``theano.scalar.Scalar``).

A graph of scalar variables is built from the same table of scalar operations
that Elemwise maps over arrays (``scalar.add(x, y)`` applies the table's ``add``
to two scalars); its values are numpy scalars of the type's dtype. Tensors and
scalars meet through ``tensor.tensor_from_scalar`` / ``scalar_from_tensor``.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from arignote.config import config
from arignote.graph.basic import Type, Variable
from arignote.scalar.dtypes import ALL


class ScalarType(Type):
    """The type of a scalar of one dtype; ``ScalarType('float64')('x')`` makes a variable."""

    ndim = 0
    broadcastable = ()

    def __init__(self, dtype: str):
        if dtype == "floatX":
            dtype = config.floatX
        try:
            name = np.dtype(dtype).name if dtype is not None else None
        except TypeError:
            name = None
        if name not in ALL:
            raise TypeError(f"ScalarType: {dtype!r} is not a scalar dtype; use one of {', '.join(ALL)}")
        self.dtype = name
        self.numpy_dtype = np.dtype(name)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash((ScalarType, self.dtype))

    def __str__(self) -> str:
        return self.dtype

    def __repr__(self) -> str:
        return f"ScalarType({self.dtype})"

    def __reduce__(self) -> tuple:
        return get_scalar_type, (self.dtype,)

    def describe(self) -> str:
        return f"a {self.dtype} scalar"

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None,
               name: str = "value", relax: str = "compile with allow_input_downcast=True") -> np.generic:
        """``value`` as a numpy scalar of this dtype, or TypeError saying why not.

        The tensor rules apply (those of a 0-d TensorType of this dtype): a value of
        this dtype passes, a lossless conversion is made, a Python number that
        survives the conversion exactly passes, ``allow_downcast=True`` accepts any.
        """
        if isinstance(value, np.generic) and value.dtype == self.numpy_dtype:
            return value
        if strict:
            raise TypeError(f"{name} expects {self.describe()}, got {type(value).__name__} {value!r}: "
                            f"pass a numpy.{self.dtype} (strict=True converts nothing)")
        if isinstance(value, Variable):
            raise TypeError(f"{name} expects a value ({self.describe()}), got the symbolic variable "
                            f"{value}: pass a number, or use givens= to substitute a graph")
        from arignote.tensor.type import TensorType

        data = TensorType(self.dtype, ()).filter(value, allow_downcast=allow_downcast, name=name, relax=relax)
        return data[()]

    def values_eq(self, a: Any, b: Any) -> bool:
        return bool(np.all(np.asarray(a) == np.asarray(b)))

    def values_eq_approx(self, a: Any, b: Any, tolerance: float = 1e-4) -> bool:
        return bool(np.allclose(a, b, rtol=tolerance, atol=tolerance, equal_nan=True))

    def upcast(self, *others: ScalarType) -> str:
        """The dtype of an elementwise result of this type and ``others``."""
        from arignote.scalar.dtypes import upcast

        return upcast(self.dtype, *[o.dtype for o in others])

    def make_variable(self, name: str | None = None) -> Variable:
        from arignote.scalar.variable import ScalarVariable

        return ScalarVariable(self, name=name)

    def make_constant(self, value: Any, name: str | None = None) -> Variable:
        from arignote.scalar.variable import ScalarConstant

        return ScalarConstant(self, value, name=name)

    def host_variable(self, var: Variable) -> Variable:
        """The 0-d tensor of ``var``: how ``as_tensor_variable`` takes a scalar (Theano's rule)."""
        from arignote.tensor.scalar_conversion import tensor_from_scalar

        return tensor_from_scalar(var)


@functools.cache
def get_scalar_type(dtype: str) -> ScalarType:
    """The one ScalarType of ``dtype`` (types compare by dtype; this only saves the objects)."""
    return ScalarType(dtype)


def _several(dtype: str) -> Any:
    def make(names: str | list[str]) -> Variable | list[Variable]:
        """One scalar variable per name (``floats('xyz')``); a one-letter string gives one variable."""
        if len(names) == 1:
            return get_scalar_type(dtype)(names[0] if isinstance(names, list) else names)
        return [get_scalar_type(dtype)(n) for n in names]
    make.__name__ = make.__qualname__ = f"{dtype}s"
    return make


# Theano's constructors are the types themselves: ``scalar.float64('x')``, ``v.type == float64``;
# ``floats('xyz')`` makes several float64 scalars.
bool_ = get_scalar_type("bool")
int8, int16, int32, int64 = (get_scalar_type(d) for d in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (get_scalar_type(d) for d in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (get_scalar_type(d) for d in ("float16", "float32", "float64"))
complex64, complex128 = (get_scalar_type(d) for d in ("complex64", "complex128"))
floats = _several("float64")
ints = _several("int64")
complexs = _several("complex128")
