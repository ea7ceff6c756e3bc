"""``tensor.nnet.conv3d2d``: Theano's movie convolution, in its (batch, time, channel, row, col)
layout, and the diagonal-stripe ops it was built from.

Theano computed ``conv3d`` as 2d convolutions of every frame summed along
diagonals of (signal time, filter time). The result is a true 3d convolution
(filters flipped on all three axes), which is what this module computes with
``AbstractConv3d`` after moving the channel axis ahead of time; gradients and
backends come from that op. ``DiagonalSubtensor`` and ``IncDiagonalSubtensor``
remain public for programs that use the stripe directly.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Op, Variable
from arignote.tensor.alloc import zeros, zeros_like
from arignote.tensor.nnet.abstract_conv import AbstractConv3d
from arignote.tensor.subtensor.write import set_subtensor
from arignote.tensor.variable import as_tensor_variable

__all__ = ["conv3d", "get_diagonal_subtensor_view", "DiagonalSubtensor", "IncDiagonalSubtensor",
           "diagonal_subtensor", "inc_diagonal_subtensor"]

_MODES = ("valid", "full", "half")
_MOVIE_TO_CONV = (0, 2, 1, 3, 4)  # (N, T, C, H, W) <-> (N, C, T, H, W); its own inverse


def get_diagonal_subtensor_view(x: np.ndarray, i0: int, i1: int) -> np.ndarray:
    """The stripe of ``x`` along axes ``i0`` (rows) and ``i1`` (columns), as a view.

    Entry ``[a, b]`` (on those axes) is ``x[a + n1 - 1 - b, b]`` where ``n1`` is
    the length of axis ``i1``, so each column is shifted up by its index and the
    stripe has ``n0 - n1 + 1`` rows. Needs ``n0 >= n1``.
    """
    i0, i1 = int(i0), int(i1)
    n0, n1 = x.shape[i0], x.shape[i1]
    if n0 < n1:
        raise NotImplementedError(f"get_diagonal_subtensor_view: axis {i0} (length {n0}) must be at "
                                  f"least as long as axis {i1} (length {n1})")
    index = [slice(None)] * x.ndim
    index[i0] = slice(n1 - 1, None)
    start = x[tuple(index)]
    strides = list(start.strides)
    if n1 != 1:
        strides[i1] -= strides[i0]
    return np.lib.stride_tricks.as_strided(start, start.shape, strides, writeable=x.flags.writeable)


def _axis(value: Any) -> Variable:
    return as_tensor_variable(value)


class DiagonalSubtensor(Op):
    """The diagonal stripe of ``x`` along axes ``i0``, ``i1`` (see
    ``get_diagonal_subtensor_view``), copied. ``inplace`` is accepted for Theano's
    signature; the result never aliases ``x``."""

    __props__ = ("inplace",)

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)

    def make_node(self, x: Any, i0: Any, i1: Any) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x, _axis(i0), _axis(i1)], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = get_diagonal_subtensor_view(*inputs).copy()

    def grad(self, inputs: list, output_grads: list) -> list:
        x, i0, i1 = inputs
        return [inc_diagonal_subtensor(zeros_like(x), i0, i1, output_grads[0]), None, None]


class IncDiagonalSubtensor(Op):
    """``x`` with ``amt`` added to its diagonal stripe along ``i0``, ``i1`` (the gradient of
    ``DiagonalSubtensor``); a new array, whatever ``inplace`` says."""

    __props__ = ("inplace",)

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)

    def make_node(self, x: Any, i0: Any, i1: Any, amt: Any) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x, _axis(i0), _axis(i1), as_tensor_variable(amt)], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, i0, i1, amt = inputs
        x = x.copy()
        view = get_diagonal_subtensor_view(x, i0, i1)
        view += amt
        output_storage[0][0] = x

    def grad(self, inputs: list, output_grads: list) -> list:
        _, i0, i1, _ = inputs
        g = output_grads[0]
        return [g, None, None, diagonal_subtensor(g, i0, i1)]


diagonal_subtensor = DiagonalSubtensor(False)
inc_diagonal_subtensor = IncDiagonalSubtensor(False)


def _pad(mode: str, length: Any) -> Any:
    """Zeros each side of an axis for ``mode`` and a filter of ``length`` taps."""
    return {"valid": 0, "full": length - 1, "half": length // 2}[mode]


def conv3d(signals: Any, filters: Any, signals_shape: Sequence | None = None,
           filters_shape: Sequence | None = None, border_mode: Any = "valid") -> Variable:
    """Convolve movies ``signals`` (batch, time, channels, rows, cols) with ``filters``
    (out channels, time, channels, rows, cols), flipping the filters on all three axes.

    ``border_mode`` is ``'valid'``, ``'full'`` or ``'half'``, or a (time, rows,
    cols) triple of them. ``signals_shape``/``filters_shape`` are the shapes when
    known (checked at run time). Returns (batch, out time, out channels, out rows,
    out cols).
    """
    signals, filters = as_tensor_variable(signals), as_tensor_variable(filters)
    for what, var in (("signals", signals), ("filters", filters)):
        if var.ndim != 5:
            raise TypeError(f"conv3d2d.conv3d: {what} {var.describe()} must be 5d (batch or out "
                            f"channels, time, channels, rows, cols), got {var.ndim} dimensions")
    modes = (border_mode,) * 3 if isinstance(border_mode, str) else tuple(border_mode)
    if len(modes) != 3 or any(m not in _MODES for m in modes):
        raise ValueError(f"conv3d2d.conv3d: border_mode must be one of {_MODES} or a (time, rows, "
                         f"cols) triple of them, got {border_mode!r}")
    image_shape = None if signals_shape is None else tuple(signals_shape[i] for i in _MOVIE_TO_CONV)
    kernel_shape = None if filters_shape is None else tuple(filters_shape[i] for i in _MOVIE_TO_CONV)
    image = signals.dimshuffle(*_MOVIE_TO_CONV)
    kernel = filters.dimshuffle(*_MOVIE_TO_CONV)
    if len(set(modes)) == 1:
        mode = modes[0]
    else:  # mixed modes: zero-pad each axis as its mode says, then a valid convolution
        pads = [_pad(m, kernel.shape[2 + d]) for d, m in enumerate(modes)]
        padded_shape = [image.shape[0], image.shape[1]] + [image.shape[2 + d] + 2 * p
                                                           for d, p in enumerate(pads)]
        inner = (slice(None), slice(None)) + tuple(slice(p, p + image.shape[2 + d])
                                                   for d, p in enumerate(pads))
        image = set_subtensor(zeros(padded_shape, image.dtype)[inner], image)
        image_shape, mode = None, "valid"
    out = AbstractConv3d(image_shape, kernel_shape, mode, filter_flip=True)(image, kernel)
    return out.dimshuffle(*_MOVIE_TO_CONV)
