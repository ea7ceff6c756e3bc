"""Shared variables of scalar type (Theano's ``theano.scalar.sharedvar``).

``theano.shared`` makes 0-d tensors of numbers; a scalar-typed shared variable
is only made on request, by this module's ``shared`` (Theano kept it out of the
constructor registry for the same reason), e.g. as a loop counter that indexes
a tensor in the updates of a function.
"""
from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

from arignote.compile.sharedvalue import SharedVariable
from arignote.scalar.type import get_scalar_type
from arignote.scalar.variable import _ScalarOperators

__all__ = ["ScalarSharedVariable", "shared"]


class ScalarSharedVariable(_ScalarOperators, SharedVariable):
    """A shared variable of a scalar type, with the scalar operators."""


def shared(value: Any, name: str | None = None, strict: bool = False,
           allow_downcast: bool | None = None) -> ScalarSharedVariable:
    """A scalar shared variable holding the number ``value``, of its numpy dtype
    (a Python int int64, a float float64, as numpy reads them)."""
    if isinstance(value, np.ndarray) or not isinstance(value, (Number, np.number)):
        raise TypeError(f"theano.scalar.sharedvar.shared takes a number, got {value!r} "
                        f"({type(value).__name__}): use theano.shared for arrays")
    data = np.asarray(value)
    return ScalarSharedVariable(type=get_scalar_type(data.dtype.name), value=data[()], name=name,
                                strict=strict, allow_downcast=allow_downcast)
