"""The numpy kernels of pooling, over the last N axes of any batch.

Two forms. When windows tile the input without overlap or padding (stride ==
window, the usual 2x2 max-pool), the input is viewed through strides as
blocks ``(..., o0, w0, ..., o_last * w_last)`` whose innermost axis is a whole
row: the window axes are folded away (forward), or the gradient is written in
one broadcast pass against the output repeated along the row. Otherwise one
pass per offset inside the window reads the strided slab of every window at
that offset (``prod(ws)`` passes, each over the whole batch).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import as_strided


class Geometry(NamedTuple):
    """Window, stride, pad and output length per pooled axis, and the input's lengths."""
    ws: tuple[int, ...]
    stride: tuple[int, ...]
    pad: tuple[int, ...]
    out: tuple[int, ...]
    shape: tuple[int, ...]

    @property
    def reach(self) -> tuple[int, ...]:
        """Length each axis needs for the padding and every window (a partial last one too)."""
        return tuple(max(n + 2 * p, (o - 1) * s + w)
                     for n, w, s, p, o in zip(self.shape, self.ws, self.stride, self.pad, self.out))

    @property
    def blocked(self) -> bool:
        return self.stride == self.ws and not any(self.pad) and all(
            o * w <= n for o, w, n in zip(self.out, self.ws, self.shape))


def lowest(dtype: np.dtype) -> object:
    if dtype.kind == "f":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _blocks(x: np.ndarray, g: Geometry) -> np.ndarray:
    """``x`` as (..., o0, w0, ..., o_last * w_last) blocks, a strided view (needs
    ``g.blocked``): every window axis but the last is split off, so the innermost
    loop of each pass runs over a whole contiguous row."""
    nd = len(g.ws)
    shape, strides = x.shape[:-nd], x.strides[:-nd]
    for n, w, s in zip(g.out[:-1], g.ws[:-1], x.strides[-nd:-1]):
        shape, strides = shape + (n, w), strides + (s * w, s)
    return as_strided(x, shape + (g.out[-1] * g.ws[-1],), strides + (x.strides[-1],))


def _expand(a: np.ndarray, g: Geometry) -> np.ndarray:
    """An output-shaped array broadcast against ``_blocks``: repeated along the last axis,
    a length-1 axis after each other output axis."""
    nd = len(g.ws)
    lead = a.ndim - nd
    repeated = np.repeat(a, g.ws[-1], axis=-1) if g.ws[-1] > 1 else a
    return repeated.reshape(a.shape[:lead] + tuple(n for o in a.shape[lead:-1] for n in (o, 1))
                            + (repeated.shape[-1],))


def _fold(blocks: np.ndarray, g: Geometry, ufunc: np.ufunc) -> np.ndarray:
    """Combine each window's elements of ``_blocks`` with ``ufunc``: the split window axes
    one at a time (each on rows read in order), then the interleaved last one."""
    nd = len(g.ws)
    lead = blocks.ndim - (2 * nd - 1)
    for i in range(nd - 1):  # the window axis of output axis i, after i were folded away
        axis = lead + i + 1
        parts = [blocks[(slice(None),) * axis + (k,)] for k in range(blocks.shape[axis])]
        blocks = _combine(parts, ufunc)
    width = g.ws[-1]
    return _combine([blocks[..., k::width] for k in range(width)], ufunc)


def _combine(parts: list[np.ndarray], ufunc: np.ufunc) -> np.ndarray:
    """``ufunc`` over ``parts`` into one new array (a copy when there is only one)."""
    if len(parts) == 1:
        return parts[0].copy()
    acc = ufunc(parts[0], parts[1])
    for part in parts[2:]:
        ufunc(acc, part, out=acc)
    return acc


def extended(x: np.ndarray, g: Geometry, fill: object) -> np.ndarray:
    """``x`` at offset ``pad`` in an array of ``g.reach`` (``x`` itself when that adds nothing)."""
    nd = len(g.ws)
    if not any(g.pad) and g.shape == g.reach:
        return x
    out = np.full(x.shape[:-nd] + g.reach, fill, x.dtype)
    out[(Ellipsis,) + tuple(slice(p, p + n) for p, n in zip(g.pad, g.shape))] = x
    return out


def _slabs(g: Geometry):
    """For each offset inside a window, the strided slice of every window at it."""
    for offset in np.ndindex(*g.ws):
        yield (Ellipsis,) + tuple(slice(k, k + (o - 1) * s + 1, s)
                                  for k, s, o in zip(offset, g.stride, g.out))


def _crop(x: np.ndarray, g: Geometry) -> np.ndarray:
    return np.ascontiguousarray(x[(Ellipsis,) + tuple(slice(p, p + n) for p, n in zip(g.pad, g.shape))])


def counts(g: Geometry, exclude_pad: bool) -> np.ndarray:
    """Elements each window averages over, broadcast against the output."""
    nd = len(g.out)
    total = np.ones((1,) * nd)
    for axis, (n, w, s, p, o) in enumerate(zip(g.shape, g.ws, g.stride, g.pad, g.out)):
        start = np.arange(o) * s
        end = np.minimum(start + w, n + 2 * p)
        count = np.minimum(end, n + p) - np.maximum(start, p) if exclude_pad else end - start
        total = total * count.reshape((1,) * axis + (o,) + (1,) * (nd - axis - 1))
    return total


def pool(x: np.ndarray, g: Geometry, mode: str) -> np.ndarray:
    combine = np.maximum if mode == "max" else np.add
    if g.blocked:
        acc = _fold(_blocks(x, g), g, combine)
    else:
        y = extended(x, g, lowest(x.dtype) if mode == "max" else 0)
        acc = None
        for slab in _slabs(g):
            if acc is None:
                acc = y[slab].copy()
            else:
                combine(acc, y[slab], out=acc)
    if mode.startswith("average"):
        acc = (acc / counts(g, mode == "average_exc_pad")).astype(x.dtype, copy=False)
    return acc


def max_grad(x: np.ndarray, maxout: np.ndarray, gz: np.ndarray, g: Geometry) -> np.ndarray:
    """``gz`` of each window added to every element equal to the window's maximum."""
    nd = len(g.ws)
    if not all(g.out):  # no window: nothing flows back
        return np.zeros(x.shape, x.dtype)
    if g.blocked:
        exact = all(o * w == n for o, w, n in zip(g.out, g.ws, g.shape))
        gx = (np.empty if exact else np.zeros)(x.shape, x.dtype)
        target = _blocks(gx, g)
        np.equal(_blocks(x, g), _expand(maxout, g), out=target)
        np.multiply(target, _expand(gz, g), out=target)
        return gx
    y = extended(x, g, lowest(x.dtype))
    gx = np.zeros(x.shape[:-nd] + g.reach, x.dtype)
    mask = np.empty(maxout.shape, x.dtype)
    for slab in _slabs(g):
        np.equal(y[slab], maxout, out=mask)
        mask *= gz
        gx[slab] += mask
    return _crop(gx, g)


def sum_grad(share: np.ndarray, x_shape: tuple, dtype: np.dtype, g: Geometry) -> np.ndarray:
    """Each window's ``share`` added to every element it covers."""
    nd = len(g.ws)
    if not all(g.out):  # no window: nothing flows back
        return np.zeros(x_shape, dtype)
    if g.blocked:
        gx = np.zeros(x_shape, dtype)
        _blocks(gx, g)[...] = _expand(share, g)
        return gx
    gx = np.zeros(x_shape[:-nd] + g.reach, dtype)
    for slab in _slabs(g):
        gx[slab] += share
    return _crop(gx, g)


def max_grad_grad(x: np.ndarray, maxout: np.ndarray, ggx: np.ndarray, g: Geometry) -> np.ndarray:
    """For each window, the sum of ``ggx`` over the elements equal to its maximum."""
    if g.blocked:
        picked = np.equal(_blocks(x, g), _expand(maxout, g)).astype(maxout.dtype)
        picked *= _blocks(ggx, g)
        return _fold(picked, g, np.add)
    y, gg = extended(x, g, lowest(x.dtype)), extended(ggx, g, 0)
    ggz = np.zeros(maxout.shape, maxout.dtype)
    mask = np.empty(maxout.shape, maxout.dtype)
    for slab in _slabs(g):
        np.equal(y[slab], maxout, out=mask)
        mask *= gg[slab]
        ggz += mask
    return ggz
