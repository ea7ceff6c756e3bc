"""``theano.tensor.nnet``'s 1.0 behaviour where it differs from ``arignote.tensor.nnet``.

Theano 1.0's softmax and log-softmax of a vector padded it to a 1xN matrix, with
a deprecation warning; 1.0-era code relies on that shape (DeepLearningTutorials'
rnnslu indexes ``[:, 0, :]`` on a scan of such rows; ``crossentropy_categorical_1hot``
of ``softmax_op(vector)`` needs a matrix). Under the alias ``softmax``,
``logsoftmax``, ``softmax_op`` and ``logsoftmax_op`` do the same;
``arignote.tensor.nnet``'s keep a vector a vector (and so does the ``Softmax`` class
under both names). One behaviour per entry point.

Theano's ``nnet.sigm`` named the scalar ops of the sigmoid family by class
(``ScalarSigmoid``, ``ScalarSoftplus``; ``isinstance(node.op.scalar_op, ScalarSoftplus)``)
and kept their in-place Elemwise as ``sigmoid_inplace``: here those classes tell arignote's
table ops, as ``theano.scalar``'s classes do.
"""
from __future__ import annotations

import warnings
from typing import Any

from arignote.compat.theano.scalar import _TableClass
from arignote.graph.basic import Apply, Variable, user_stacklevel
from arignote.scalar.ops import TABLE
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.nnet import basic
from arignote.tensor.nnet.mul_trees import (compute_mul, is_1pexp, is_exp, is_neg,  # noqa: F401
                                            parse_mul_tree, perform_sigm_times_exp, simplify_mul)
from arignote.tensor.nnet.sigmoid_rewrites import local_sigm_times_exp  # noqa: F401
from arignote.tensor.shape import shape_padleft
from arignote.tensor.variable import as_tensor_variable

__all__ = ["softmax", "logsoftmax", "softmax_op", "logsoftmax_op", "ScalarSigmoid", "ScalarSoftplus",
           "UltraFastScalarSigmoid", "scalar_sigmoid", "scalar_softplus", "ultra_fast_scalar_sigmoid",
           "sigmoid_inplace", "softplus_inplace", "parse_mul_tree", "compute_mul", "simplify_mul",
           "is_1pexp", "is_exp", "is_neg", "perform_sigm_times_exp", "local_sigm_times_exp",
           "register_local_1msigmoid"]

ScalarSigmoid = _TableClass("ScalarSigmoid", (), {
    "op_name": "sigmoid", "__doc__": "Theano's class of sigmoid."})
ScalarSoftplus = _TableClass("ScalarSoftplus", (), {
    "op_name": "softplus", "__doc__": "Theano's class of softplus."})
UltraFastScalarSigmoid = _TableClass("UltraFastScalarSigmoid", (), {
    "op_name": "ultra_fast_sigmoid", "__doc__": "Theano's class of ultra_fast_sigmoid."})
scalar_sigmoid, scalar_softplus = TABLE["sigmoid"], TABLE["softplus"]
ultra_fast_scalar_sigmoid = basic.ultra_fast_sigmoid.scalar_op
sigmoid_inplace = Elemwise(scalar_sigmoid, {0: 0})
softplus_inplace = Elemwise(scalar_softplus, {0: 0})
# Theano's switch of a rewrite ``1 - sigmoid(x)`` -> ``sigmoid(-x)`` it left off (it would hide
# ``log(1 - sigmoid(x))`` from the stabilizing rewrite); there is no such rewrite here either.
register_local_1msigmoid = False


def _rows(c: Any, what: str, op_name: str) -> Variable:
    """``c`` as Theano 1.0's softmax took it: a matrix, a vector becoming a 1xN matrix."""
    c = as_tensor_variable(c)
    if c.ndim not in (1, 2) or c.dtype not in ("float16", "float32", "float64"):
        raise ValueError(f"{what} (Theano 1.0): x must be a 1-d or 2-d tensor of floats, got "
                         f"{c.describe()} ({c.type.describe()}); arignote.tensor.nnet.{what} takes "
                         "any rank" + ("" if what.endswith("_op") else " and an axis"))
    if c.ndim == 1:
        warnings.warn(f"DEPRECATION: If x is a vector, {op_name} will not automatically pad x anymore "
                      "in next releases. If you need it, please do it manually. The vector case is "
                      "gonna be supported soon and the output will be a vector.",
                      stacklevel=user_stacklevel())
        c = shape_padleft(c, 1)
    return c


class _RowsOp:
    """Theano 1.0's op of the rows: its nodes hold arignote's op of axis 1 (``rows``), and it
    compares equal to that op, so ``node.op == softmax_op`` holds for them as in Theano (a
    subclass's ``__eq__`` answers first, whichever side of ``==`` it is on)."""

    rows: basic.Softmax | basic.LogSoftmax
    op_name = ""

    def make_node(self, x: Any) -> Apply:
        return self.rows.make_node(_rows(x, f"{self.op_name.lower()}_op", self.op_name))

    def __eq__(self, other: object) -> bool:
        return other is self or self.rows == other

    def __hash__(self) -> int:
        return hash(self.rows)

    def __str__(self) -> str:
        return str(self.rows)


class _Theano10Softmax(_RowsOp, basic.Softmax):
    """``softmax_op``: the softmax of the rows of a matrix, a vector taken as one row."""

    rows, op_name = basic.Softmax(1), "Softmax"


class _Theano10LogSoftmax(_RowsOp, basic.LogSoftmax):
    """``logsoftmax_op``: the log-softmax of the rows, a vector taken as one row."""

    rows, op_name = basic.LogSoftmax(1), "LogSoftmax"


softmax_op = _Theano10Softmax(1)
logsoftmax_op = _Theano10LogSoftmax(1)


def softmax(c: Any) -> Variable:
    """Theano 1.0's softmax over the last axis of a matrix; a vector becomes a 1xN matrix."""
    c = as_tensor_variable(c)
    if c.broadcastable[-1:] == (True,):
        warnings.warn("The softmax is applied on a dimension of shape 1, which does not have a "
                      "semantic meaning.", stacklevel=user_stacklevel())
    return basic.softmax(_rows(c, "softmax", "Softmax"))


def logsoftmax(c: Any) -> Variable:
    """Theano 1.0's log-softmax over the last axis of a matrix; a vector becomes a 1xN matrix."""
    return basic.log_softmax(_rows(c, "logsoftmax", "LogSoftmax"))
