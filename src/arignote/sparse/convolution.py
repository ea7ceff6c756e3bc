"""Theano's ``sparse.sandbox.sp``: convolution and max pooling as products with a sparse
0/1 matrix that gathers image patches.

Images are rows of a matrix (one flattened image of ``(features, height,
width)`` per row, in raster order). ``ConvolutionIndices.evaluate`` builds the
csc patch matrix ``P`` of ``(outputs * features * taps, pixels)``: its row
``(o * features + f) * taps + t`` picks the input pixel under tap ``t`` (raster
order over the kernel) of feature ``f`` for output position ``o``, and has no
entry where the tap falls outside the image (zero padding). ``images . P.T``
is then the stack of patches, and a convolution is its product with the
kernels, a max pooling its maximum over each patch.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from arignote.graph.basic import Variable
from arignote.sparse.convert import CSM
from arignote.sparse.products import structured_dot
from arignote.tensor.blas import dot
from arignote.tensor.join import stack
from arignote.tensor.reduction import max as _max
from arignote.tensor.shape import flatten as _flatten
from arignote.tensor.shape import reshape
from arignote.tensor.variable import as_tensor_variable

__all__ = ["ConvolutionIndices", "convolution_indices", "convolve", "max_pool"]


class ConvolutionIndices:
    """The structure of the patch matrix (Theano's class of the name, used through its
    static methods: it was never applied as an op)."""

    @staticmethod
    def conv_eval(inshp: Any, kshp: Any, strides: Any = (1, 1), mode: str = "valid") -> tuple:
        return ConvolutionIndices.evaluate(inshp, kshp, strides, mode=mode)

    @staticmethod
    def evaluate(inshp: Any, kshp: Any, strides: Any = (1, 1), nkern: int = 1, mode: str = "valid",
                 ws: bool = True) -> tuple:
        """``(indices, indptr, matrix shape, 'csc', output shape)`` of the patch matrix of
        images ``inshp`` (``(height, width)`` or ``(features, height, width)``) under
        kernels ``kshp`` moved by ``strides`` = ``(dx, dy)``; ``mode`` 'valid' keeps the
        positions where the kernel lies inside the image, 'full' every overlap."""
        if not ws:
            raise ValueError("ConvolutionIndices: ws=False (no weight sharing) was removed from Theano; "
                             "leave ws=True")
        if mode not in ("valid", "full"):
            raise ValueError(f"ConvolutionIndices: mode must be 'valid' or 'full', got {mode!r}")
        features, height, width = (1, *inshp) if len(inshp) == 2 else tuple(inshp)
        kh, kw = (int(k) for k in kshp)
        dx, dy = (int(s) for s in strides)
        sign = -1 if mode == "valid" else 1
        outshp = np.array([-(-(height + sign * (kh - 1)) // dy), -(-(width + sign * (kw - 1)) // dx)],
                          dtype="int64")
        if (outshp <= 0).any():
            raise ValueError(f"ConvolutionIndices: kernel {tuple(kshp)} with step {tuple(strides)} leaves "
                             f"no output for images of {(features, height, width)} in {mode!r} mode")
        taps = kh * kw
        oy, ox, f, ty, tx = np.meshgrid(np.arange(outshp[0]), np.arange(outshp[1]), np.arange(features),
                                        np.arange(kh), np.arange(kw), indexing="ij")
        shift = (kh - 1, kw - 1) if mode == "full" else (0, 0)
        iy, ix = oy * dy - shift[0] + ty, ox * dx - shift[1] + tx
        inside = (iy >= 0) & (iy < height) & (ix >= 0) & (ix < width)
        rows = ((oy * outshp[1] + ox) * features + f) * taps + ty * kw + tx
        cols = (f * height + iy) * width + ix
        shape = (int(np.prod(outshp)) * taps * features, features * height * width)
        patches = scipy.sparse.csc_matrix((np.ones(int(inside.sum())), (rows[inside], cols[inside])),
                                          shape=shape)
        patches.sort_indices()
        return (patches.indices.astype("int32"), patches.indptr.astype("int32"), shape, "csc", outshp)


convolution_indices = ConvolutionIndices()


def _patches(images: Variable, inshp: tuple, kshp: Any, step: Any, mode: str) -> tuple[Variable, np.ndarray]:
    indices, indptr, shape, fmt, outshp = convolution_indices.conv_eval(inshp, kshp, step, mode)
    matrix = CSM(fmt)(np.ones(indices.size), indices, indptr, np.asarray(shape, dtype="int32"))
    return structured_dot(matrix, images.T).T, outshp


def convolve(kerns: Any, kshp: Any, nkern: int, images: Any, imgshp: Any, step: Any = (1, 1),
             bias: Any = None, mode: str = "valid", flatten: bool = True) -> tuple[Variable, np.ndarray]:
    """``(feature maps, (nkern, height, width))``: ``nkern`` kernels (rows of ``kerns``, each
    ``features * prod(kshp)`` taps in raster order) over the images (rows of ``images``, of
    shape ``imgshp``), plus ``bias`` per kernel. The maps of one image are one row (each map
    contiguous, in raster order), or ``(batch, nkern, outputs)`` with ``flatten=False``."""
    images, kerns = as_tensor_variable(images), as_tensor_variable(kerns)
    for what, var in (("images", images), ("kerns", kerns)):
        if var.ndim != 2:
            raise TypeError(f"convolve: {what} {var.describe()} must be a matrix (one flattened image "
                            f"or kernel per row), got {var.ndim} dimensions")
    inshp = (1, *imgshp) if len(imgshp) == 2 else tuple(imgshp)
    patches, outshp = _patches(images, inshp, kshp, step, mode)
    outputs = int(np.prod(outshp))
    stacked = reshape(patches, stack([images.shape[0] * outputs, inshp[0] * int(np.prod(kshp))]), ndim=2)
    out = dot(stacked, kerns.T)
    if bias is not None:
        out = out + bias
    maps = reshape(out, stack([images.shape[0], outputs, nkern]), ndim=3).dimshuffle(0, 2, 1)
    return (_flatten(maps, 2) if flatten else maps), np.hstack((nkern, outshp))


def max_pool(images: Any, imgshp: Any, maxpoolshp: Any) -> tuple[Variable, np.ndarray]:
    """``(pooled, (height, width))``: the maximum over each ``maxpoolshp`` block (non-overlapping,
    the incomplete blocks at the borders dropped) of each feature of each image (a row of
    ``images``); the pooled features of one image are one row, each contiguous."""
    images = as_tensor_variable(images)
    if images.ndim != 2:
        raise TypeError(f"max_pool: images {images.describe()} must be a matrix (one flattened image per "
                        f"row), got {images.ndim} dimensions")
    inshp = (1, *imgshp) if len(imgshp) == 2 else tuple(imgshp)
    # blocks side by side: step (dx, dy) is (block width, block height)
    patches, outshp = _patches(images, inshp, maxpoolshp, (maxpoolshp[1], maxpoolshp[0]), "valid")
    outputs = int(np.prod(outshp))
    stacked = reshape(patches, stack([images.shape[0] * outputs, inshp[0], int(np.prod(maxpoolshp))]),
                             ndim=3)
    pooled = reshape(_max(stacked, axis=2), stack([images.shape[0], outputs, inshp[0]]), ndim=3)
    return _flatten(pooled.dimshuffle(0, 2, 1), 2), outshp
