"""Theano's legacy 2d convolution (``theano.tensor.nnet.conv``): ``conv2d`` and ``ConvOp``.

Pre-0.9 programs build convolutions with ``conv.conv2d(input, filters,
image_shape, filter_shape, border_mode, subsample)`` or with ``ConvOp`` and its
split shape arguments (``imshp`` without the batch, ``kshp`` spatial only,
``nkern``, ``bsize``, ``dx``/``dy``). ``ConvOp`` is the abstract 2d convolution
with those parameters translated: it always flips the filters (a true
convolution), supports ``'valid'`` and ``'full'``, and gets its gradients,
lowering and kernels from ``AbstractConv2d``. The loop-unrolling and OpenMP
arguments were hints to Theano's generated C and change no result: they are
accepted and kept as attributes. Shapes given at build time must be constants
(NotScalarConstantError otherwise) and are checked against the values at run
time, as Theano did.
"""
from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Constant, Variable, user_stacklevel
from arignote.tensor.nnet.abstract_conv import AbstractConv2d, get_conv_output_shape
from arignote.tensor.shape import NotScalarConstantError, ShapeMismatchError, get_scalar_constant_value
from arignote.tensor.variable import as_tensor_variable

__all__ = ["conv2d", "ConvOp", "imported_scipy_signal"]

# Theano's flag for "a Python implementation is available" (it needed scipy.signal); here the
# convolution never needs it, so the legacy tests that skip without it run.
imported_scipy_signal = True

_MODES = ("valid", "full")


def constant_shape(shape: Any, length: int, what: str) -> tuple[int | None, ...] | None:
    """``shape`` (None, or ints / constant scalars / None entries, or a constant vector) as a
    tuple of Python ints and None, as the legacy interface accepts it."""
    if shape is None:
        return None
    if isinstance(shape, Constant):
        shape = list(np.asarray(shape.data).reshape(-1))
    shape = list(shape)
    if len(shape) != length:
        raise ValueError(f"{what} must have {length} entries, got {len(shape)}: {shape!r}")
    out: list[int | None] = []
    for entry in shape:
        if entry is None:
            out.append(None)
            continue
        try:
            value = get_scalar_constant_value(as_tensor_variable(entry))
        except NotScalarConstantError:
            raise NotScalarConstantError(f"the legacy convolution needs constant shapes: {what} "
                                         f"entry {entry!r} is not a constant; pass None for a "
                                         "length that varies") from None
        if value.dtype.kind not in "iu":
            raise TypeError(f"{what} entries must be integers, got {entry!r} of dtype {value.dtype}")
        out.append(int(value))
    return tuple(out)


class ConvOp(AbstractConv2d):
    """Theano's legacy convolution op: ``AbstractConv2d`` with filter flipping, built from the
    legacy arguments.

    ``imshp`` is (stack, rows, cols) or (rows, cols) for one channel, ``kshp``
    (filter rows, filter cols), ``nkern`` the number of filters, ``bsize`` the
    batch size (each may be None or hold None entries), ``dx``/``dy`` the row and
    column strides, ``output_mode`` ``'valid'`` or ``'full'``. ``imshp`` and
    ``kshp`` on the op are then the full 4d shapes of the abstract op.
    """

    def __init__(self, imshp: Sequence | None = None, kshp: Sequence | None = None,
                 nkern: int | None = None, bsize: int | None = None, dx: int = 1, dy: int = 1,
                 output_mode: str = "valid", unroll_batch: int | None = None,
                 unroll_kern: int | None = None, unroll_patch: bool | None = None,
                 imshp_logical: Sequence | None = None, kshp_logical: Sequence | None = None,
                 kshp_logical_top_aligned: bool = True, verbose: int = 0, version: int = -1,
                 direction_hint: str = "forward", openmp: bool | None = None):
        if output_mode not in _MODES:
            raise ValueError(f"ConvOp: output_mode must be one of {_MODES}, got {output_mode!r}")
        stack_shape = tuple(imshp) if imshp is not None else None
        if stack_shape is not None and len(stack_shape) == 2:
            stack_shape = (1,) + stack_shape
        if stack_shape is not None and len(stack_shape) != 3:
            raise ValueError(f"ConvOp: imshp must be (stack, rows, cols) or (rows, cols), got {imshp!r}")
        if kshp is not None and len(tuple(kshp)) != 2:
            raise ValueError(f"ConvOp: kshp must be (filter rows, filter cols), got {kshp!r}")
        for name, logical, physical in (("imshp_logical", imshp_logical, stack_shape),
                                        ("kshp_logical", kshp_logical, kshp)):
            if logical is not None and (physical is None or tuple(logical)[-2:] != tuple(physical)[-2:]):
                raise NotImplementedError(
                    f"ConvOp: {name} (a logical shape larger than the physical one, Theano's "
                    "implicit upsampling) is not supported: upsample explicitly (e.g. "
                    "tensor.nnet.abstract_conv.bilinear_upsampling) or use conv2d_transpose")
        full_imshp = None if stack_shape is None and bsize is None else \
            (bsize,) + (stack_shape or (None, None, None))
        stack = stack_shape[0] if stack_shape is not None else None
        full_kshp = None if kshp is None and nkern is None else \
            (nkern, stack) + (tuple(kshp) if kshp is not None else (None, None))
        super().__init__(full_imshp, full_kshp, output_mode, (dx, dy), filter_flip=True)
        self.nkern, self.bsize, self.dx, self.dy = nkern, bsize, dx, dy
        self.out_mode = output_mode
        # Hints to Theano's generated C; recorded for programs that read them, never used.
        self.unroll_batch, self.unroll_kern, self.unroll_patch = unroll_batch, unroll_kern, unroll_patch
        self.verbose, self.version, self.direction_hint, self.openmp = verbose, version, direction_hint, openmp

    @property
    def outshp(self) -> tuple[int, int] | None:
        """The output's (rows, cols) when the image and filter sizes are known, else None."""
        if None in self.imshp[2:] + self.kshp[2:]:
            return None
        return tuple(ConvOp.getOutputShape(self.imshp[2:], self.kshp[2:], self.subsample, self.out_mode))

    @staticmethod
    def getOutputShape(inshp: Sequence[int], kshp: Sequence[int], stride: Sequence[int] = (1, 1),
                       mode: str = "valid") -> tuple[int, ...]:
        """(rows, cols) of the output for an image of ``inshp`` and filters of ``kshp``."""
        if mode not in _MODES:
            raise ValueError(f"getOutputShape: mode must be one of {_MODES}, got {mode!r}")
        shape = get_conv_output_shape((1, 1) + tuple(inshp), (1, 1) + tuple(kshp), mode, tuple(stride),
                                      (1,) * len(inshp))
        return tuple(shape[2:])

    @staticmethod
    def has_all_shape(imshp: Sequence | None, kshp: Sequence | None, nkern: Any = 1,
                      bsize: Any = 1) -> bool:
        """Whether every shape entry is known (no None)."""
        return (nkern is not None and bsize is not None and imshp is not None and kshp is not None
                and None not in tuple(imshp) and None not in tuple(kshp))

    def __str__(self) -> str:
        return f"ConvOp{{{self.out_mode}, dx={self.dx}, dy={self.dy}}}"


def build(input: Any, filters: Any, image_shape: Any, filter_shape: Any, border_mode: str,
          subsample: Sequence[int], **kwargs: Any) -> Variable:
    """The ConvOp of the legacy ``conv2d`` arguments (4d shapes), applied."""
    image_shape = constant_shape(image_shape, 4, "image_shape")
    filter_shape = constant_shape(filter_shape, 4, "filter_shape")
    if image_shape and filter_shape and None not in (image_shape[1], filter_shape[1]) \
            and image_shape[1] != filter_shape[1]:
        raise ShapeMismatchError(f"conv2d: image_shape {image_shape} has {image_shape[1]} channels "
                                 f"but filter_shape {filter_shape} has {filter_shape[1]}: they "
                                 "must agree (entry 1 of both)")
    subsample = tuple(subsample)
    if len(subsample) != 2:
        raise ValueError(f"conv2d: subsample must have 2 entries (rows, cols), got {subsample!r}")
    nkern, kshp = (filter_shape[0], filter_shape[2:]) if filter_shape else (None, None)
    bsize, imshp = (image_shape[0], image_shape[1:]) if image_shape else (None, None)
    op = ConvOp(imshp=imshp, kshp=kshp, nkern=nkern, bsize=bsize, dx=subsample[0], dy=subsample[1],
                output_mode=border_mode, **kwargs)
    return op(input, filters)


def conv2d(input: Any, filters: Any, image_shape: Sequence | None = None,
           filter_shape: Sequence | None = None, border_mode: str = "valid",
           subsample: Sequence[int] = (1, 1), **kwargs: Any) -> Variable:
    """Deprecated legacy interface: ``input`` (batch, stack, rows, cols) convolved with
    ``filters`` (nkern, stack, rows, cols), flipped; ``border_mode`` ``'valid'``
    (``in - k + 1``) or ``'full'`` (``in + k - 1``); ``subsample`` the strides;
    ``image_shape``/``filter_shape`` constant 4d shapes (None entries where
    unknown). Other keywords go to ``ConvOp``. Returns (batch, nkern, out rows,
    out cols). New code calls ``tensor.nnet.conv2d``.
    """
    warnings.warn("theano.tensor.nnet.conv.conv2d is deprecated. Use theano.tensor.nnet.conv2d instead.",
                  stacklevel=user_stacklevel())
    return build(input, filters, image_shape, filter_shape, border_mode, subsample, **kwargs)
