"""``tensor.xlogx``: ``x * log(x)`` and ``x * log(y)`` with the limit 0 where ``x`` is 0.

Entropy-like sums meet ``0 * log(0)``, which is NaN in floating point but 0 in
the limit; these two elementwise ops give that 0. Their gradients are Theano's:
``1 + log(x)`` for xlogx; ``log(y)`` and ``x / y`` for xlogy0.
"""
from __future__ import annotations

import numpy as np

from arignote.scalar.dtypes import DISCRETE, FLOAT
from arignote.scalar.ops import ScalarOp, upgrade_to_float
from arignote.tensor import math as tm
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.grad.elemwise import c, rule

__all__ = ["xlogx", "xlogy0", "XlogX", "XlogY0"]


def _xlogx(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, np.zeros((), x.dtype), x * np.log(x))


def _xlogy0(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, np.zeros((), np.result_type(x, y)), x * np.log(y))


class XlogX(ScalarOp):
    """The scalar op of ``xlogx``."""

    def __init__(self) -> None:
        super().__init__("xlogx", 1, _xlogx, upgrade_to_float, "({0} == 0 ? ({T})0 : {0} * log({0}))",
                         accepts=DISCRETE + FLOAT)


class XlogY0(ScalarOp):
    """The scalar op of ``xlogy0``."""

    def __init__(self) -> None:
        super().__init__("xlogy0", 2, _xlogy0, upgrade_to_float,
                         "({0} == 0 ? ({T})0 : {0} * log({1}))", accepts=DISCRETE + FLOAT)


xlogx = Elemwise(XlogX())
xlogy0 = Elemwise(XlogY0())


@rule("xlogx")
def _xlogx_grad(inputs, out, gz):
    (x,) = inputs
    return [gz * (c(1, out) + tm.log(x))]


@rule("xlogy0")
def _xlogy0_grad(inputs, out, gz):
    x, y = inputs
    return [gz * tm.log(y), gz * x / y]
