"""GpuArray: an n-dimensional array in a device buffer, the same on every runtime.

A GpuArray is a view: a buffer, an element offset, a shape and element
strides. Views (transposes, slices, broadcast dimensions) share the buffer;
``copy()`` and the transfer to the host make contiguous copies with a kernel
when the view is strided. The runtime (``opencl.py``, ``cuda.py``) only moves
bytes and launches kernels.

``bounds`` is what the host knows of the values without reading them back:
``(lo, hi, exact)`` with every value in ``[lo, hi]`` (``exact``: both occur),
or None. It comes from host arrays as they are uploaded (``to_gpu(...,
bounds=True)``), from ``arange`` and integer casts of arrays that have it,
and loosely (not exact) through views; every other write into a buffer
leaves None (``GpuOp.output`` clears it on a reused buffer, and a DLPack
export, through which the host may write, clears it). The index ops use it to
skip their device-side bounds check (docs/architecture.md, "GPU transfers").
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

import numpy as np

if TYPE_CHECKING:
    from arignote.backends.gpu.context import GpuContext


def c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class GpuArray:
    """An array on a GPU context. ``get()`` (or ``numpy.asarray``) copies it to the host."""

    __slots__ = ("context", "shape", "dtype", "strides", "offset", "buffer", "_contiguous", "bounds",
                 "__weakref__")

    def __init__(self, context: GpuContext, shape: Sequence[int], dtype: Any, buffer: Any = None,
                 offset: int = 0, strides: Sequence[int] | None = None):
        self.context = context
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.strides = c_strides(self.shape) if strides is None else tuple(int(s) for s in strides)
        self.offset = int(offset)
        self._contiguous = None if strides is not None else True
        self.buffer = context.device.alloc(self.size * self.dtype.itemsize) if buffer is None else buffer
        self.bounds: tuple | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def is_c_contiguous(self) -> bool:
        found = self._contiguous
        if found is None:
            found = self._contiguous = all(s == c or n == 1 for s, c, n in zip(
                self.strides, c_strides(self.shape), self.shape))
        return found

    def view(self, shape: Sequence[int], strides: Sequence[int], offset: int) -> GpuArray:
        """A window on the same buffer; its values lie within this array's ``bounds``."""
        out = GpuArray(self.context, shape, self.dtype, self.buffer, offset, strides)
        if self.bounds is not None:
            out.bounds = (self.bounds[0], self.bounds[1], False)
        return out

    def copy(self) -> GpuArray:
        """A new contiguous array with the same values, made on the device."""
        out = GpuArray(self.context, self.shape, self.dtype)
        self.context.copy_into(out, self)
        return out

    def get(self, out: np.ndarray | None = None) -> np.ndarray:
        """The values, copied to a new (or the given contiguous) host array."""
        source = self if self.is_c_contiguous else self.copy()
        host = np.empty(self.shape, self.dtype) if out is None else out
        if self.size:
            self.context.device.download(host, source.buffer, source.offset * self.dtype.itemsize)
        return host

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        host = self.get()
        return host if dtype is None else host.astype(dtype)

    def __repr__(self) -> str:
        return f"GpuArray({self.get()!r}, context={self.context.name!r})"

    def __reduce__(self) -> tuple:
        """Pickled as host data and the context's name, never a device handle."""
        from arignote.backends.gpu.context import load_array
        return load_array, (self.get(), self.context.name)

    # DLPack and CUDA's array interface: arrays of other libraries in and out, no copy.
    def __dlpack__(self, **kwargs: Any) -> Any:
        """A DLPack capsule of this array's memory (the device's pending work finished
        first): CUDA memory on a CUDA device; host memory on an OpenCL device that is the
        CPU (PoCL), whose buffers the host can map; BufferError on an OpenCL GPU."""
        self.bounds = None  # the other side may write into it
        return self.context.device.export(self).__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.context.device.dlpack_device

    @property
    def __cuda_array_interface__(self) -> dict:
        """Version 3 of the interface, with this device's stream (CUDA devices only)."""
        interface = getattr(self.context.device, "cuda_array_interface", None)
        if interface is None:
            raise AttributeError(f"{self.context.device.name} is not a CUDA device: it has no "
                                 "__cuda_array_interface__")
        return interface(self)


def from_dlpack(context: GpuContext, value: Any) -> GpuArray:
    """``value`` (any object with ``__dlpack__``: a CuPy or torch array, a numpy array on a
    CPU OpenCL device) as a GpuArray on ``context`` sharing its memory, without a copy."""
    buffer, shape, dtype, strides = context.device.adopt(value)  # the buffer keeps the memory alive
    return GpuArray(context, shape, dtype, buffer, 0, strides)


def to_gpu(context: GpuContext, host: np.ndarray, bounds: bool = False) -> GpuArray:
    """``host`` uploaded; with ``bounds``, its minimum and maximum recorded (a pass over
    it on the host: asked for where values may index)."""
    host = host if host.flags.c_contiguous else host.copy(order="C")  # keeps 0-d as 0-d
    out = GpuArray(context, host.shape, host.dtype)
    if host.size:
        context.device.upload(out.buffer, host)
        if bounds:
            out.bounds = host_bounds(host)
    return out


def host_bounds(host: np.ndarray) -> tuple | None:
    """``(min, max, True)`` of a non-empty real array as Python numbers; None with a NaN."""
    if host.dtype.kind not in "iuf":
        return None
    lo, hi = host.min(), host.max()
    if host.dtype.kind == "f":
        if not (np.isfinite(lo) and np.isfinite(hi)):
            return None
        return float(lo), float(hi), True
    return int(lo), int(hi), True
