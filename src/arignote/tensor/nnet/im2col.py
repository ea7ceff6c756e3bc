"""Convolution as im2col plus one GEMM per group, for 2 or 3 spatial dimensions.

The three directions of a convolution layer share one layout. The padded
input ``x`` (batch B, channels C, spatial S) is viewed through strides as
the window matrix ``cols[(c, k), (b, o)] = x[b, c, o * stride + k * dilation]``
(rows: a channel and a kernel offset; columns: an image and an output
position), copied once to be contiguous. Then, per group g:

- forward:       ``out_g (F_g, B*O) = W_g (F_g, C_g*K) @ cols_g``
- grad weights:  ``dW_g (F_g, C_g*K) = top_g (F_g, B*O) @ cols_g.T``
- grad inputs:   ``dcols_g (C_g*K, B*O) = W_g.T @ top_g``, then col2im: each of
  the K kernel offsets adds one strided slab of ``dcols`` into the padded input
  (kept channel-major, (C, B, *S), until a last transpose).

The GEMMs work in the (F, B*O) layout; results are copied back to C-contiguous
(B, F, *O) arrays (one pass over the output, small beside the window matrix),
so the ops downstream (pooling, elementwise) read memory in order. Everything is a cross-correlation; ``flip`` (Theano's ``filter_flip``, the
default) flips the kernel's spatial axes. numpy.dot calls numpy's own
OpenBLAS, whose thread pool is the one the rest of the library uses.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

Pad = Sequence[tuple[int, int]]


def padded(x: np.ndarray, pad: Pad) -> np.ndarray:
    """``x`` with zeros added before/after each spatial axis (``x`` itself when none)."""
    if all(lo == 0 and hi == 0 for lo, hi in pad):
        return x
    out = np.zeros(x.shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pad)), x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape[2:], pad))] = x
    return out


def _cols(xp: np.ndarray, out_spatial: Sequence[int], kshp: Sequence[int],
          stride: Sequence[int], dilation: Sequence[int]) -> np.ndarray:
    """The contiguous window matrix of the padded input, shaped (C, *K, B, *O)."""
    sb, sc, *ss = xp.strides
    view = as_strided(xp, (xp.shape[1], *kshp, xp.shape[0], *out_spatial),
                      (sc, *(s * d for s, d in zip(ss, dilation)), sb,
                       *(s * t for s, t in zip(ss, stride))), writeable=False)
    return np.ascontiguousarray(view)


def _as_fbo(a: np.ndarray) -> np.ndarray:
    """(B, F, *O) as a contiguous (F, B*O) matrix: free when ``a`` already has that layout."""
    moved = np.moveaxis(a, 1, 0)
    if not moved.flags.c_contiguous:
        moved = np.ascontiguousarray(moved)
    return moved.reshape(moved.shape[0], -1)


def _from_fbo(mat: np.ndarray, batch: int, spatial: Sequence[int]) -> np.ndarray:
    """A (F, B*O) matrix as the C-contiguous (B, F, *O) array it holds."""
    return np.ascontiguousarray(np.moveaxis(mat.reshape((mat.shape[0], batch, *spatial)), 0, 1))


def _flip(kern: np.ndarray, nd: int) -> np.ndarray:
    return kern[(Ellipsis,) + (slice(None, None, -1),) * nd]


def forward(img: np.ndarray, kern: np.ndarray, pad: Pad, stride: Sequence[int],
            dilation: Sequence[int], groups: int, flip: bool, out_spatial: Sequence[int]) -> np.ndarray:
    """(B, F, *O) convolution of ``img`` (B, C, *S) with ``kern`` (F, C/groups, *K)."""
    nd = len(stride)
    if flip:
        kern = _flip(kern, nd)
    n_filters, batch = kern.shape[0], img.shape[0]
    cols = _cols(padded(img, pad), out_spatial, kern.shape[2:], stride, dilation)
    cols = cols.reshape(cols.shape[0] * math.prod(kern.shape[2:]), -1)
    weights = kern.reshape(n_filters, -1)
    out = np.empty((n_filters, cols.shape[1]), np.result_type(img, kern))
    rows, per = weights.shape[1], n_filters // groups
    for g in range(groups):
        np.dot(weights[g * per:(g + 1) * per], cols[g * rows:(g + 1) * rows],
               out=out[g * per:(g + 1) * per])
    return _from_fbo(out, batch, out_spatial)


def grad_weights(img: np.ndarray, top: np.ndarray, kshp: Sequence[int], pad: Pad,
                 stride: Sequence[int], dilation: Sequence[int], groups: int,
                 flip: bool) -> np.ndarray:
    """(F, C/groups, *K) gradient of the filters, given the input and the output gradient."""
    nd = len(stride)
    cols = _cols(padded(img, pad), top.shape[2:], kshp, stride, dilation)
    cols = cols.reshape(cols.shape[0] * math.prod(kshp), -1)
    grad = _as_fbo(top)
    n_filters = grad.shape[0]
    rows, per = cols.shape[0] // groups, n_filters // groups
    out = np.empty((n_filters, rows), np.result_type(img, top))
    for g in range(groups):
        np.dot(grad[g * per:(g + 1) * per], cols[g * rows:(g + 1) * rows].T,
               out=out[g * per:(g + 1) * per])
    out = out.reshape((n_filters, rows // math.prod(kshp), *kshp))
    return _flip(out, nd) if flip else out


def grad_inputs(kern: np.ndarray, top: np.ndarray, in_spatial: Sequence[int], pad: Pad,
                stride: Sequence[int], dilation: Sequence[int], groups: int,
                flip: bool) -> np.ndarray:
    """(B, C, *S) gradient of the input, given the filters and the output gradient."""
    nd = len(stride)
    if flip:
        kern = _flip(kern, nd)
    kshp, out_spatial = kern.shape[2:], top.shape[2:]
    n_filters, per_group = kern.shape[0], kern.shape[1]
    grad = _as_fbo(top)
    weights = kern.reshape(n_filters, -1)
    rows, per = weights.shape[1], n_filters // groups
    dcols = np.empty((rows * groups, grad.shape[1]), np.result_type(kern, top))
    for g in range(groups):
        np.dot(weights[g * per:(g + 1) * per].T, grad[g * per:(g + 1) * per],
               out=dcols[g * rows:(g + 1) * rows])
    batch = top.shape[0]
    dcols = dcols.reshape((per_group * groups, math.prod(kshp), batch, *out_spatial))
    full = tuple(n + lo + hi for n, (lo, hi) in zip(in_spatial, pad))
    # Accumulated channel-major, so each slab added is read in order; one transpose at the end.
    result = np.zeros((per_group * groups, batch, *full), dcols.dtype)
    for k, offset in enumerate(np.ndindex(*kshp)):
        slab = tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                     for o, d, n, s in zip(offset, dilation, out_spatial, stride))
        result[(slice(None), slice(None)) + slab] += dcols[:, k]
    crop = tuple(slice(lo, lo + n) for n, (lo, _) in zip(in_spatial, pad))
    return np.ascontiguousarray(np.moveaxis(result[(slice(None), slice(None)) + crop], 0, 1))
