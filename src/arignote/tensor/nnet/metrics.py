"""``confusion_matrix``: counts of (actual, predicted) label pairs, as Theano computes it."""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Variable
from arignote.tensor import math as _math
from arignote.tensor.blas import dot
from arignote.tensor.extra_ops import Unique
from arignote.tensor.join import concatenate
from arignote.tensor.shape import shape_padright
from arignote.tensor.variable import as_tensor_variable

__all__ = ["confusion_matrix"]


def confusion_matrix(actual: Any, pred: Any) -> list[Variable]:
    """``[conf_mat, order]``: ``order`` the sorted labels found in either vector, and
    ``conf_mat[i, j]`` (int64) the number of positions whose actual label is ``order[i]``
    and predicted label ``order[j]`` (rows: actual, columns: predicted)."""
    actual, pred = as_tensor_variable(actual), as_tensor_variable(pred)
    for name, v in (("actual", actual), ("pred", pred)):
        if v.ndim != 1:
            raise ValueError(f"confusion_matrix: {name} must be a vector of labels, got "
                             f"{v.describe()} ({v.type.describe()})")
    order = Unique()(concatenate([actual, pred]))
    one_hot_actual = _math.cast(_math.eq(shape_padright(actual), order), "int64")
    one_hot_pred = _math.cast(_math.eq(shape_padright(pred), order), "int64")
    return [dot(one_hot_actual.T, one_hot_pred), order]
