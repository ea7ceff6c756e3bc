"""Neural-network functions: activations, softmax, and the cross-entropy losses.

``softmax`` and ``log_softmax`` are ops of their own because their stable
computation (subtract the maximum first) is not what the naive graph
``exp(x) / sum(exp(x))`` computes: with logits of 1e4 that graph gives NaN.
The rest are compositions of existing ops, so every backend runs them already.
"""
from __future__ import annotations

from typing import Any, NamedTuple
from collections.abc import Callable

import numpy as np

from arignote.graph.basic import Apply, Op, Variable, user_variable
from arignote.scalar.dtypes import COMPLEX, DISCRETE, FLOAT, upgrade_to_float
from arignote.scalar.ops import ScalarOp
from arignote.tensor import math as _math
from arignote.tensor.alloc import arange
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.math import sigmoid, softplus
from arignote.tensor.reduction import CAReduce
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.shape import shape_i
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["Softmax", "LogSoftmax", "softmax_op", "logsoftmax_op", "sigmoid", "softplus", "relu",
           "softmax", "log_softmax", "logsoftmax", "softmax_graph", "softmax_logits", "categorical_crossentropy",
           "binary_crossentropy", "hard_sigmoid", "ultra_fast_sigmoid"]


# ------------------------------------------------------------------ softmax
def shifted(x: np.ndarray, axis: int, dtype: Any) -> np.ndarray:
    """``x`` in ``dtype``, minus its maximum along ``axis`` (the stable start of a softmax)."""
    x = x.astype(dtype, copy=False)
    if x.shape[axis] == 0:
        return x.copy()
    return x - x.max(axis=axis, keepdims=True)


def softmax_values(x: np.ndarray, axis: int, dtype: Any) -> np.ndarray:
    """The numpy softmax of ``x`` along ``axis`` in ``dtype``: ``exp(x - max)`` normalized."""
    e = np.exp(shifted(x, axis, dtype))
    e /= e.sum(axis=axis, keepdims=True)
    return e


def log_softmax_values(x: np.ndarray, axis: int, dtype: Any) -> np.ndarray:
    """The numpy log-softmax of ``x`` along ``axis``: ``(x - max) - log(sum(exp(x - max)))``."""
    s = shifted(x, axis, dtype)
    if s.size:
        s -= np.log(np.exp(s).sum(axis=axis, keepdims=True))
    return s


class _AxisOp(Op):
    """A float op along one axis whose output has the input's shape.

    ``axis`` defaults to -1, the last axis (Theano's ``Softmax()`` takes no argument and
    works along the rows' last axis). A negative axis is resolved when the op is applied:
    the node holds the op of the non-negative axis, the one every backend reads.
    """

    __props__ = ("axis",)

    def __init__(self, axis: int = -1):
        self.axis = int(axis)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        name = type(self).__name__.lower()
        if x.dtype in COMPLEX:
            raise TypeError(f"{name} of {x.describe()}: complex inputs are not supported; take "
                            "the real part or the abs first")
        if not -x.ndim <= self.axis < x.ndim:
            raise ValueError(f"{name} along axis {self.axis} of {x.describe()}, which has "
                             f"{x.ndim} dimensions: pick an axis in [{-x.ndim}, {x.ndim})")
        if self.axis < 0:
            return type(self)(self.axis + x.ndim).make_node(x)
        return Apply(self, [x], [TensorType(upgrade_to_float(x.dtype), x.broadcastable)()])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class Softmax(_AxisOp):
    """``exp(x) / sum(exp(x))`` along ``axis``, computed as ``exp(x - max(x))`` normalized."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = softmax_values(inputs[0], self.axis, node.outputs[0].type.numpy_dtype)


class LogSoftmax(_AxisOp):
    """``log(softmax(x))`` along ``axis``, as ``(x - max) - log(sum(exp(x - max)))``."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = log_softmax_values(inputs[0], self.axis, node.outputs[0].type.numpy_dtype)


# Theano's op instances: the softmax and log-softmax of the last axis.
softmax_op = Softmax()
logsoftmax_op = LogSoftmax()


def _axis(x: Variable, axis: int, what: str) -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{what}: axis must be an int, got {axis!r}")
    if x.ndim == 0:
        raise ValueError(f"{what} of the scalar {x.describe()}: softmax needs at least one dimension")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{what} along axis {axis} of {x.describe()}, which has {x.ndim} "
                         f"dimensions: pick an axis in [{-x.ndim}, {x.ndim})")
    return int(axis) % x.ndim


def softmax(x: Any, axis: int = -1) -> Variable:
    """The softmax of ``x`` along ``axis`` (the last by default), numerically stable."""
    x = as_tensor_variable(x)
    return Softmax(_axis(x, axis, "softmax"))(x)


def log_softmax(x: Any, axis: int = -1) -> Variable:
    """``log(softmax(x))`` along ``axis``, without the underflow of taking the log afterwards."""
    x = as_tensor_variable(x)
    return LogSoftmax(_axis(x, axis, "log_softmax"))(x)


logsoftmax = log_softmax


def softmax_graph(c: Any) -> Variable:
    """Theano's ``exp(c) / sum(exp(c))`` over the last axis, as that graph: not shifted by
    the maximum, so large logits overflow (``softmax`` is the stable op)."""
    e = _math.exp(as_tensor_variable(c))
    return _math.true_div(e, _sum(e, axis=-1, keepdims=True))


# --------------------------------------------------- the logits behind a softmax
class Logits(NamedTuple):
    """What a softmax-valued variable is the softmax of: ``p == softmax(z, axis)``, with ``z``
    a fresh graph built from ``sources`` (the variables of the user's graph it reads)."""

    z: Variable
    axis: int
    sources: list


def _of_softmax(node: Apply) -> Logits:
    return Logits(node.inputs[0], node.op.axis, [node.inputs[0]])


# Op class -> the Logits of one of its nodes. ``compound`` adds SoftmaxWithBias (``x + b``).
SOFTMAX_FORMS: dict[type, Callable[[Apply], Logits]] = {Softmax: _of_softmax}


def _scalar_name(var: Variable) -> str | None:
    node = var.owner
    return node.op.scalar_op.name if node is not None and isinstance(node.op, Elemwise) else None


def exp_ratio_logits(p: Variable) -> Logits | None:
    """``w`` and the axis when ``p`` is the written-out softmax ``exp(w) / sum(exp(w), axis)``
    (the sum's axis kept, or put back by a DimShuffle: Theano's ``softmax_graph`` and the
    tutorials' form; ``w`` may be ``x - max(x)``, the shifted form)."""
    if _scalar_name(p) != "true_div":
        return None
    e, den = p.owner.inputs
    if _scalar_name(e) != "exp" or e.owner.inputs[0].dtype not in FLOAT or den.owner is None:
        return None
    total, order = den, None
    if isinstance(den.owner.op, DimShuffle):
        total, order = den.owner.inputs[0], list(den.owner.op.new_order)
    op = total.owner.op if total.owner is not None else None
    if not isinstance(op, CAReduce) or op.scalar_op.name != "add" or op.axis is None or len(op.axis) != 1:
        return None
    w, summed = e.owner.inputs[0], total.owner.inputs[0]
    if summed is not e and (_scalar_name(summed) != "exp" or summed.owner.inputs[0] is not w):
        return None  # the sum of another exp node of the same logits counts (exp(x) / exp(x).sum())
    axis = op.axis[0]
    back = total.ndim == e.ndim if order is None else order == [*range(axis), "x", *range(axis, e.ndim - 1)]
    return Logits(w, axis, [w]) if back else None


def softmax_logits(p: Variable) -> Logits | None:
    """The logits behind ``p`` when ``p`` is a softmax in any of the forms users write: the
    ``Softmax`` op (``softmax``, ``softmax_op``, Theano 1.0's padded vector), ``SoftmaxWithBias``,
    and the written-out ``exp(w) / sum(exp(w))``; None otherwise. The rewrites and gradients
    that make ``log(p)`` a stable ``log_softmax(z)`` (and pushdowns of argmax) read this."""
    node = p.owner
    if node is None:
        return None
    for cls in type(node.op).__mro__:
        if cls in SOFTMAX_FORMS:
            return SOFTMAX_FORMS[cls](node)
    return exp_ratio_logits(p)


# -------------------------------------------------------------- activations
def relu(x: Any, alpha: Any = 0) -> Variable:
    """``x`` where positive, ``alpha * x`` elsewhere (alpha=0: the plain rectifier).

    Written as Theano writes it, ``(1 + alpha) / 2 * x + (1 - alpha) / 2 * |x|``, so that the
    gradient at exactly 0 is Theano's ``(1 + alpha) / 2`` (0.5 for the plain rectifier) rather
    than one side's slope (and, as there, ``relu(-inf)`` is NaN). A Python ``alpha`` takes
    ``x``'s dtype, so a float32 graph stays float32; integer inputs stay integers (maximum/switch).
    A numpy array (or number) and a number ``alpha`` give a numpy result, as Theano's relu did
    (plain arithmetic there): test code computes its expected values with it.
    """
    if not isinstance(x, Variable) and not isinstance(alpha, Variable):
        x = np.asarray(x)
        if x.dtype.kind not in "fc":
            return np.where(x > 0, x, x * alpha) if alpha != 0 else np.maximum(x, 0)
        return (1 + alpha) / 2 * x + (1 - alpha) / 2 * np.abs(x)
    x = as_tensor_variable(x)
    plain = isinstance(alpha, (int, float)) and alpha == 0
    if x.dtype not in FLOAT:
        if plain:
            return _math.maximum(x, _like(0, x.dtype))
        return _math.switch(_math.gt(x, _like(0, x.dtype)), x, _math.mul(alpha, x))
    half = _like(0.5, x.dtype)
    if plain:
        return _math.mul(half, _math.add(x, _math.abs(x)))
    if not isinstance(alpha, Variable):
        alpha = _like(alpha, x.dtype)
    one = _like(1, x.dtype)
    rising, folded = _math.mul(half, _math.add(one, alpha)), _math.mul(half, _math.sub(one, alpha))
    return _math.add(_math.mul(rising, x), _math.mul(folded, _math.abs(x)))


def hard_sigmoid(x: Any) -> Variable:
    """A piecewise-linear sigmoid: ``clip(0.2 * x + 0.5, 0, 1)`` (Theano's slope and shift)."""
    x = as_tensor_variable(x)
    dtype = upgrade_to_float(x.dtype)
    line = _math.add(_math.mul(_math.cast(x, dtype), _like(0.2, dtype)), _like(0.5, dtype))
    return _math.clip(line, _like(0, dtype), _like(1, dtype))


# Theano's ultra_fast_sigmoid: sigmoid(x) = (1 + tanh(x / 2)) / 2, with tanh(t) for t >= 0
# replaced by 1.5 t / (1 + t) below 1.7, a line from 1.7 to 3, and a constant above
# (odd symmetry for t < 0). The largest error is about 0.028, near |x| = 0.54.
_BEND, _FLAT = 1.7, 3.0
_LINE_AT_BEND, _LINE_SLOPE, _CEILING = 0.935409070603099, 0.0458812946797165, 0.99505475368673


def _ultra_fast_sigmoid(x: np.ndarray) -> np.ndarray:
    t = np.abs(x * 0.5)
    with np.errstate(invalid="ignore"):
        curve = 1.5 * t / (1 + t)
    line = _LINE_AT_BEND + _LINE_SLOPE * (t - _BEND)
    # The innermost where keeps NaN as NaN (every comparison with it is False).
    approx = np.where(t < _BEND, curve, np.where(t < _FLAT, line, np.where(t >= _FLAT, _CEILING, t)))
    return (0.5 + 0.5 * np.copysign(approx, x)).astype(x.dtype, copy=False)


# The approximation above as an Elemwise, like Theano's (graphs compare their ops with it).
ultra_fast_sigmoid = Elemwise(ScalarOp("ultra_fast_sigmoid", 1, _ultra_fast_sigmoid, upgrade_to_float,
                                       accepts=DISCRETE + FLOAT))


# ------------------------------------------------------------------- losses
def categorical_crossentropy(coding_dist: Any, true_dist: Any) -> Variable:
    """The cross-entropy between predicted distributions and targets, one value per row.

    ``coding_dist`` holds probabilities (rows sum to 1, e.g. a softmax output).
    ``true_dist`` is either of the same shape (one-hot or soft targets:
    ``-sum(true_dist * log(coding_dist), axis=-1)``) or an integer vector of
    class indices (``-log(coding_dist[i, true_dist[i]])``).
    """
    coding_dist = as_tensor_variable(coding_dist)
    true_dist = as_tensor_variable(true_dist)
    log_coding = stable_log(coding_dist)
    if true_dist.ndim == coding_dist.ndim:
        return _math.neg(_sum(_math.mul(true_dist, log_coding), axis=coding_dist.ndim - 1))
    if coding_dist.ndim == 2 and true_dist.ndim == 1:
        if true_dist.dtype not in DISCRETE or true_dist.dtype == "bool":
            raise TypeError(f"categorical_crossentropy: the class indices {true_dist.describe()} "
                            f"must be integers, got {true_dist.dtype}: cast them with "
                            "tensor.cast(t, 'int64'), or pass one-hot rows of coding_dist's shape")
        rows = arange(shape_i(coding_dist, 0))
        labels = ClassIndices()(true_dist, shape_i(coding_dist, 1), shape_i(coding_dist, 0))
        return _math.neg(log_coding[rows, labels])
    raise TypeError(f"categorical_crossentropy expects true_dist of coding_dist's dimensions "
                    f"({coding_dist.ndim}), or an integer vector of class indices with a matrix "
                    f"coding_dist; got {coding_dist.describe()} ({coding_dist.type.describe()}) "
                    f"and {true_dist.describe()} ({true_dist.type.describe()})")


class ClassIndices(Op):
    """The class indices ``y`` themselves, once checked to lie in ``[0, n_classes)`` (and,
    given ``n_rows``, to be one per row).

    Indexing would read ``-1`` as the last class and fail on ``n_classes`` with a
    message about an axis; a label out of range is the user's data, so it is named,
    with the loss (``what``) and the distribution (``dist``) it was given to.
    The check runs on the host, where index vectors live on every backend.
    """

    __props__ = ("what", "dist")
    view_map = {0: [0]}

    def __init__(self, what: str = "categorical_crossentropy", dist: str = "coding_dist"):
        self.what, self.dist = what, dist

    def make_node(self, y: Any, n_classes: Any, n_rows: Any = None) -> Apply:
        extra = [] if n_rows is None else [as_tensor_variable(n_rows)]
        y, n_classes = as_tensor_variable(y), as_tensor_variable(n_classes)
        return Apply(self, [y, n_classes] + extra, [y.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        y = inputs[0]
        rows = int(inputs[2]) if len(inputs) == 3 else None
        check_class_indices(y, int(inputs[1]), node.inputs[0], self.what, self.dist, rows)
        output_storage[0][0] = y

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def check_class_indices(y: np.ndarray, n: int, labels: Variable, what: str, dist: str,
                        rows: int | None = None) -> None:
    """Raise a ValueError naming ``labels`` when a value of ``y`` is not in ``[0, n)``, or
    when ``rows`` is given and ``y`` does not hold one index per row."""
    if rows is not None and y.shape[0] != rows:
        raise ValueError(f"{what}: {user_variable(labels).describe()} holds {y.shape[0]} class "
                         f"indices for the {rows} rows of {dist}: give one per row")
    if y.size and (y.min() < 0 or y.max() >= n):
        i = int(np.argmax((y < 0) | (y >= n)))
        raise ValueError(
            f"{what}: the class indices {user_variable(labels).describe()} (shape {y.shape}) hold "
            f"{y[i]} at position {i}, but {dist} has {n} classes: each index must be in "
            f"0 .. {n - 1}. Drop or mask the rows whose label is missing (such as -1) before "
            "taking the loss")


def binary_crossentropy(output: Any, target: Any) -> Variable:
    """Elementwise ``-(target * log(output) + (1 - target) * log(1 - output))``.

    ``output`` holds probabilities in (0, 1), e.g. a sigmoid output.
    """
    output = as_tensor_variable(output)
    target = as_tensor_variable(target)
    one = _like(1, upgrade_to_float(output.dtype))
    node = output.owner
    if node is not None and isinstance(node.op, Elemwise) and node.op.scalar_op.name == "sigmoid":
        # log(sigmoid(x)) = -softplus(-x) and log(1 - sigmoid(x)) = -softplus(x): exact where
        # the sigmoid saturates, and so is the gradient built from them.
        x = node.inputs[0]
        return _math.add(_math.mul(target, softplus(_math.neg(x))),
                         _math.mul(_math.sub(one, target), softplus(x)))
    hit = _math.mul(target, _math.log(output))
    miss = _math.mul(_math.sub(one, target), _math.log(_math.sub(one, output)))
    return _math.neg(_math.add(hit, miss))


def stable_log(dist: Variable) -> Variable:
    """``log(dist)``, as ``log_softmax(z)`` when ``dist`` is a softmax of ``z`` in any form
    (``softmax_logits``): no log of an underflowed 0, in the value or in the gradient built
    from it."""
    logits = softmax_logits(dist)
    if logits is None:
        return _math.log(dist)
    out = LogSoftmax(logits.axis)(logits.z)
    return out if out.type == dist.type else _math.cast(out, dist.dtype)


def _like(value: Any, dtype: str) -> Variable:
    """A constant of ``dtype``, so that Python numbers do not upcast a float32 graph."""
    return constant(np.asarray(value, dtype=dtype))
