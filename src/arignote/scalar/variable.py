"""Scalar-typed graph variables: their operators, constants and ``as_scalar``.

``x + y`` on scalar variables applies the table's ``add`` (see ops.py); a
Python number on either side becomes a ScalarConstant of Theano's dtype for
it (ints the smallest int dtype that holds them, floats ``autocast_float``'s).
A tensor on either side hands the operation to the tensor, which takes the
scalar as a 0-d tensor (``tensor_from_scalar``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.scalar import ops
from arignote.scalar.dtypes import autocast_float, smallest_int_dtype
from arignote.scalar.type import ScalarType, get_scalar_type


def _binary(op: ops.ScalarOp) -> tuple[Any, Any]:
    def forward(self: Variable, other: Any) -> Any:
        return NotImplemented if _defers(other) else op(self, other)

    def reflected(self: Variable, other: Any) -> Any:
        return NotImplemented if _defers(other) else op(other, self)
    return forward, reflected


def _defers(other: Any) -> bool:
    """A non-scalar variable (a tensor) on the other side: its own operator takes the scalar."""
    return isinstance(other, Variable) and not isinstance(other.type, ScalarType)


class _ScalarOperators:
    """Python's operators on scalar variables, each the table's op of that meaning."""

    _transient = ("_eval_cache",)  # functions compiled by eval()
    ndim = 0  # as Theano's, so code taking tensors and scalars alike may read it
    broadcastable = ()

    @property
    def dtype(self) -> str:
        return self.type.dtype

    __add__, __radd__ = _binary(ops.add)
    __sub__, __rsub__ = _binary(ops.sub)
    __mul__, __rmul__ = _binary(ops.mul)
    __truediv__, __rtruediv__ = _binary(ops.true_div)
    __floordiv__, __rfloordiv__ = _binary(ops.int_div)
    __mod__, __rmod__ = _binary(ops.mod)
    __pow__, __rpow__ = _binary(ops.pow)
    __and__, __rand__ = _binary(ops.and_)
    __or__, __ror__ = _binary(ops.or_)
    __xor__, __rxor__ = _binary(ops.xor)
    __lt__ = _binary(ops.lt)[0]
    __le__ = _binary(ops.le)[0]
    __gt__ = _binary(ops.gt)[0]
    __ge__ = _binary(ops.ge)[0]

    def __neg__(self) -> Variable:
        return ops.neg(self)

    def __abs__(self) -> Variable:
        return ops.abs_(self)

    def __invert__(self) -> Variable:
        return ops.invert(self)

    def astype(self, dtype: str) -> Variable:
        return ops.Cast(dtype)(self)

    def eval(self, inputs_to_values: dict | None = None) -> np.generic:
        """Compile (once per set of inputs) and run this variable's graph."""
        from arignote.tensor.variable import TensorVariable

        return TensorVariable.eval(self, inputs_to_values)

    def zeros_like(self, dtype: str | None = None) -> Variable:
        return constant(0, dtype=dtype or self.dtype)

    def ones_like(self, dtype: str | None = None) -> Variable:
        return constant(1, dtype=dtype or self.dtype)


class ScalarVariable(_ScalarOperators, Variable):
    """A 0-d scalar-typed variable (an input, or an output of a scalar op)."""


class ScalarConstant(_ScalarOperators, Constant):
    """A scalar constant; its ``data`` is a numpy scalar of its dtype."""


def constant(x: Any, name: str | None = None, dtype: str | None = None) -> ScalarConstant:
    """The scalar constant of the number ``x``, of ``dtype`` or Theano's dtype for it."""
    if isinstance(x, Variable):
        raise TypeError(f"scalar.constant takes a number, got the variable {x.describe()}: "
                        "use as_scalar to take a variable")
    if dtype is None:
        dtype = _dtype_of(x)
    data = np.asarray(x, dtype=dtype)
    if data.ndim != 0:
        raise TypeError(f"scalar.constant takes a number, got a value of shape {data.shape}: "
                        "use tensor.constant for arrays")
    return ScalarConstant(get_scalar_type(data.dtype.name), data[()], name=name)


def _dtype_of(x: Any) -> str | None:
    kind = type(x)
    if kind is bool:
        return "bool"
    if kind is int:
        return smallest_int_dtype(x)
    if kind is float:
        return autocast_float.dtype_of(x)
    if kind is complex:
        return "complex128"
    return None  # numpy values keep their dtype


def as_scalar(x: Any, name: str | None = None) -> Variable:
    """``x`` as a scalar variable: scalars as they are, a 0-d tensor through
    ``scalar_from_tensor``, a number as a constant (Theano's rule)."""
    if isinstance(x, Apply):
        if len(x.outputs) != 1:
            raise ValueError(f"as_scalar of the node {x}, which has {len(x.outputs)} outputs: "
                             "pick one of node.outputs")
        x = x.outputs[0]
    if isinstance(x, Variable):
        if isinstance(x.type, ScalarType):
            return x
        from arignote.tensor.scalar_conversion import scalar_from_tensor
        from arignote.tensor.type import TensorType

        if isinstance(x.type, TensorType) and x.type.ndim == 0:
            return scalar_from_tensor(x)
        raise TypeError(f"as_scalar: {x.describe()} is {x.type}, not a scalar: only scalar variables "
                        "and 0-d tensors convert (index or reduce the tensor to one value first)")
    try:
        return constant(x, name=name)
    except (TypeError, ValueError) as err:
        raise TypeError(f"as_scalar: cannot make a scalar of {type(x).__name__} {x!r} ({err})") from None
