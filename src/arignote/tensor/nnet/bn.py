"""Batch normalization (``tensor.nnet.bn``): Theano's functions and abstract ops.

``batch_normalization_train`` normalises with the batch's statistics (and
updates running averages), ``batch_normalization_test`` with given ones,
``batch_normalization`` is the plain elementwise formula. The three abstract
ops (``AbstractBatchNormTrain``, ``AbstractBatchNormInference``,
``AbstractBatchNormTrainGrad``) have numpy ``perform``s; the specialize phase
replaces each by its graph of reductions and elementwise ops (``lowered_*``
below), which fuses on the CPU and runs on a GPU through the ordinary
kernels. Their gradients (``tensor/grad/bn.py``) come from the same graphs.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.config import config
from arignote.graph.basic import Apply, Op, Variable
from arignote.scalar.dtypes import upcast
from arignote.tensor import math as _math
from arignote.tensor.reduction import mean as _mean
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.shape import addbroadcast, patternbroadcast, shape_i
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["batch_normalization", "batch_normalization_train", "batch_normalization_test",
           "AbstractBatchNormTrain", "AbstractBatchNormInference", "AbstractBatchNormTrainGrad"]


def batch_normalization(inputs: Any, gamma: Any, beta: Any, mean: Any, std: Any,
                        mode: str = "low_mem") -> Variable:
    """``(inputs - mean) * (gamma / std) + beta``, elementwise (all broadcastable together).

    ``mode`` ('low_mem' or 'high_mem') chose between two implementations in
    Theano; here both build the same graph, which fusion turns into one pass.
    """
    if mode not in ("low_mem", "high_mem"):
        raise ValueError('mode must be either "low_mem", "high_mem"')
    inputs, gamma, beta, mean, std = (as_tensor_variable(v) for v in (inputs, gamma, beta, mean, std))
    return _math.add(_math.mul(_math.sub(inputs, mean), _math.true_div(gamma, std)), beta)


# --------------------------------------------------------------- argument checks
def _axes(axes: Any, ndim: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if axes == "per-activation":
        axes = (0,)
    elif axes == "spatial":
        axes = (0,) + tuple(range(2, ndim))
    elif isinstance(axes, (tuple, list, np.ndarray)):
        axes = tuple(int(a) for a in axes)
    else:
        raise ValueError(f"invalid axes: {axes!r}: use 'per-activation', 'spatial' or a tuple of ints")
    axes = tuple(sorted(axes))
    if not axes:
        raise ValueError("there should be at least one normalization axis")
    if min(axes) < 0 or max(axes) >= ndim:
        raise ValueError(f"axes should be less than ndim (<{ndim}), but {axes} given")
    return axes, tuple(i for i in range(ndim) if i not in axes)


def _epsilon(epsilon: float) -> Variable:
    # Checked after the cast, as float32(1e-5) < 1e-5 (cuDNN's minimum).
    value = np.asarray(epsilon, dtype=config.floatX)
    if value < 1e-5:
        raise ValueError(f"epsilon must be at least 1e-5, got {value}")
    return constant(value)


def _params(values: Sequence[Any], names: Sequence[str], ndim: int, axes: tuple, kept: tuple,
            params_ndim: int) -> list[Variable]:
    """Each parameter as a tensor of the input's rank, broadcastable along ``axes``."""
    result = []
    for value, name in zip(values, names):
        var = as_tensor_variable(value)
        if var.ndim != params_ndim:
            raise ValueError(f"{name} {var.describe()} has {var.ndim} dimensions, but must have "
                             f"{params_ndim} (one per non-normalized axis, or the inputs' {ndim})")
        if params_ndim != ndim:
            pattern = ["x"] * ndim
            for i, axis in enumerate(kept):
                pattern[axis] = i
            var = var.dimshuffle(pattern)
        else:
            var = addbroadcast(var, *axes)
        result.append(var)
    return result


def _params_ndim(gamma: Variable, ndim: int, kept: tuple) -> int:
    return ndim if as_tensor_variable(gamma).ndim == ndim else len(kept)


def batch_normalization_train(inputs: Any, gamma: Any, beta: Any, axes: Any = "per-activation",
                              epsilon: float = 1e-4, running_average_factor: float = 0.1,
                              running_mean: Any = None, running_var: Any = None) -> tuple:
    """Normalise ``inputs`` by their mean and variance over ``axes``, then scale and shift.

    ``axes``: 'per-activation' (``(0,)``), 'spatial' (``(0, 2, 3, ...)``) or a
    tuple. ``gamma``/``beta`` have the input's rank (length 1 along ``axes``)
    or only the other axes. Returns ``(out, mean, invstd)``, plus the new
    running mean and variance when both are given: ``running * (1 - factor) +
    batch * factor``, the variance unbiased by ``m / (m - 1)``.
    """
    inputs = as_tensor_variable(inputs)
    ndim = inputs.ndim
    axes, kept = _axes(axes, ndim)
    params_ndim = _params_ndim(gamma, ndim, kept)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be given or both be None")
    gamma, beta = _params([gamma, beta], ["gamma", "beta"], ndim, axes, kept, params_ndim)
    op = AbstractBatchNormTrain(axes)
    eps = _epsilon(epsilon)
    if running_mean is None:
        results = list(op(inputs, gamma, beta, eps, running_average_factor))
    else:
        rm, rv = _params([running_mean, running_var], ["running_mean", "running_var"], ndim, axes,
                         kept, params_ndim)
        results = list(op(inputs, gamma, beta, eps, running_average_factor, rm, rv))
        results[3:] = [patternbroadcast(r, v.broadcastable) for r, v in zip(results[3:], (rm, rv))]
    if params_ndim != ndim:
        results[1:] = [r.dimshuffle(kept) for r in results[1:]]
    return tuple(results)


def batch_normalization_test(inputs: Any, gamma: Any, beta: Any, mean: Any, var: Any,
                             axes: Any = "per-activation", epsilon: float = 1e-4) -> Variable:
    """``(inputs - mean) * gamma / sqrt(var + epsilon) + beta`` with given statistics
    (usually the running averages from training); parameters laid out as in
    ``batch_normalization_train``."""
    inputs = as_tensor_variable(inputs)
    ndim = inputs.ndim
    axes, kept = _axes(axes, ndim)
    params_ndim = _params_ndim(gamma, ndim, kept)
    params = _params([gamma, beta, mean, var], ["gamma", "beta", "mean", "var"], ndim, axes, kept,
                     params_ndim)
    return AbstractBatchNormInference(axes)(inputs, *params, _epsilon(epsilon))


# ------------------------------------------------------------------------- ops
def _common(*variables: Variable) -> list[Variable]:
    dtype = upcast(*[v.dtype for v in variables])
    return [v if v.dtype == dtype else _math.cast(v, dtype) for v in variables]


def _scalar(value: Any, what: str) -> Variable:
    var = as_tensor_variable(value)
    if var.ndim != 0:
        raise TypeError(f"{what} must be a scalar, got {var.describe()} ({var.type.describe()})")
    return var


class _AxesOp(Op):
    __props__ = ("axes",)

    def __init__(self, axes: Sequence[int] = (0,)):
        axes = tuple(int(a) for a in axes)
        if not axes:
            raise ValueError("there should be at least one normalization axis")
        self.axes = axes

    def _check(self, x: Variable, others: Sequence[Variable], names: Sequence[str]) -> None:
        if max(self.axes) >= x.ndim or min(self.axes) < 0:
            raise ValueError(f"axes should be less than ndim (<{x.ndim}), but {self.axes} given")
        for var, name in zip(others, names):
            if var.ndim != x.ndim:
                raise TypeError(f"{type(self).__name__}: {name} {var.describe()} has {var.ndim} "
                                f"dimensions, but the input {x.describe()} has {x.ndim}")


class AbstractBatchNormTrain(_AxesOp):
    """Inputs ``x, scale, bias, epsilon, running_average_factor[, running_mean,
    running_var]``; outputs ``out, mean, invstd[, new_running_mean, new_running_var]``."""

    def make_node(self, x: Any, scale: Any, bias: Any, epsilon: Any = 1e-4,
                  running_average_factor: Any = 0.1, running_mean: Any = None,
                  running_var: Any = None) -> Apply:
        tensors = [as_tensor_variable(v) for v in (x, scale, bias, running_mean, running_var) if v is not None]
        if len(tensors) not in (3, 5):
            raise ValueError("running_mean and running_var must either both be given or both be None")
        self._check(tensors[0], tensors[1:], ["scale", "bias", "running_mean", "running_var"])
        tensors = _common(*tensors)
        x, scale = tensors[:2]
        inputs = tensors[:3] + [_scalar(epsilon, "epsilon"),
                                _scalar(running_average_factor, "running_average_factor")] + tensors[3:]
        outputs = [x.type(), scale.type(), scale.type()] + [scale.type() for _ in tensors[3:]]
        return Apply(self, inputs, outputs)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, scale, bias, epsilon, factor = inputs[:5]
        mean = x.mean(self.axes, keepdims=True)
        var = x.var(self.axes, keepdims=True)
        invstd = 1 / np.sqrt(var + epsilon)
        results = [(x - mean) * (scale * invstd) + bias, mean, invstd]
        if len(inputs) > 5:
            m = x.size / max(mean.size, 1)
            results.append(inputs[5] * (1 - factor) + mean * factor)
            results.append(inputs[6] * (1 - factor) + (m / (m - 1)) * var * factor)
        for cell, value, out in zip(output_storage, results, node.outputs):
            cell[0] = np.asarray(value, out.type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]] + [input_shapes[1]] * (len(node.outputs) - 1)


class AbstractBatchNormInference(_AxesOp):
    """Inputs ``x, scale, bias, estimated_mean, estimated_variance, epsilon``."""

    def make_node(self, x: Any, scale: Any, bias: Any, estimated_mean: Any, estimated_variance: Any,
                  epsilon: Any = 1e-4) -> Apply:
        tensors = [as_tensor_variable(v) for v in (x, scale, bias, estimated_mean, estimated_variance)]
        self._check(tensors[0], tensors[1:], ["scale", "bias", "estimated_mean", "estimated_variance"])
        tensors = _common(*tensors)
        return Apply(self, tensors + [_scalar(epsilon, "epsilon")], [tensors[0].type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, scale, bias, mean, var, epsilon = inputs
        out = (x - mean) * (scale / np.sqrt(var + epsilon)) + bias
        output_storage[0][0] = np.asarray(out, node.outputs[0].type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class AbstractBatchNormTrainGrad(_AxesOp):
    """The gradient of the normalised output: inputs ``x, dy, scale, x_mean, x_invstd,
    epsilon``; outputs the gradients of ``x``, ``scale`` and ``bias``."""

    def make_node(self, x: Any, dy: Any, scale: Any, x_mean: Any, x_invstd: Any,
                  epsilon: Any = 1e-4) -> Apply:
        tensors = [as_tensor_variable(v) for v in (x, dy, scale, x_mean, x_invstd)]
        self._check(tensors[0], tensors[1:], ["dy", "scale", "x_mean", "x_invstd"])
        tensors = _common(*tensors)
        x, scale = tensors[0], tensors[2]
        return Apply(self, tensors + [_scalar(epsilon, "epsilon")], [x.type(), scale.type(), scale.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, dy, scale, mean, invstd, _ = inputs
        axes = self.axes
        centred = x - mean
        c = dy * invstd - centred * (np.mean(dy * centred, axis=axes, keepdims=True) * invstd ** 3)
        results = [scale * (c - np.mean(c, axis=axes, keepdims=True)),
                   np.sum(dy * invstd * centred, axis=axes, keepdims=True),
                   np.sum(dy, axis=axes, keepdims=True)]
        for cell, value, out in zip(output_storage, results, node.outputs):
            cell[0] = np.asarray(value, out.type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0], input_shapes[2], input_shapes[2]]


# ------------------------------------------------- the ops as ordinary graphs
def _like(value: float, var: Variable) -> Variable:
    return constant(np.asarray(value, var.dtype))


def _as(value: Variable, var: Variable) -> Variable:
    """``value`` in ``var``'s dtype, so a float64 epsilon does not upcast a float32 graph."""
    return value if value.dtype == var.dtype else _math.cast(value, var.dtype)


def lowered_train(node: Apply) -> list[Variable]:
    """The outputs of an AbstractBatchNormTrain node, as reductions and elementwise ops."""
    x, scale, bias, epsilon, factor = node.inputs[:5]
    axes = node.op.axes
    mean = _mean(x, axes, keepdims=True)
    centred = _math.sub(x, mean)
    var = _mean(_math.sqr(centred), axes, keepdims=True)
    invstd = _math.inv(_math.sqrt(_math.add(var, _as(epsilon, var))))
    results = [_math.add(_math.mul(centred, _math.mul(scale, invstd)), bias), mean, invstd]
    if len(node.inputs) > 5:
        f = _as(factor, mean)
        keep = _math.sub(_like(1, mean), f)
        results.append(_math.add(_math.mul(node.inputs[5], keep), _math.mul(mean, f)))
        count = _math.cast(_math.true_div(_size(x), _size(mean)), mean.dtype)
        unbias = _math.true_div(count, _math.sub(count, _like(1, mean)))
        results.append(_math.add(_math.mul(node.inputs[6], keep), _math.mul(_math.mul(unbias, var), f)))
    return [patternbroadcast(r, o.broadcastable) if r.broadcastable != o.broadcastable else r
            for r, o in zip(results, node.outputs)]


def _size(x: Variable) -> Variable:
    total = shape_i(x, 0)
    for d in range(1, x.ndim):
        total = _math.mul(total, shape_i(x, d))
    return total


def lowered_train_grad(node: Apply) -> list[Variable]:
    """The outputs of an AbstractBatchNormTrainGrad node as a graph: for ``c = dy * invstd -
    (x - mean) * mean(dy * (x - mean)) * invstd**3``, ``scale * (c - mean(c))``, and the
    sums giving the scale's and bias's gradients."""
    x, dy, scale, mean, invstd, _ = node.inputs
    axes = node.op.axes
    centred = _math.sub(x, mean)
    cube = _math.mul(_math.sqr(invstd), invstd)
    spread = _mean(_math.mul(dy, centred), axes, keepdims=True)
    c = _math.sub(_math.mul(dy, invstd), _math.mul(centred, _math.mul(spread, cube)))
    results = [_math.mul(scale, _math.sub(c, _mean(c, axes, keepdims=True))),
               _sum(_math.mul(_math.mul(dy, invstd), centred), axes, keepdims=True),
               _sum(dy, axes, keepdims=True)]
    return [patternbroadcast(r, o.broadcastable) if r.broadcastable != o.broadcastable else r
            for r, o in zip(results, node.outputs)]


def lowered_inference(node: Apply) -> list[Variable]:
    x, scale, bias, mean, var, epsilon = node.inputs
    std = _math.sqrt(_math.add(var, _as(epsilon, var)))
    out = _math.add(_math.mul(_math.sub(x, mean), _math.true_div(scale, std)), bias)
    return [patternbroadcast(out, node.outputs[0].broadcastable)
            if out.broadcastable != node.outputs[0].broadcastable else out]


LOWERED = {AbstractBatchNormTrain: lowered_train, AbstractBatchNormTrainGrad: lowered_train_grad,
           AbstractBatchNormInference: lowered_inference}
