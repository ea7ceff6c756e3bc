"""Convolution as im2col plus one GEMM per group, for 2 or 3 spatial dimensions.

The three directions of a convolution layer share one layout. The padded
input ``x`` (batch B, channels C, spatial S) is viewed through strides as
the window matrix ``cols[(c, k), (b, o)] = x[b, c, o * stride + k * dilation]``
(rows: a channel and a kernel offset; columns: an image and an output
position), copied once to be contiguous. Then, per group g:

- forward:       ``out_g (F_g, B*O) = W_g (F_g, C_g*K) @ cols_g``
- grad weights:  ``dW_g.T (C_g*K, F_g) = cols_g @ top_g.T`` (top_g: (F_g, B*O))
- grad inputs:   ``dcols_g (C_g*K, B*O) = W_g.T @ top_g``, then col2im: each of
  the K kernel offsets adds one strided slab of ``dcols`` into the padded input
  (kept channel-major, (C, B, *S), until a last transpose).

Unshared (locally connected) filters, (F, *O, C_g, *K), hold one kernel per
output position: the same window matrix, viewed as (O, C_g*K, B) per group,
meets them in one batched matmul over the O positions instead of one GEMM.

The GEMMs work in the (F, B*O) layout; results are copied back to C-contiguous
(B, F, *O) arrays (one pass over the output, small beside the window matrix),
so the ops downstream (pooling, elementwise) read memory in order. Everything is a cross-correlation; ``flip`` (Theano's ``filter_flip``, the
default) flips the kernel's spatial axes. numpy.dot calls numpy's own
OpenBLAS, whose thread pool is the one the rest of the library uses.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

Pad = Sequence[tuple[int, int]]
_local = threading.local()


def scratch(name: str, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """This thread's buffer ``name`` as an array of ``shape``; its values are stale.

    It is overwritten by the next call asking for ``name`` on this thread, so it
    must never be returned to a caller or outlive the computation that took it.
    """
    store = _local.__dict__.setdefault("buffers", {})
    size, key = math.prod(shape), (name, np.dtype(dtype).str)
    buffer = store.get(key)
    if buffer is None or buffer.size < size:
        buffer = store[key] = np.empty(size, dtype)
    return buffer[:size].reshape(shape)


def result(out: np.ndarray | None, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """``out`` when it is a C-contiguous array of ``shape`` and ``dtype``, else a new one."""
    if (isinstance(out, np.ndarray) and out.shape == tuple(shape) and out.dtype == dtype
            and out.flags.c_contiguous and out.flags.writeable):
        return out
    return np.empty(shape, dtype)


def _padded(x: np.ndarray, pad: Pad) -> np.ndarray:
    """``x`` with zeros added before/after each spatial axis (``x`` itself when none)."""
    if all(lo == 0 and hi == 0 for lo, hi in pad):
        return x
    out = scratch("padded", x.shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pad)),
                  x.dtype)
    out.fill(0)
    out[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape[2:], pad))] = x
    return out


def _cols(x: np.ndarray, pad: Pad, out_spatial: Sequence[int], kshp: Sequence[int],
          stride: Sequence[int], dilation: Sequence[int]) -> np.ndarray:
    """The window matrix of ``x`` padded by ``pad``: (C * K, B * O), contiguous."""
    xp = _padded(x, pad)
    sb, sc, *ss = xp.strides
    shape = (xp.shape[1], *kshp, xp.shape[0], *out_spatial)
    view = as_strided(xp, shape, (sc, *(s * d for s, d in zip(ss, dilation)), sb,
                                  *(s * t for s, t in zip(ss, stride))), writeable=False)
    cols = scratch("cols", shape, x.dtype)
    np.copyto(cols, view)
    return cols.reshape(xp.shape[1] * math.prod(kshp), xp.shape[0] * math.prod(out_spatial))


def _as_fbo(a: np.ndarray) -> np.ndarray:
    """(B, F, *O) as a contiguous (F, B*O) matrix: free when ``a`` already has that layout."""
    moved = np.moveaxis(a, 1, 0)
    if not moved.flags.c_contiguous:
        copy = scratch("fbo", moved.shape, a.dtype)
        np.copyto(copy, moved)
        moved = copy
    return moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))


def _flip(kern: np.ndarray, nd: int) -> np.ndarray:
    return kern[(Ellipsis,) + (slice(None, None, -1),) * nd]


def _by_position(cols: np.ndarray, groups: int, batch: int, positions: int) -> np.ndarray:
    """The window matrix (C*K, B*O) as (groups, O, C_g*K, B): a view."""
    return cols.reshape(groups, cols.shape[0] // groups, batch, positions).transpose(0, 3, 1, 2)


def _unshared_weights(kern: np.ndarray, groups: int, nd: int) -> np.ndarray:
    """Unshared filters (F, *O, C_g, *K) as (groups, O, F_g, C_g*K): a view where it can."""
    n_filters, positions = kern.shape[0], math.prod(kern.shape[1:1 + nd])
    return kern.reshape(groups, n_filters // groups, positions,
                        math.prod(kern.shape[1 + nd:])).transpose(0, 2, 1, 3)


def forward(img: np.ndarray, kern: np.ndarray, pad: Pad, stride: Sequence[int],
            dilation: Sequence[int], groups: int, flip: bool, out_spatial: Sequence[int],
            out: np.ndarray | None = None, unshared: bool = False) -> np.ndarray:
    """(B, F, *O) convolution of ``img`` (B, C, *S) with ``kern`` (F, C/groups, *K),
    or with unshared ``kern`` (F, *O, C/groups, *K)."""
    nd = len(stride)
    if flip:
        kern = _flip(kern, nd)
    n_filters, batch = kern.shape[0], img.shape[0]
    dtype = np.result_type(img, kern)
    cols = _cols(img, pad, out_spatial, kern.shape[-nd:], stride, dilation)
    if unshared:
        # (groups, O, F_g, B) -> (B, groups, F_g, O) = (B, F, *O)
        windows = _by_position(cols, groups, batch, math.prod(out_spatial))
        prod = np.matmul(_unshared_weights(kern, groups, nd), windows)
        final = result(out, (batch, n_filters, *out_spatial), dtype)
        np.copyto(final.reshape(batch, groups, n_filters // groups, math.prod(out_spatial)),
                  prod.transpose(3, 0, 2, 1))
        return final
    weights = kern.reshape(n_filters, math.prod(kern.shape[1:]))
    mat = scratch("gemm", (n_filters, cols.shape[1]), dtype)
    rows, per = weights.shape[1], n_filters // groups
    for g in range(groups):
        np.dot(weights[g * per:(g + 1) * per], cols[g * rows:(g + 1) * rows],
               out=mat[g * per:(g + 1) * per])
    final = result(out, (batch, n_filters, *out_spatial), dtype)
    np.copyto(final, np.moveaxis(mat.reshape((n_filters, batch, *out_spatial)), 0, 1))
    return final


def grad_weights(img: np.ndarray, top: np.ndarray, kshp: Sequence[int], pad: Pad,
                 stride: Sequence[int], dilation: Sequence[int], groups: int,
                 flip: bool, out: np.ndarray | None = None, unshared: bool = False) -> np.ndarray:
    """(F, C/groups, *K) gradient of the filters, given the input and the output gradient
    ((F, *O, C/groups, *K) when ``unshared``).

    Each group's product is taken as ``cols_g @ top_g.T`` (C_g*K, F_g): with a
    small output and a long inner dimension, OpenBLAS threads ``top_g @ cols_g.T``
    badly (20x slower on two threads than on one, on LeNet's shapes).
    """
    nd = len(stride)
    cols = _cols(img, pad, top.shape[2:], kshp, stride, dilation)
    if unshared:
        return _unshared_grad_weights(cols, top, kshp, groups, flip, out)
    grad = _as_fbo(top)
    n_filters = grad.shape[0]
    rows, per = cols.shape[0] // groups, n_filters // groups
    dtype = np.result_type(img, top)
    transposed = scratch("gemm", (groups, rows, per), dtype)
    for g in range(groups):
        np.dot(cols[g * rows:(g + 1) * rows], grad[g * per:(g + 1) * per].T, out=transposed[g])
    final = result(out, (n_filters, rows // math.prod(kshp), *kshp), dtype)
    source = np.moveaxis(transposed.reshape((groups, rows // math.prod(kshp), *kshp, per)), -1, 1)
    np.copyto(final.reshape(groups, per, *source.shape[2:]), _flip(source, nd) if flip else source)
    return final


def _unshared_grad_weights(cols: np.ndarray, top: np.ndarray, kshp: Sequence[int], groups: int,
                           flip: bool, out: np.ndarray | None) -> np.ndarray:
    batch, n_filters, *out_spatial = top.shape
    nd = len(kshp)
    # top (B, F, O) as (groups, O, F_g, B); windows (groups, O, B, C_g*K)
    top_pos = top.reshape(batch, groups, n_filters // groups, math.prod(out_spatial)).transpose(1, 3, 2, 0)
    windows = _by_position(cols, groups, batch, math.prod(out_spatial))
    prod = np.matmul(top_pos, windows.transpose(0, 1, 3, 2))
    channels = cols.shape[0] // (groups * math.prod(kshp))
    final = result(out, (n_filters, *out_spatial, channels, *kshp), prod.dtype)
    source = prod.transpose(0, 2, 1, 3).reshape(final.shape)
    np.copyto(final, _flip(source, nd) if flip else source)
    return final


def grad_inputs(kern: np.ndarray, top: np.ndarray, in_spatial: Sequence[int], pad: Pad,
                stride: Sequence[int], dilation: Sequence[int], groups: int,
                flip: bool, out: np.ndarray | None = None, unshared: bool = False) -> np.ndarray:
    """(B, C, *S) gradient of the input, given the filters (unshared or not) and the
    output gradient."""
    nd = len(stride)
    if flip:
        kern = _flip(kern, nd)
    kshp, out_spatial = kern.shape[-nd:], top.shape[2:]
    n_filters, per_group = kern.shape[0], kern.shape[-nd - 1]
    dtype = np.result_type(kern, top)
    batch = top.shape[0]
    rows, per = per_group * math.prod(kshp), n_filters // groups
    dcols = scratch("gemm", (rows * groups, batch * math.prod(out_spatial)), dtype)
    if unshared:
        # (groups, O, C_g*K, F_g) @ (groups, O, F_g, B) -> (groups, O, C_g*K, B)
        top_pos = top.reshape(batch, groups, per, math.prod(out_spatial)).transpose(1, 3, 2, 0)
        prod = np.matmul(_unshared_weights(kern, groups, nd).transpose(0, 1, 3, 2), top_pos)
        np.copyto(_by_position(dcols, groups, batch, math.prod(out_spatial)), prod)
    else:
        grad = _as_fbo(top)
        weights = kern.reshape(n_filters, math.prod(kern.shape[1:]))
        for g in range(groups):
            np.dot(weights[g * per:(g + 1) * per].T, grad[g * per:(g + 1) * per],
                   out=dcols[g * rows:(g + 1) * rows])
    dcols = dcols.reshape((per_group * groups, math.prod(kshp), batch, *out_spatial))
    full = tuple(n + lo + hi for n, (lo, hi) in zip(in_spatial, pad))
    # Accumulated channel-major, so each slab added is read in order; one transpose at the end.
    acc = scratch("col2im", (per_group * groups, batch, *full), dtype)
    acc.fill(0)
    for k, offset in enumerate(np.ndindex(*kshp)):
        slab = tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                     for o, d, n, s in zip(offset, dilation, out_spatial, stride))
        acc[(slice(None), slice(None)) + slab] += dcols[:, k]
    crop = tuple(slice(lo, lo + n) for n, (lo, _) in zip(in_spatial, pad))
    final = result(out, (batch, per_group * groups, *in_spatial), dtype)
    np.copyto(final, np.moveaxis(acc[(slice(None), slice(None)) + crop], 0, 1))
    return final
