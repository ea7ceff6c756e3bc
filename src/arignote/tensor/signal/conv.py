"""``tensor.signal.conv.conv2d``: the legacy convolution of single images and filters.

Theano's signal-processing form of the legacy ``ConvOp``: the input is one
image (rows, cols) or a stack of them (images, rows, cols), the filters one
filter or a stack (filters, rows, cols), all single-channel. They become the
4d (batch, 1, rows, cols) layout of ``ConvOp`` and the result loses the axes
the inputs did not have: (rows, cols), (images, rows, cols), (filters, rows,
cols) or (images, filters, rows, cols).
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from arignote.graph.basic import Variable
from arignote.tensor.nnet import conv_legacy
from arignote.tensor.shape import reshape
from arignote.tensor.variable import as_tensor_variable

__all__ = ["conv2d"]


def _as_4d(x: Variable, given: Sequence | None, what: str) -> tuple[Variable, tuple | None]:
    """``x`` (2d or 3d) as (n, 1, rows, cols), with the given shape in that layout."""
    if x.ndim not in (2, 3):
        raise TypeError(f"signal.conv2d: the {what} {x.describe()} must be 2d (rows, cols) or 3d "
                        f"(count, rows, cols), got {x.ndim} dimensions")
    count = x.shape[0] if x.ndim == 3 else 1
    x4 = reshape(x, (count, 1, x.shape[-2], x.shape[-1]), ndim=4)
    if given is None:
        return x4, None
    given = tuple(given)
    if len(given) not in (2, 3):
        raise ValueError(f"signal.conv2d: {what}_shape must have 2 or 3 entries, got {given!r}")
    lead = given[0] if x.ndim == 3 and len(given) == 3 else 1
    return x4, (lead, 1) + given[-2:]


def conv2d(input: Any, filters: Any, image_shape: Sequence | None = None,
           filter_shape: Sequence | None = None, border_mode: str = "valid",
           subsample: Sequence[int] = (1, 1), **kwargs: Any) -> Variable:
    """Convolve ``input`` ([images,] rows, cols) with ``filters`` ([filters,] rows, cols),
    flipping the filters; ``border_mode`` ``'valid'`` or ``'full'`` (as
    ``scipy.signal.convolve2d``), ``subsample`` the strides, ``image_shape`` /
    ``filter_shape`` the constant shapes when known. Returns ([images,] [filters,]
    out rows, out cols).
    """
    input, filters = as_tensor_variable(input), as_tensor_variable(filters)
    input4, image_shape4 = _as_4d(input, image_shape, "image")
    filters4, filter_shape4 = _as_4d(filters, filter_shape, "filter")
    out = conv_legacy.build(input4, filters4, image_shape4, filter_shape4, border_mode, subsample,
                            **kwargs)
    index = (0 if input.ndim == 2 else slice(None), 0 if filters.ndim == 2 else slice(None))
    return out if index == (slice(None), slice(None)) else out[index]
