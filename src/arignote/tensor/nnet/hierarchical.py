"""``h_softmax``: Theano's two-level hierarchical softmax (Goodman, 2001).

The ``n_outputs`` outputs are split into ``n_classes`` classes of
``n_outputs_per_class`` each, in order; the probability of an output is the
probability of its class times its probability within the class. With a
``target``, only each example's target output is computed: its class's second
layer is gathered (``W2[class]``), so the cost is O(n_classes + n_outputs_per_class).
"""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Variable
from arignote.tensor import math as _math
from arignote.tensor.alloc import arange
from arignote.tensor.blas import dot, matmul, tensordot
from arignote.tensor.nnet.basic import softmax
from arignote.tensor.variable import as_tensor_variable

__all__ = ["h_softmax"]


def h_softmax(x: Any, batch_size: Any, n_outputs: int, n_classes: int, n_outputs_per_class: int,
              W1: Any, b1: Any, W2: Any, b2: Any, target: Any = None) -> Variable:
    """Two-level hierarchical softmax of ``x`` (batch_size, features).

    ``W1`` (features, n_classes) and ``b1`` (n_classes,) give the class
    probabilities; ``W2`` (n_classes, features, n_outputs_per_class) and ``b2``
    (n_classes, n_outputs_per_class) the probabilities within each class.
    Without ``target``: (batch_size, n_outputs), every output's probability.
    With ``target`` (batch_size,) or (batch_size, 1) of output indices: each
    example's target probability, of shape (batch_size,).
    """
    x, W1, b1, W2, b2 = (as_tensor_variable(v) for v in (x, W1, b1, W2, b2))
    class_probs = softmax(_math.add(dot(x, W1), b1))
    if target is None:
        activations = _math.add(tensordot(x, W2, [[1], [1]]), b2)
        output_probs = softmax(activations.reshape((-1, n_outputs_per_class)))
        output_probs = output_probs.reshape((batch_size, n_classes, -1))
        output_probs = _math.mul(class_probs.dimshuffle(0, 1, "x"), output_probs)
        return output_probs.reshape((batch_size, -1))[:, :n_outputs]
    target = as_tensor_variable(target).flatten()
    classes = _math.int_div(target, n_outputs_per_class)
    within = _math.mod(target, n_outputs_per_class)
    rows = arange(batch_size)
    activations = _math.add(matmul(x.dimshuffle(0, "x", 1), W2[classes])[:, 0, :], b2[classes])
    return _math.mul(class_probs[rows, classes], softmax(activations)[rows, within])
