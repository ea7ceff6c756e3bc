"""``theano.tensor.nnet``'s 1.0 behaviour where it differs from ``arignote.tensor.nnet``.

Theano 1.0's ``softmax`` of a vector padded it to a 1xN matrix, with a
deprecation warning; 1.0-era code relies on that shape (DeepLearningTutorials'
rnnslu indexes ``[:, 0, :]`` on a scan of such rows). Under the alias
``theano.tensor.nnet.softmax`` does the same; ``arignote.tensor.nnet.softmax``
keeps a vector a vector. One behaviour per entry point.
"""
from __future__ import annotations

import warnings
from typing import Any

from arignote.graph.basic import Variable, user_stacklevel
from arignote.tensor.nnet import basic
from arignote.tensor.shape import shape_padleft
from arignote.tensor.variable import as_tensor_variable

__all__ = ["softmax"]


def softmax(c: Any) -> Variable:
    """Theano 1.0's softmax over the last axis of a matrix; a vector becomes a 1xN matrix."""
    c = as_tensor_variable(c)
    if c.ndim not in (1, 2) or c.dtype not in ("float16", "float32", "float64"):
        raise ValueError(f"softmax (Theano 1.0): x must be a 1-d or 2-d tensor of floats, got "
                         f"{c.describe()} ({c.type.describe()}); arignote.tensor.nnet.softmax takes "
                         "any rank and an axis")
    if c.broadcastable[-1]:
        warnings.warn("The softmax is applied on a dimension of shape 1, which does not have a "
                      "semantic meaning.", stacklevel=user_stacklevel())
    if c.ndim == 1:
        warnings.warn("DEPRECATION: If x is a vector, Softmax will not automatically pad x anymore "
                      "in next releases. If you need it, please do it manually. The vector case is "
                      "gonna be supported soon and the output will be a vector.",
                      stacklevel=user_stacklevel())
        c = shape_padleft(c, 1)
    return basic.softmax(c)
