"""Theano's compound softmax and one-hot cross-entropy ops, under Theano's names.

Theano code applies these ops by name (``SoftmaxWithBias()(x, b)``,
``crossentropy_softmax_argmax_1hot_with_bias(x, b, y)``, the gradient ops in
hand-written gradients). Each has Theano's inputs, outputs and dtypes, a numpy
``perform`` (the reference, computed with ``basic``'s softmax) and a gradient rule
(``tensor/grad/nnet.py``). Compiling replaces each node by the composition of
arignote's ops in ``LOWERED`` (``rewrites/nnet_compound.py``, canonicalize phase), so
the native and GPU backends run them with the kernels they have for ``softmax``,
``log_softmax`` and fused elementwise ops (``perform`` alone was 1.7-5x slower than
the composition for ``softmax_with_bias``). Class indices out of range raise a
ValueError naming the labels, in both forms (Theano read ``-1`` as the last class in
some of these ops and failed with an IndexError in others).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable, user_variable
from arignote.scalar.dtypes import COMPLEX, DISCRETE, upgrade_to_float
from arignote.tensor import math as _math
from arignote.tensor.alloc import arange, ones_like
from arignote.tensor.hostop import HostOp
from arignote.tensor.nnet.basic import (SOFTMAX_FORMS, ClassIndices, Logits, check_class_indices, log_softmax,
                                        log_softmax_values, softmax, softmax_values, stable_log)
from arignote.tensor.reduction import argmax
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.shape import patternbroadcast, shape_i, shape_padright
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["SoftmaxWithBias", "softmax_with_bias", "SoftmaxGrad", "softmax_grad",
           "CrossentropySoftmaxArgmax1HotWithBias", "crossentropy_softmax_argmax_1hot_with_bias",
           "CrossentropySoftmax1HotWithBiasDx", "crossentropy_softmax_1hot_with_bias_dx",
           "CrossentropyCategorical1Hot", "crossentropy_categorical_1hot", "CrossentropyCategorical1HotGrad",
           "crossentropy_categorical_1hot_grad"]


def _tensor(x: Any, ndims: tuple, what: str, name: str, kinds: str) -> Variable:
    """``x`` as a tensor of one of ``ndims`` dimensions and of ``kinds`` ("real" or "int")."""
    x = as_tensor_variable(x)
    bad_kind = (x.dtype in COMPLEX if kinds == "real"
                else x.dtype not in DISCRETE or x.dtype == "bool")
    if x.ndim not in ndims or bad_kind:
        shape = " or ".join(f"{n}-d" for n in ndims)
        kind = "real numbers" if kinds == "real" else "integer class indices"
        fix = "" if kinds == "real" else ": cast them with tensor.cast(y, 'int64')"
        raise TypeError(f"{what}: {name} must be a {shape} tensor of {kind}, got {x.describe()} "
                        f"({x.type.describe()}){fix}")
    return x


def _check_length(node: Apply, got: int, i: int, want: int, j: int, what: str) -> None:
    """Raise a ValueError when input ``i``'s length ``got`` is not input ``j``'s ``want``."""
    if got != want:
        a, b = (user_variable(node.inputs[k]).describe() for k in (i, j))
        raise ValueError(f"{what}: {a} has length {got} where {b} has {want}: they must match")


# ------------------------------------------------------------------ softmax ops
class SoftmaxWithBias(HostOp):
    """``softmax(x + b)`` of the rows of the matrix ``x``, ``b`` a vector added to each row
    (output in ``x``'s float dtype, as Theano)."""

    def make_node(self, x: Any, b: Any) -> Apply:
        x, b = as_tensor_variable(x), as_tensor_variable(b)
        if x.ndim != 2 or b.ndim != 1 or x.dtype in COMPLEX or b.dtype in COMPLEX:
            raise TypeError(f"softmax_with_bias expects a matrix and a vector of reals, got "
                            f"{x.describe()} ({x.type.describe()}) and {b.describe()} "
                            f"({b.type.describe()})")
        return Apply(self, [x, b], [TensorType(upgrade_to_float(x.dtype), x.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, b = inputs
        _check_length(node, b.shape[0], 1, x.shape[1], 0, "softmax_with_bias (columns)")
        dtype = node.outputs[0].type.numpy_dtype
        output_storage[0][0] = softmax_values(x.astype(dtype) + b.astype(dtype), 1, dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class SoftmaxGrad(HostOp):
    """The gradient through a softmax along ``axis`` (the last by default): given the output
    gradient ``dy`` and the softmax ``sm``, ``dy * sm - sum(dy * sm, axis) * sm``."""

    __props__ = ("axis",)

    def __init__(self, axis: int = -1):
        self.axis = int(axis)

    def make_node(self, dy: Any, sm: Any) -> Apply:
        dy = as_tensor_variable(dy)
        if dy.ndim == 0 or dy.dtype in COMPLEX:
            raise TypeError(f"softmax_grad: dy must be a tensor of real numbers with at least one "
                            f"dimension, got {dy.describe()} ({dy.type.describe()})")
        sm = _tensor(sm, (dy.ndim,), "softmax_grad", "sm (of dy's dimensions)", "real")
        if not -sm.ndim <= self.axis < sm.ndim:
            raise ValueError(f"softmax_grad along axis {self.axis} of {sm.describe()}, which has "
                             f"{sm.ndim} dimensions: pick an axis in [{-sm.ndim}, {sm.ndim})")
        if self.axis < 0:
            return SoftmaxGrad(self.axis + sm.ndim).make_node(dy, sm)
        return Apply(self, [dy, sm], [TensorType(upgrade_to_float(sm.dtype), sm.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        dtype = node.outputs[0].type.numpy_dtype
        dy, sm = (v.astype(dtype, copy=False) for v in inputs)
        dy_sm = dy * sm
        output_storage[0][0] = dy_sm - dy_sm.sum(axis=self.axis, keepdims=True) * sm

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[1]]


# ------------------------------------------------------- one-hot cross-entropies
class CrossentropySoftmaxArgmax1HotWithBias(HostOp):
    """For a matrix ``x``, a bias vector ``b`` and class indices ``y_idx``: the row-wise
    negative log-likelihood ``-log(softmax(x + b))[i, y_idx[i]]``, the softmax itself and the
    row-wise argmax of ``x + b`` (in ``y_idx``'s dtype), computed together and stably."""

    what = "crossentropy_softmax_argmax_1hot_with_bias"  # the name its errors give

    def make_node(self, x: Any, b: Any, y_idx: Any) -> Apply:
        x = _tensor(x, (2,), self.what, "x", "real")
        b = _tensor(b, (1,), self.what, "b", "real")
        y_idx = _tensor(y_idx, (1,), self.what, "y_idx", "int")
        dtype = upgrade_to_float(x.dtype)
        return Apply(self, [x, b, y_idx], [TensorType(dtype, y_idx.broadcastable)(),
                                           TensorType(dtype, x.broadcastable)(), y_idx.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, b, y = inputs
        _check_length(node, b.shape[0], 1, x.shape[1], 0, f"{self.what} (columns)")
        check_class_indices(y, x.shape[1], node.inputs[2], self.what, "x", x.shape[0])
        dtype = node.outputs[1].type.numpy_dtype
        z = x.astype(dtype) + b.astype(dtype)
        rows = np.arange(z.shape[0])
        output_storage[0][0] = -log_softmax_values(z, 1, dtype)[rows, y]
        output_storage[1][0] = softmax_values(z, 1, dtype)
        argmax = z.argmax(axis=1) if z.shape[1] else np.zeros(z.shape[0], dtype=y.dtype)
        output_storage[2][0] = argmax.astype(y.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        x_shape = input_shapes[0]
        return [(x_shape[0],), x_shape, input_shapes[2]]


class CrossentropySoftmax1HotWithBiasDx(HostOp):
    """The gradient of that negative log-likelihood with respect to ``x``: given its output
    gradient ``dy`` (one per row, or a scalar for all), the softmax ``sm`` and the class
    indices, ``dy[i] * (sm[i] - onehot(y_idx[i]))``."""

    what = "crossentropy_softmax_1hot_with_bias_dx"  # the name its errors give

    def make_node(self, dy: Any, sm: Any, y_idx: Any) -> Apply:
        dy = _tensor(dy, (0, 1), self.what, "dy", "real")
        sm = _tensor(sm, (2,), self.what, "sm", "real")
        y_idx = _tensor(y_idx, (1,), self.what, "y_idx", "int")
        return Apply(self, [dy, sm, y_idx], [TensorType(upgrade_to_float(sm.dtype), sm.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        dy, sm, y = inputs
        check_class_indices(y, sm.shape[1], node.inputs[2], self.what, "sm", sm.shape[0])
        if dy.ndim and dy.shape[0] != 1:
            _check_length(node, dy.shape[0], 0, sm.shape[0], 1, f"{self.what} (rows)")
        dtype = node.outputs[0].type.numpy_dtype
        scale = np.broadcast_to(np.reshape(dy.astype(dtype), (-1,)), (sm.shape[0],))
        dx = sm.astype(dtype) * scale[:, None]
        dx[np.arange(sm.shape[0]), y] -= scale
        output_storage[0][0] = dx

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[1]]


class CrossentropyCategorical1Hot(HostOp):
    """``-log(coding_dist[i, true_one_of_n[i]])`` for rows of probabilities ``coding_dist``
    and integer class indices (Theano's instance: ``crossentropy_categorical_1hot``). Of a
    softmax in any form (``softmax_logits``) it is lowered to ``-log_softmax(z)`` at the labels,
    and differentiated as that (``tensor/grad/nnet.py``): stable for large logits."""

    what = "CrossentropyCategorical1Hot"  # the name its errors give

    def make_node(self, coding_dist: Any, true_one_of_n: Any) -> Apply:
        coding_dist = _tensor(coding_dist, (2,), self.what, "coding_dist", "real")
        true_one_of_n = _tensor(true_one_of_n, (1,), self.what, "true_one_of_n", "int")
        out = TensorType(upgrade_to_float(coding_dist.dtype), (False,))()
        return Apply(self, [coding_dist, true_one_of_n], [out])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        coding, y = inputs
        check_class_indices(y, coding.shape[1], node.inputs[1], self.what, "coding_dist", coding.shape[0])
        picked = coding[np.arange(coding.shape[0]), y].astype(node.outputs[0].type.numpy_dtype)
        with np.errstate(divide="ignore"):
            output_storage[0][0] = -np.log(picked)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(input_shapes[0][0],)]


class CrossentropyCategorical1HotGrad(HostOp):
    """The gradient of ``CrossentropyCategorical1Hot`` with respect to ``coding_dist``: zero
    except ``-g_y[i] / coding_dist[i, true_one_of_n[i]]`` at each row's class."""

    what = "CrossentropyCategorical1HotGrad"  # the name its errors give

    def make_node(self, g_y: Any, coding_dist: Any, true_one_of_n: Any) -> Apply:
        g_y = _tensor(g_y, (1,), self.what, "g_y", "real")
        coding_dist = _tensor(coding_dist, (2,), self.what, "coding_dist", "real")
        true_one_of_n = _tensor(true_one_of_n, (1,), self.what, "true_one_of_n", "int")
        out = TensorType(upgrade_to_float(coding_dist.dtype), coding_dist.broadcastable)()
        return Apply(self, [g_y, coding_dist, true_one_of_n], [out])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        g_y, coding, y = inputs
        check_class_indices(y, coding.shape[1], node.inputs[2], self.what, "coding_dist", coding.shape[0])
        _check_length(node, g_y.shape[0], 0, coding.shape[0], 1, f"{self.what} (rows)")
        dtype = node.outputs[0].type.numpy_dtype
        g = np.zeros(coding.shape, dtype=dtype)
        rows = np.arange(coding.shape[0])
        with np.errstate(divide="ignore"):
            g[rows, y] = -g_y.astype(dtype) / coding[rows, y].astype(dtype)
        output_storage[0][0] = g

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[1]]


def _biased_logits(node: Apply) -> Logits:
    x, b = node.inputs
    return Logits(_math.add(x, b), 1, [x, b])


SOFTMAX_FORMS[SoftmaxWithBias] = _biased_logits

# Theano's op instances.
softmax_with_bias = SoftmaxWithBias()
softmax_grad = SoftmaxGrad()
crossentropy_softmax_argmax_1hot_with_bias = CrossentropySoftmaxArgmax1HotWithBias()
crossentropy_softmax_1hot_with_bias_dx = CrossentropySoftmax1HotWithBiasDx()
crossentropy_categorical_1hot = CrossentropyCategorical1Hot()
crossentropy_categorical_1hot_grad = CrossentropyCategorical1HotGrad()


# ------------------------------------------------------------ the compositions
def softmax_backward(gz: Variable, sm: Variable, axis: int) -> Variable:
    """The gradient reaching a softmax's input from ``gz`` on its output ``sm``."""
    return _math.mul(_math.sub(gz, _sum(_math.mul(gz, sm), axis, keepdims=True)), sm)


def one_hot_rows(labels: Variable, like: Variable) -> Variable:
    """The rows ``onehot(labels[i])`` of the matrix ``like``'s shape and dtype."""
    return _math.cast(_math.eq(shape_padright(labels), arange(shape_i(like, 1))), like.dtype)


def _labels(node: Apply, matrix: Variable, matrix_name: str) -> Variable:
    """The node's class indices (its last input), checked against ``matrix`` (its input
    ``matrix_name``) as ``perform`` checks them."""
    return ClassIndices(node.op.what, matrix_name)(node.inputs[-1], shape_i(matrix, 1), shape_i(matrix, 0))


def _fitted(results: list, node: Apply) -> list:
    """``results`` given the types of ``node``'s outputs (dtype, broadcast flags)."""
    fitted = []
    for r, o in zip(results, node.outputs):
        if r.broadcastable != o.broadcastable:
            r = patternbroadcast(r, o.broadcastable)
        fitted.append(r if r.dtype == o.dtype else _math.cast(r, o.dtype))
    return fitted


def _lowered_softmax_with_bias(node: Apply) -> list:
    x, b = node.inputs
    return _fitted([softmax(_math.add(x, b), axis=1)], node)


def _lowered_softmax_grad(node: Apply) -> list:
    dy, sm = node.inputs
    return _fitted([softmax_backward(dy, sm, node.op.axis)], node)


def _lowered_crossentropy_softmax_argmax(node: Apply) -> list:
    x, b, y = node.inputs
    z = _math.add(x, b)
    picked = log_softmax(z, axis=1)[arange(shape_i(x, 0)), _labels(node, x, "x")]
    return _fitted([_math.neg(picked), softmax(z, axis=1), argmax(z, axis=1)], node)


def _lowered_crossentropy_dx(node: Apply) -> list:
    dy, sm, _ = node.inputs
    scale = shape_padright(dy) if dy.ndim == 1 else dy
    return _fitted([_math.mul(scale, _math.sub(sm, one_hot_rows(_labels(node, sm, "sm"), sm)))], node)


def _lowered_crossentropy_categorical(node: Apply) -> list:
    coding = node.inputs[0]
    picked = stable_log(coding)[arange(shape_i(coding, 0)), _labels(node, coding, "coding_dist")]
    return _fitted([_math.neg(picked)], node)


def _lowered_crossentropy_categorical_grad(node: Apply) -> list:
    g_y, coding, _ = node.inputs
    hot = one_hot_rows(_labels(node, coding, "coding_dist"), coding)
    at_label = _math.switch(hot, coding, ones_like(coding))  # no 0 / 0 off the labels
    return _fitted([_math.true_div(_math.mul(_math.neg(shape_padright(g_y)), hot), at_label)], node)


LOWERED = {SoftmaxWithBias: _lowered_softmax_with_bias, SoftmaxGrad: _lowered_softmax_grad,
           CrossentropySoftmaxArgmax1HotWithBias: _lowered_crossentropy_softmax_argmax,
           CrossentropySoftmax1HotWithBiasDx: _lowered_crossentropy_dx,
           CrossentropyCategorical1Hot: _lowered_crossentropy_categorical,
           CrossentropyCategorical1HotGrad: _lowered_crossentropy_categorical_grad}
