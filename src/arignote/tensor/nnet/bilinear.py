"""Bilinear upsampling of feature maps (Theano's ``abstract_conv.bilinear_upsampling``)
and the triangle kernels that describe it (``bilinear_kernel_1D``/``_2D``).

Theano computes the upsampling as a transposed convolution of the edge-padded
input by the triangle kernel; the result is linear interpolation along each
axis, which is how it is built here: output ``j`` of an axis upsampled by
``p / q`` (``q = 1`` for an integer ratio) reads the input at coordinate

    u = (2 j q + 2 - p mod 2) / (2 p) - 1/2,

clamped to the first and last sample, mixing its two neighbours. (For odd
``p`` that is the usual half-pixel alignment; for even ``p`` it is shifted
by half an output sample, the asymmetry Theano's documentation notes.) An
axis of length ``n`` gives ``(n p - 1) // q + 1`` samples (``n p`` for an
integer ratio). Two gathers and a blend per axis: gradients, symbolic shapes
and symbolic integer ratios come from the ops used, and only the rows and
columns the output needs are read.
"""
from __future__ import annotations

import math
from typing import Any

from arignote.config import config
from arignote.graph.basic import Variable
from arignote.tensor import math as _math
from arignote.tensor.alloc import arange
from arignote.tensor.composed import take
from arignote.tensor.shape import specify_shape
from arignote.tensor.variable import as_tensor_variable

__all__ = ["bilinear_kernel_1D", "bilinear_kernel_2D", "bilinear_upsampling",
           "frac_bilinear_upsampling"]


def bilinear_kernel_1D(ratio: Any, normalize: bool = True) -> Variable:
    """The triangle ``1, 2, ..., ratio, ..., 2, 1`` (length ``2 ratio - 1``, of floatX),
    divided by ``ratio`` when ``normalize``: the kernel that upsamples one axis by
    ``ratio`` (an int or an int scalar)."""
    ratio = as_tensor_variable(ratio)
    offsets = arange(1 - ratio, ratio, dtype=config.floatX)
    kern = _math.cast(ratio, config.floatX) - abs(offsets)
    return kern / _math.cast(ratio, config.floatX) if normalize else kern


def bilinear_kernel_2D(ratio: Any, normalize: bool = True) -> Variable:
    """The outer product of the rows' and the columns' triangle kernels: ``ratio`` is
    an int (both axes) or a ``(rows, columns)`` pair."""
    rows, cols = ratio if isinstance(ratio, tuple) else (ratio, ratio)
    vertical = bilinear_kernel_1D(rows, normalize).dimshuffle(0, "x")
    return vertical * bilinear_kernel_1D(cols, normalize).dimshuffle("x", 0)


def _upsample_axis(x: Variable, axis: int, numerator: Any, denominator: int) -> Variable:
    """``x`` interpolated along ``axis`` at the coordinates of the module docstring."""
    length = x.shape[axis]
    count = (length * numerator - 1) // denominator + 1
    j = arange(count, dtype=config.floatX)
    p = _math.cast(numerator, config.floatX)
    u = (2 * denominator * j + 2 - _math.cast(numerator % 2, config.floatX)) / (2 * p) - 0.5
    below = _math.floor(u)
    weight = u - below
    last = length - 1
    first = _math.clip(_math.cast(below, "int64"), 0, last)
    second = _math.clip(_math.cast(below, "int64") + 1, 0, last)
    pattern = ["x"] * x.ndim
    pattern[axis] = 0
    weight = weight.dimshuffle(*pattern)
    return take(x, first, axis=axis) * (1 - weight) + take(x, second, axis=axis) * weight


def _reduced(fraction: Any) -> tuple[int, int]:
    if not (isinstance(fraction, tuple) and len(fraction) == 2
            and all(isinstance(v, int) and v > 0 for v in fraction)):
        raise ValueError(f"a fractional ratio is a (numerator, denominator) pair of positive "
                         f"ints, got {fraction!r}")
    common = math.gcd(*fraction)
    return fraction[0] // common, fraction[1] // common


def frac_bilinear_upsampling(input: Any, frac_ratio: tuple) -> Variable:
    """``input`` (batch, channels, rows, cols) upsampled by a fractional ratio: one
    ``(numerator, denominator)`` pair for both axes, or a pair of such pairs
    (rows, columns). Rows become ``(rows * numerator - 1) // denominator + 1``."""
    if not isinstance(frac_ratio, tuple):
        raise ValueError(f"frac_ratio must be a tuple, got {frac_ratio!r}")
    pairs = frac_ratio if isinstance(frac_ratio[0], tuple) else (frac_ratio, frac_ratio)
    if len(pairs) != 2:
        raise ValueError(f"frac_ratio must hold one (numerator, denominator) pair or two (rows, "
                         f"columns), got {frac_ratio!r}")
    x = _checked_input(input)
    for axis, pair in zip((2, 3), pairs):
        x = _upsample_axis(x, axis, *_reduced(pair))
    return x


def _checked_input(input: Any, batch_size: Any = None, num_input_channels: Any = None) -> Variable:
    x = as_tensor_variable(input)
    if x.ndim != 4:
        raise TypeError(f"bilinear_upsampling: the input {x.describe()} must be a 4D tensor "
                        f"(batch, channels, rows, cols), got {x.ndim} dimensions")
    if batch_size is not None or num_input_channels is not None:
        x = specify_shape(x, (batch_size, num_input_channels, None, None))
    return x


def bilinear_upsampling(input: Any, ratio: Any = None, frac_ratio: tuple | None = None,
                        batch_size: Any = None, num_input_channels: Any = None,
                        use_1D_kernel: bool = True) -> Variable:
    """``input`` (batch, channels, rows, cols) upsampled by bilinear interpolation, to
    (batch, channels, rows * ratio, cols * ratio) for an integer ``ratio`` (an int or
    int scalar), or by ``frac_ratio`` (see ``frac_bilinear_upsampling``); give exactly
    one. ``batch_size``/``num_input_channels``, when given, are checked against the
    input at run time. ``use_1D_kernel`` chose Theano's implementation (same values);
    both compute the same interpolation here, fractional ratios included.
    """
    has_ratio = ratio is not None and not (isinstance(ratio, int) and ratio == 0)
    if has_ratio and frac_ratio:
        raise ValueError("can't use ratio and frac_ratio together")
    if not (has_ratio or frac_ratio):
        raise ValueError("No ratio (or frac_ratio) provided")
    if frac_ratio:
        return frac_bilinear_upsampling(_checked_input(input, batch_size, num_input_channels),
                                        frac_ratio)
    if isinstance(ratio, int) and ratio < 0:
        raise ValueError(f"bilinear_upsampling: ratio must be a positive int, got {ratio}")
    x = _checked_input(input, batch_size, num_input_channels)
    for axis in (2, 3):
        x = _upsample_axis(x, axis, ratio, 1)
    return x
