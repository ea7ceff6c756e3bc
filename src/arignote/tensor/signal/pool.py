"""Pooling over the last N axes (``tensor.signal.pool``): max, sum and two averages,
their gradients, and the gradient of the max-pool gradient (Theano's ops and names).

Geometry along one pooled axis of length ``n``: the axis is padded by ``pad``
zeros on both sides (``r = n + 2 * pad``); window ``j`` covers
``[j * stride, j * stride + ws)`` of the padded axis, clipped to ``r``. With
``ignore_border=True`` only whole windows count (``(r - ws) // stride + 1``);
otherwise a last partial window is kept. ``max`` and ``sum`` never see the
padding; ``average_inc_pad`` divides by the window's size in the padded axis,
``average_exc_pad`` by its count of real elements.

Every perform is vectorised: one pass per offset inside the window (ws[0] *
ws[1] * ... passes), each over a strided view of the whole batch. The max-pool
gradient, as Theano's, goes to every element equal to its window's maximum.
"""
from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Op, Variable, user_stacklevel
from arignote.scalar.dtypes import DISCRETE
from arignote.tensor import math as _math
from arignote.tensor.shape import vector_entry, vector_length
from arignote.tensor.signal import windows
from arignote.tensor.signal.windows import Geometry
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["pool_2d", "pool_3d", "max_pool_2d_same_size", "Pool", "PoolGrad", "MaxPoolGrad",
           "AveragePoolGrad", "DownsampleFactorMaxGradGrad"]

MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")


# -------------------------------------------------------- deprecated keywords
def _renamed(new: Any, old: Any, new_name: str, old_name: str, unset: Any = None) -> Any:
    """Theano's handling of ``ds``/``st``/``padding``: a warning, or an error if both are given."""
    if old is None:
        return new
    if new not in (None, unset):
        raise ValueError(f"You can't provide a tuple value to both '{new_name}' and '{old_name}'."
                         f" Please provide a value only to '{new_name}'.")
    warnings.warn(f"DEPRECATION: the '{old_name}' parameter is not going to exist anymore as it is "
                  f"going to be replaced by the parameter '{new_name}'.", stacklevel=user_stacklevel())
    return old


def _keywords(nd: int, ws: Any, stride: Any, pad: Any, ds: Any, st: Any, padding: Any) -> tuple:
    ws = _renamed(ws, ds, "ws", "ds")
    if ws is None:
        raise ValueError("You must provide a tuple value for the window size.")
    stride = _renamed(stride, st, "stride", "st")
    pad = _renamed(pad, padding, "pad", "padding", unset=(0,) * nd)
    return ws, stride, pad


def _pool(nd: int, input: Any, ws: Any, ignore_border: bool | None, stride: Any, pad: Any,
          mode: str, ds: Any, st: Any, padding: Any) -> Variable:
    ws, stride, pad = _keywords(nd, ws, stride, pad, ds, st, padding)
    input = as_tensor_variable(input)
    if input.ndim < nd:
        raise NotImplementedError(f"pool_{nd}d requires a dimension >= {nd}, got {input.describe()} "
                                  f"with {input.ndim}")
    if ignore_border is None:
        warnings.warn(f"pool_{nd}d() will have the parameter ignore_border default value changed to "
                      "True (currently False). To have consistent behavior with all Theano versions, "
                      "explicitly add the parameter ignore_border=True.", stacklevel=user_stacklevel())
        ignore_border = False
    return Pool(ignore_border, mode=mode, ndim=nd)(input, ws, stride, pad)


def pool_2d(input: Any, ws: Any = None, ignore_border: bool | None = None, stride: Any = None,
            pad: Any = (0, 0), mode: str = "max", ds: Any = None, st: Any = None,
            padding: Any = None) -> Variable:
    """Pool the last two axes of ``input`` (N >= 2 dimensions) over windows of ``ws``.

    ``stride`` defaults to ``ws`` (windows do not overlap); ``pad`` adds that
    many zeros on both sides of each axis (needs ``ignore_border=True``);
    ``mode`` is 'max', 'sum', 'average_inc_pad' or 'average_exc_pad'.
    ``ignore_border=None`` warns and means False (Theano's default): a (5, 5)
    input with ws=(2, 2) gives (3, 3); True gives (2, 2). ``ds``, ``st``,
    ``padding`` are the deprecated names of ``ws``, ``stride``, ``pad``.
    """
    return _pool(2, input, ws, ignore_border, stride, pad, mode, ds, st, padding)


def pool_3d(input: Any, ws: Any = None, ignore_border: bool | None = None, stride: Any = None,
            pad: Any = (0, 0, 0), mode: str = "max", ds: Any = None, st: Any = None,
            padding: Any = None) -> Variable:
    """Pool the last three axes of ``input``; as ``pool_2d``, one entry per axis."""
    return _pool(3, input, ws, ignore_border, stride, pad, mode, ds, st, padding)


def max_pool_2d_same_size(input: Any, patch_size: Any) -> Variable:
    """``input`` with every value that is not the maximum of its (non-overlapping)
    ``patch_size`` patch set to zero; the shape is kept."""
    output = Pool(True)(input, patch_size)
    return MaxPoolGrad(True)(input, output, output, patch_size)


# --------------------------------------------------------------------- geometry
def _out_length(n: Any, ws: Any, stride: Any, ignore_border: bool) -> Any:
    """Windows along one padded axis of length ``n`` (ints or int scalars)."""
    symbolic = any(isinstance(v, Variable) for v in (n, ws, stride))
    if ignore_border:
        if not symbolic and ws == stride:
            return n // stride
        out = (n - ws) // stride + 1
        return _math.maximum(out, 0) if symbolic else max(out, 0)
    if isinstance(ws, Variable) or isinstance(stride, Variable):
        return _math.switch(_math.ge(stride, ws), (n - 1) // stride + 1,
                            _math.maximum(0, (n - 1 - ws) // stride + 1) + 1)
    if stride >= ws:
        return (n - 1) // stride + 1
    out = (n - 1 - ws + stride) // stride
    return (_math.maximum(out, 0) if symbolic else max(out, 0)) + 1


def _plain(values: Any, ndim: int) -> list:
    """The ``ndim`` ints or int scalars of a window/stride/pad given as ints, an array or
    a vector."""
    if isinstance(values, Variable):
        return [vector_entry(values, i) for i in range(ndim)]
    return [v if isinstance(v, Variable) else int(v) for v in values]


class _PoolBase(Op):
    __props__ = ("ignore_border", "mode", "ndim")
    # Theano's make_node refuses constant pads as large as the window, except in
    # AveragePoolGrad (reached with such pads, its gradient is a Pool given them symbolically).
    refuses_large_pad = True

    def __init__(self, ignore_border: bool = False, mode: str = "max", ndim: int = 2,
                 openmp: bool | None = None):
        # ``openmp`` is Theano's switch for its C loops, kept so that its calls still work;
        # the vectorised numpy perform has no such loops to switch.
        if mode == "max_deterministic":
            mode = "max"
        if mode not in MODES:
            raise ValueError(f"Pool mode parameter only support 'max', 'sum', 'average_inc_pad' and "
                             f"'average_exc_pad'. Got {mode}")
        if not isinstance(ndim, int) or ndim < 1:
            raise ValueError(f"ndim must be a positive int, got {ndim!r}")
        self.ignore_border = bool(ignore_border)
        self.mode = mode
        self.ndim = ndim

    @staticmethod
    def out_shape(imgshape: Sequence, ws: Any = None, ignore_border: bool = False, stride: Any = None,
                  pad: Any = None, ndim: int = 2, ds: Any = None, st: Any = None,
                  padding: Any = None) -> list:
        """The output shape for an input of ``imgshape`` (ints or int scalars)."""
        ws, stride, pad = _keywords(ndim, ws, stride, pad, ds, st, padding)
        if len(imgshape) < ndim:
            raise TypeError(f"imgshape must have at least {ndim} dimensions")
        ws = _plain(ws, ndim)
        stride = ws if stride is None else _plain(stride, ndim)
        pad = [0] * ndim if pad is None else _plain(pad, ndim)
        lead = list(imgshape[:-ndim])
        spatial = [imgshape[len(lead) + i] + 2 * pad[i] if not (isinstance(pad[i], int) and pad[i] == 0)
                   else imgshape[len(lead) + i] for i in range(ndim)]
        return lead + [_out_length(spatial[i], ws[i], stride[i], ignore_border) for i in range(ndim)]

    def _params(self, ws: Any, stride: Any, pad: Any) -> list[Variable]:
        stride = ws if stride is None else stride
        pad = (0,) * self.ndim if pad is None else pad
        if isinstance(pad, (tuple, list)) and not any(isinstance(p, Variable) for p in pad):
            if max(pad) != 0 and not self.ignore_border:
                raise NotImplementedError("padding works only with ignore_border=True")
            if self.refuses_large_pad and isinstance(ws, (tuple, list)) \
                    and not any(isinstance(w, Variable) for w in ws) and any(p >= w for p, w in zip(pad, ws)):
                raise NotImplementedError("padding must be smaller than strides")
        result = []
        for value, what in ((ws, "window size (ws)"), (stride, "stride"), (pad, "pad")):
            var = as_tensor_variable(value) if not isinstance(value, Variable) else value
            if var.ndim != 1 or var.dtype not in DISCRETE or var.dtype == "bool":
                raise TypeError(f"{type(self).__name__}: the {what} must be a vector of "
                                f"{self.ndim} ints, got {value!r}")
            length = vector_length(var)
            if length is not None and length != self.ndim:
                raise ValueError(f"{type(self).__name__}: the {what} must have {self.ndim} "
                                 f"entries, got {value!r}")
            result.append(var)
        return result

    def _tensor(self, value: Any, what: str) -> Variable:
        var = as_tensor_variable(value)
        if var.ndim < self.ndim:
            raise TypeError(f"{type(self).__name__}: {what} {var.describe()} has {var.ndim} "
                            f"dimensions, but pooling takes the last {self.ndim}")
        return var

    def geometry(self, shape: tuple, ws: np.ndarray, stride: np.ndarray, pad: np.ndarray) -> Geometry:
        """The checked pooling geometry for an input of ``shape``."""
        ws, stride, pad = (tuple(int(v) for v in a) for a in (ws, stride, pad))
        if not len(ws) == len(stride) == len(pad) == self.ndim:
            raise ValueError(f"{type(self).__name__}: ws {ws}, stride {stride} and pad {pad} must "
                             f"each have {self.ndim} entries")
        if min(ws) < 1 or min(stride) < 1 or min(pad) < 0:
            raise ValueError(f"{type(self).__name__}: window sizes and strides must be >= 1 and "
                             f"pads >= 0, got ws {ws}, stride {stride}, pad {pad}")
        if max(pad) > 0 and not self.ignore_border:
            raise ValueError("padding must be zero when ignore border is False")
        if any(p >= w for p, w in zip(pad, ws)) and self.mode not in ("sum", "average_inc_pad"):
            # sum and average_inc_pad are defined there (a window inside the padding adds
            # zeros); max and average_exc_pad would have windows with no element
            raise ValueError(f"{type(self).__name__}: pad {pad} must be smaller than the window "
                             f"{ws} in mode {self.mode!r}")
        out = self.out_shape(shape, ws, self.ignore_border, stride, pad, self.ndim)[-self.ndim:]
        return Geometry(ws, stride, pad, tuple(int(o) for o in out), tuple(shape[-self.ndim:]))

    def check_pooled(self, node: Apply, x: np.ndarray, pooled: np.ndarray, g: Geometry, what: str) -> None:
        if g.out != pooled.shape[-self.ndim:] or x.shape[:-self.ndim] != pooled.shape[:-self.ndim]:
            raise ValueError(f"{type(self).__name__}: {what} has shape {pooled.shape}, but pooling "
                             f"{node.inputs[0].describe()} of shape {x.shape} gives "
                             f"{x.shape[:-self.ndim] + g.out}")


class Pool(_PoolBase):
    """``mode`` pooling of the last ``ndim`` axes: inputs ``x``, ``ws``, ``stride``, ``pad``."""

    def make_node(self, x: Any, ws: Any, stride: Any = None, pad: Any = None) -> Apply:
        x = self._tensor(x, "the input")
        params = self._params(ws, stride, pad)
        broadcastable = x.broadcastable[:-self.ndim] + (False,) * self.ndim
        return Apply(self, [x, *params], [TensorType(x.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, *params = inputs
        g = self.geometry(x.shape, *params)
        if 0 in g.out or x.size == 0:
            output_storage[0][0] = np.zeros(x.shape[:-self.ndim] + g.out, x.dtype)
            return
        output_storage[0][0] = windows.pool(x, g, self.mode)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        x, ws, stride, pad = node.inputs
        return [tuple(self.out_shape(input_shapes[0], ws, self.ignore_border, stride, pad, self.ndim))]


class PoolGrad(_PoolBase):
    """The gradient ops' common part: the result has the input's shape."""

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class MaxPoolGrad(PoolGrad):
    """The gradient of max pooling: inputs ``x``, its pooled ``maxout``, the gradient
    ``gz`` of ``maxout``, and the pooling parameters."""

    def __init__(self, ignore_border: bool, ndim: int = 2, openmp: bool | None = None):
        super().__init__(ignore_border, "max", ndim)

    def make_node(self, x: Any, maxout: Any, gz: Any, ws: Any, stride: Any = None,
                  pad: Any = None) -> Apply:
        x = self._tensor(x, "the input")
        maxout, gz = self._tensor(maxout, "the pooled value"), self._tensor(gz, "the gradient")
        if not x.ndim == maxout.ndim == gz.ndim:
            raise TypeError(f"{type(self).__name__}: x, maxout and gz must have the same number of "
                            f"dimensions, got {x.ndim}, {maxout.ndim} and {gz.ndim}")
        return Apply(self, [x, maxout, gz, *self._params(ws, stride, pad)],
                     [TensorType(x.dtype, x.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, maxout, gz, *params = inputs
        g = self.geometry(x.shape, *params)
        self.check_pooled(node, x, maxout, g, "the pooled value")
        self.check_pooled(node, x, gz, g, "the gradient")
        output_storage[0][0] = windows.max_grad(x, maxout, gz.astype(x.dtype, copy=False), g)


class AveragePoolGrad(PoolGrad):
    """The gradient of sum and average pooling: inputs ``x``, the gradient ``gz`` of the
    pooled value, and the pooling parameters."""

    refuses_large_pad = False

    def __init__(self, ignore_border: bool, mode: str = "average_inc_pad", ndim: int = 2):
        if mode not in MODES[1:]:
            raise ValueError(f"AveragePoolGrad takes 'sum', 'average_inc_pad' or 'average_exc_pad', "
                             f"got {mode!r}")
        super().__init__(ignore_border, mode, ndim)

    def make_node(self, x: Any, gz: Any, ws: Any, stride: Any = None, pad: Any = None,
                  dummy: Any = None) -> Apply:
        x, gz = self._tensor(x, "the input"), self._tensor(gz, "the gradient")
        return Apply(self, [x, gz, *self._params(ws, stride, pad)], [TensorType(x.dtype, x.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, gz, *params = inputs
        g = self.geometry(x.shape, *params)
        self.check_pooled(node, x, gz, g, "the gradient")
        share = gz if self.mode == "sum" else gz / windows.counts(g, self.mode == "average_exc_pad")
        output_storage[0][0] = windows.sum_grad(share.astype(x.dtype, copy=False), x.shape, x.dtype, g)


class DownsampleFactorMaxGradGrad(_PoolBase):
    """The gradient of MaxPoolGrad with respect to its ``gz``: inputs ``x``, ``maxout``, and
    ``ggx`` (of ``x``'s shape); the result has ``maxout``'s shape."""

    def __init__(self, ignore_border: bool, mode: str = "max", ndim: int = 2,
                 openmp: bool | None = None):
        super().__init__(ignore_border, "max", ndim)

    def make_node(self, x: Any, maxout: Any, gz: Any, ws: Any, stride: Any = None,
                  pad: Any = None) -> Apply:
        x = self._tensor(x, "the input")
        maxout, gz = self._tensor(maxout, "the pooled value"), self._tensor(gz, "the gradient")
        return Apply(self, [x, maxout, gz, *self._params(ws, stride, pad)],
                     [TensorType(maxout.dtype, maxout.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, maxout, ggx, *params = inputs
        g = self.geometry(x.shape, *params)
        self.check_pooled(node, x, maxout, g, "the pooled value")
        if ggx.shape != x.shape:
            raise ValueError(f"{type(self).__name__}: the gradient has shape {ggx.shape}, but "
                             f"{node.inputs[0].describe()} has shape {x.shape}")
        output_storage[0][0] = windows.max_grad_grad(x, maxout, ggx.astype(maxout.dtype, copy=False), g)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[1]]
