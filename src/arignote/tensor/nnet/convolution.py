"""``tensor.nnet.conv2d``, ``conv2d_transpose`` and ``conv3d``: the entry points users call.

They build the abstract convolution ops of ``abstract_conv.py``; ``conv2d``
also keeps Theano's handling of old keywords (``image_shape`` is the
deprecated name of ``input_shape``; other unknown keywords warn and are
ignored; ``imshp_logical``/``kshp_logical`` are refused).
"""
from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Sequence

from arignote.graph.basic import Variable, user_stacklevel
from arignote.tensor.nnet import abstract_conv
from arignote.tensor.nnet.abstract_conv import conv3d

__all__ = ["conv2d", "conv2d_transpose", "conv3d"]


def conv2d(input: Any, filters: Any, input_shape: Sequence | None = None,
           filter_shape: Sequence | None = None, border_mode: Any = "valid",
           subsample: Sequence[int] = (1, 1), filter_flip: bool = True,
           image_shape: Sequence | None = None, filter_dilation: Sequence[int] = (1, 1),
           num_groups: int = 1, unshared: bool = False, **kwargs: Any) -> Variable:
    """Convolve a mini-batch of 2d feature-map stacks with a set of 2d filters.

    ``input`` is (batch, input channels, rows, columns); ``filters`` is
    (output channels, input channels / num_groups, filter rows, filter columns).
    ``input_shape``/``filter_shape`` are the shapes when known (None for an
    entry that varies) and are checked at run time. ``border_mode``: ``'valid'``
    (where the filter fits: ``in - k + 1``), ``'full'`` (wherever it overlaps:
    ``in + k - 1``), ``'half'`` (pad by ``k // 2``: same size for odd filters), an
    int or ``(int, int)`` of symmetric zero padding, or per axis a
    ``(before, after)`` pair. ``subsample`` is the stride; ``filter_dilation``
    spaces the filter taps; ``filter_flip=True`` flips the filters (a true
    convolution), False gives a cross-correlation. ``num_groups`` splits
    channels and filters into independent groups. ``unshared=True`` gives a
    locally connected layer: ``filters`` is then (output channels, output rows,
    output columns, input channels / num_groups, filter rows, filter columns),
    one kernel per output position. Returns (batch, output channels, output
    rows, output columns).
    """
    if "imshp_logical" in kwargs or "kshp_logical" in kwargs:
        raise ValueError("Keyword arguments 'imshp_logical' and 'kshp_logical' for conv2d are not "
                         "supported anymore (and have not been a reliable way to perform "
                         "upsampling): use conv2d_transpose or bilinear upsampling instead")
    if kwargs:
        warnings.warn(f"{sorted(kwargs)} are now deprecated in `tensor.nnet.abstract_conv.conv2d` "
                      "interface and will be ignored.", stacklevel=user_stacklevel())
    if image_shape is not None:
        warnings.warn("The `image_shape` keyword argument to `tensor.nnet.conv2d` is deprecated, "
                      "it has been renamed to `input_shape`.", stacklevel=user_stacklevel())
        if input_shape is not None:
            raise ValueError("input_shape and image_shape should not be provided at the same time.")
        input_shape = image_shape
    return abstract_conv.conv2d(input, filters, input_shape, filter_shape, border_mode, subsample,
                                filter_flip, filter_dilation, num_groups, unshared)


def conv2d_transpose(input: Any, filters: Any, output_shape: Sequence,
                     filter_shape: Sequence | None = None, border_mode: Any = "valid",
                     input_dilation: Sequence[int] = (1, 1), filter_flip: bool = True,
                     filter_dilation: Sequence[int] = (1, 1), num_groups: int = 1,
                     unshared: bool = False) -> Variable:
    """The transposed convolution ("deconvolution") of ``input`` by ``filters``.

    ``filters`` is (input channels, output channels, rows, columns): the order
    of the two channel axes is reversed with respect to ``conv2d``.
    ``output_shape`` (4 entries; the last two may be symbolic) is the result's
    shape; ``border_mode`` and ``input_dilation`` are the padding and
    ``subsample`` of the forward convolution this transposes (padding there
    crops here).
    """
    return abstract_conv.conv2d_grad_wrt_inputs(input, filters, output_shape, filter_shape,
                                                border_mode, input_dilation, filter_flip,
                                                filter_dilation, num_groups, unshared)
