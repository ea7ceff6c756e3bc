"""Theano's one-hot softmax cross-entropies and the sigmoid cross-entropy of logits.

``crossentropy_softmax_1hot(_with_bias)`` returns the negative log-likelihood of
integer targets together with the softmax, computed through ``log_softmax``
(stable for large logits, and so is its gradient). ``sigmoid_binary_crossentropy``
is one scalar op whose gradient (``sigmoid(x) - target``) is exact everywhere,
zero logits included.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.scalar.dtypes import DISCRETE, FLOAT, upgrade_to_float
from arignote.scalar.ops import ScalarOp
from arignote.tensor import math as _math
from arignote.tensor.alloc import arange
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.nnet.basic import log_softmax, softmax
from arignote.tensor.reduction import max_and_argmax
from arignote.tensor.shape import shape_i
from arignote.tensor.variable import as_tensor_variable

__all__ = ["crossentropy_softmax_1hot", "crossentropy_softmax_1hot_with_bias",
           "crossentropy_softmax_max_and_argmax_1hot", "crossentropy_softmax_max_and_argmax_1hot_with_bias",
           "sigmoid_binary_crossentropy"]


def _targets(y_idx: Any, what: str) -> Variable:
    y_idx = as_tensor_variable(y_idx)
    if y_idx.ndim != 1 or y_idx.dtype not in DISCRETE or y_idx.dtype == "bool":
        raise TypeError(f"{what}: the targets {y_idx.describe()} must be an integer vector of class "
                        f"indices, got {y_idx.type.describe()}: cast them with tensor.cast(y, 'int64')")
    return y_idx


def _rows(matrix: Variable, what: str) -> Variable:
    if matrix.ndim != 2:
        raise TypeError(f"{what}: {matrix.describe()} must be a matrix (one row per example), "
                        f"got {matrix.type.describe()}")
    return arange(shape_i(matrix, 0))


def crossentropy_softmax_1hot_with_bias(x: Any, b: Any, y_idx: Any, **kwargs: Any) -> tuple:
    """``(-log(softmax(x + b))[i, y_idx[i]], softmax(x + b))`` for a matrix ``x``, a bias
    vector ``b`` and integer targets ``y_idx``."""
    x, b = as_tensor_variable(x), as_tensor_variable(b)
    y_idx = _targets(y_idx, "crossentropy_softmax_1hot_with_bias")
    z = _math.add(x, b)
    rows = _rows(x, "crossentropy_softmax_1hot_with_bias")
    return _math.neg(log_softmax(z)[rows, y_idx]), softmax(z)


def crossentropy_softmax_1hot(x: Any, y_idx: Any, **kwargs: Any) -> tuple:
    """``(-log(softmax(x))[i, y_idx[i]], softmax(x))``: the negative log-likelihood of the
    integer targets ``y_idx`` and the softmax of the matrix ``x``."""
    x = as_tensor_variable(x)
    y_idx = _targets(y_idx, "crossentropy_softmax_1hot")
    return _math.neg(log_softmax(x)[_rows(x, "crossentropy_softmax_1hot"), y_idx]), softmax(x)


def crossentropy_softmax_max_and_argmax_1hot_with_bias(x: Any, b: Any, y_idx: Any, **kwargs: Any) -> tuple:
    """``crossentropy_softmax_1hot_with_bias``'s two outputs, then the largest probability of
    each row and its column (int64)."""
    nll, sm = crossentropy_softmax_1hot_with_bias(x, b, y_idx)
    return (nll, sm) + tuple(max_and_argmax(sm, axis=-1))


def crossentropy_softmax_max_and_argmax_1hot(x: Any, y_idx: Any, **kwargs: Any) -> tuple:
    """``crossentropy_softmax_1hot``'s two outputs, then each row's largest probability and
    its column (int64)."""
    nll, sm = crossentropy_softmax_1hot(x, y_idx)
    return (nll, sm) + tuple(max_and_argmax(sm, axis=-1))


def _sigmoid_bce(output: np.ndarray, target: np.ndarray) -> np.ndarray:
    # softplus(-|x|) + x * ([x > 0] - t): no overflow for large |x|.
    return np.logaddexp(0, -np.abs(output)) + output * ((output > 0) - target)


_SIGMOID_BCE = Elemwise(ScalarOp(
    "sigmoid_binary_crossentropy", 2, _sigmoid_bce, upgrade_to_float,
    "(log1p(exp(-fabs({0}))) + {0} * (({0} > 0 ? 1 : 0) - {1}))", accepts=DISCRETE + FLOAT))


def sigmoid_binary_crossentropy(output: Any, target: Any) -> Variable:
    """The binary cross-entropy of the logits ``output`` (any real values; sigmoid applied)
    against probabilities ``target``: ``binary_crossentropy(sigmoid(output), target)``,
    computed stably."""
    return _SIGMOID_BCE(output, target)
