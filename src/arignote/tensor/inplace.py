"""``tensor.inplace``: Theano's elementwise ops that write their result into their first input.

Each ``<name>_inplace`` is the ``Elemwise`` of the scalar-table entry ``<name>``
(as a ``TransferType`` of it) with ``inplace_pattern={0: 0}``, so its node declares that it overwrites input 0;
it prints as Theano printed it (``add_inplace``).
As in Theano, a graph holding one compiles only with
``function(..., accept_inplace=True)``, the result takes the first input's dtype
(``TransferType``: the result is cast into it), the first input must already have
the output's broadcastable pattern, and nodes reading that input run before it.
Ordinary code gets the same in-place kernels from the in-place rewrite, which
proves the input is not needed elsewhere.
"""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Variable
from arignote.scalar.ops import TABLE, TransferType
from arignote.tensor.alloc import _SECOND
from arignote.tensor.math import ElemwiseFunction
from arignote.tensor.variable import as_tensor_variable

# Theano's in-place names of scalar-table entries: the name without ``_inplace``, except
# where Theano's spelling of the op differs (abs_).
_NAMES = ("lt gt le ge eq neq and_ or_ xor invert abs_ exp exp2 expm1 neg inv log log1p log2 log10 "
          "sgn ceil floor trunc round_half_to_even round_half_away_from_zero sqr sqrt deg2rad "
          "rad2deg cos arccos sin arcsin tan arctan arctan2 cosh arccosh sinh arcsinh tanh arctanh "
          "erf erfc erfcx gamma gammaln psi tri_gamma chi2sf j0 j1 jv i0 i1 iv maximum minimum add sub mul true_div int_div "
          "mod pow conj").split()
_TABLE_NAME = {"abs_": "abs"}


def _inplace(scalar_op: Any, name: str) -> ElemwiseFunction:
    return ElemwiseFunction(TransferType(scalar_op, 0), {0: 0}, name)


for _name in _NAMES:
    globals()[f"{_name}_inplace"] = _inplace(TABLE[_TABLE_NAME.get(_name, _name)], f"{_name}_inplace")
second_inplace = _inplace(_SECOND.scalar_op, "second_inplace")
fill_inplace = second_inplace


def transpose_inplace(x: Any, **kwargs: Any) -> Variable:
    """``x`` with its axes reversed, as a view of its storage (every DimShuffle is one)."""
    x = as_tensor_variable(x)
    return x.dimshuffle(*reversed(range(x.ndim)))


__all__ = sorted([f"{n}_inplace" for n in _NAMES] + ["second_inplace", "fill_inplace", "transpose_inplace"])
del _name
