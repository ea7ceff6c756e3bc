"""The exponential linear units and softsign (``tensor.nnet.elu``, ``selu``, ``softsign``).

``softsign`` is one scalar op (numpy implementation, kernel expression and, in
``tensor/grad/activations.py``, its gradient), as Theano had it; ``elu`` and
``selu`` are compositions of existing ops. Constants take the input's dtype,
so a float32 graph stays float32.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.scalar.dtypes import DISCRETE, FLOAT, upgrade_to_float
from arignote.scalar.ops import ScalarOp
from arignote.tensor import math as _math
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["elu", "selu", "softsign"]

# Klambauer et al., "Self-Normalizing Neural Networks" (2017).
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _like(value: float, x: Variable) -> Variable:
    return constant(np.asarray(value, dtype=upgrade_to_float(x.dtype)))


def elu(x: Any, alpha: Any = 1) -> Variable:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere (Clevert et al., 2015)."""
    x = as_tensor_variable(x)
    if not isinstance(alpha, Variable):
        alpha = _like(alpha, x)
    zero = _like(0, x)
    # exp of min(x, 0): no overflow (nor an inf * 0 in the gradient) on the unused branch.
    negative = _math.mul(alpha, _math.expm1(_math.minimum(x, zero)))
    return _math.switch(_math.gt(x, zero), x, negative)


def selu(x: Any) -> Variable:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    x = as_tensor_variable(x)
    return _math.mul(_like(SELU_SCALE, x), elu(x, SELU_ALPHA))


def _softsign(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.abs(x))


_SOFTSIGN = Elemwise(ScalarOp("softsign", 1, _softsign, upgrade_to_float, "({0} / (1 + fabs({0})))",
                              accepts=DISCRETE + FLOAT))


def softsign(x: Any) -> Variable:
    """``x / (1 + |x|)``, elementwise."""
    return _SOFTSIGN(x)
