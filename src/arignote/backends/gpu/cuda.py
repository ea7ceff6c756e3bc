"""The CUDA runtime (CuPy): buffers, transfers, NVRTC compiling, launching, cuBLAS.

With ``opencl.py`` this is one of the two files that import a driver library.

Threads: CuPy passes a kernel's arguments with each launch and keeps the
current device per thread, so launches and transfers need no lock here; NVRTC
builds hold a build lock (one build per source).
"""
from __future__ import annotations

import hashlib
import threading
from typing import Any

import cupy
import numpy as np

from arignote.backends.kernels.render import CUDA

try:  # cuDNN, when this CuPy was built with it and the library loads
    from cupyx import cudnn as _cudnn
except (ImportError, OSError, RuntimeError):
    _cudnn = None


def devices() -> list[dict[str, Any]]:
    """Every CUDA device, for ``arignote info``."""
    result = []
    for index in range(cupy.cuda.runtime.getDeviceCount()):
        props = cupy.cuda.runtime.getDeviceProperties(index)
        result.append({"name": props["name"].decode(), "memory": props["totalGlobalMem"],
                       "compute_capability": f"{props['major']}.{props['minor']}"})
    return result


def version() -> str:
    return f"CuPy {cupy.__version__}, CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}"


class Device:
    dialect = CUDA
    fp64 = True
    on_cpu = False

    def __init__(self, index: int):
        if index >= cupy.cuda.runtime.getDeviceCount():
            raise RuntimeError(f"there is no CUDA device {index}")
        self.device = cupy.cuda.Device(index)
        self.name = f"cuda{index}"
        props = cupy.cuda.runtime.getDeviceProperties(index)
        self.description = f"{props['name'].decode()} (compute capability {props['major']}.{props['minor']})"
        self._identity = f"{self.description}|{version()}"
        self._kernels: dict[str, Any] = {}
        self._build_lock = threading.Lock()

    def alloc(self, nbytes: int) -> cupy.ndarray:
        with self.device:
            return cupy.empty(max(nbytes, 1), dtype=np.uint8)

    def upload(self, buffer: cupy.ndarray, host: np.ndarray) -> None:
        with self.device:
            buffer.data.copy_from_host(host.ctypes.data, host.nbytes)

    def download(self, host: np.ndarray, buffer: cupy.ndarray, byte_offset: int) -> None:
        with self.device:
            (buffer.data + byte_offset).copy_to_host(host.ctypes.data, host.nbytes)

    def build(self, source: str, name: str, fp64: bool) -> Any:
        key = hashlib.sha256("\0".join([source, name, self._identity]).encode()).hexdigest()
        kernel = self._kernels.get(key)
        if kernel is None:
            with self._build_lock, self.device:
                kernel = self._kernels.get(key)
                if kernel is None:
                    kernel = self._kernels[key] = cupy.RawModule(code=source).get_function(name)
        return kernel

    def launch(self, kernel: Any, global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
               args: list) -> None:
        local = local_size or (256,) + (1,) * (len(global_size) - 1)
        grid = tuple(-(-g // b) for g, b in zip(global_size, local))
        with self.device:
            kernel(grid, local, tuple(args))

    def synchronize(self) -> None:
        with self.device:
            cupy.cuda.get_current_stream().synchronize()

    def gemm(self, out: Any, a: Any, b: Any) -> None:
        """``out = a @ b`` with cuBLAS, on 2-d GpuArrays (any strides)."""
        with self.device:
            cupy.matmul(_wrap(a), _wrap(b), out=_wrap(out))

    def _cudnn_conv(self, kind: str, out: Any, a: Any, b: Any, pads: tuple, stride: tuple,
                    dilation: tuple, groups: int) -> None:
        """cuDNN's cross-correlation into ``out``: ``'forward'`` (a: input, b: filters),
        ``'weights'`` (a: input, b: output gradient) or ``'inputs'`` (a: filters, b:
        output gradient); ``pads`` are (before, after) pairs, equal on both sides."""
        pad = tuple(int(lo) for lo, _ in pads)
        args = (pad, tuple(stride), tuple(dilation), int(groups))
        with self.device:
            if kind == "forward":
                _cudnn.convolution_forward(_wrap(a), _wrap(b), None, _wrap(out), *args,
                                           auto_tune=False, tensor_core="never")
            elif kind == "weights":
                _cudnn.convolution_backward_filter(_wrap(a), _wrap(b), _wrap(out), *args, deterministic=False,
                                                   auto_tune=False, tensor_core="never")
            else:
                _cudnn.convolution_backward_data(_wrap(a), _wrap(b), None, _wrap(out), *args,
                                                 deterministic=False, auto_tune=False, tensor_core="never")

    conv = _cudnn_conv if _cudnn is not None else None


def _wrap(array: Any) -> cupy.ndarray:
    size = array.dtype.itemsize
    return cupy.ndarray(array.shape, array.dtype, array.buffer.data + array.offset * size,
                        strides=tuple(s * size for s in array.strides))
