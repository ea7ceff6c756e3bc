"""The CUDA runtime (CuPy): buffers, transfers, NVRTC compiling, launching, cuBLAS, DLPack.

With ``opencl.py`` this is one of the two files that import a driver library.

One stream per device carries every copy, kernel and cuBLAS call, so they run
in the order they were issued (CuPy's default would put copies on the legacy
stream and kernels on the current one). Scalar arguments are converted to the
types the kernel's parameter list declares (CuPy would pass a Python float as
a double), once per launch from a table made at build time. Grids keep
``grid.y`` and ``grid.z`` within CUDA's 65,535; the kernels that use them (the
GEMM) loop over the rest.

Threads: CuPy passes a kernel's arguments with each launch and keeps the
current device per thread, so launches and transfers need no lock here; NVRTC
builds hold a build lock (one build per source).
"""
from __future__ import annotations

import threading
from typing import Any
from collections.abc import Sequence

import cupy
import numpy as np

from arignote.backends.kernels import program
from arignote.backends.kernels.render import CUDA, Kernel

GRID_YZ = 65535  # CUDA's limit on grid.y and grid.z
NVRTC_FIX = ('CuPy cannot load NVRTC, the CUDA runtime compiler that builds arignote\'s kernels: '
             'pip install "arignote[cuda]" (cupy-cuda12x[ctk] brings NVRTC), or install the CUDA '
             'toolkit matching your CuPy')

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


def nvrtc_version() -> str:
    """NVRTC's version, or RuntimeError with the fix when CuPy cannot load it."""
    try:
        major, minor = cupy.cuda.nvrtc.getVersion()
    except Exception as err:  # CuPy raises its own error types when the library is missing
        raise RuntimeError(f"{NVRTC_FIX} ({err})") from None
    return f"{major}.{minor}"


def grid(global_size: Sequence[int], local: Sequence[int]) -> tuple[int, ...]:
    """Blocks per dimension, ``grid.y`` and ``grid.z`` capped (kernels loop over the rest)."""
    blocks = [-(-g // b) for g, b in zip(global_size, local)]
    return tuple(n if k == 0 else min(n, GRID_YZ) for k, n in enumerate(blocks))


class _Compiled:
    """A kernel and the numpy type of each scalar argument (None: a buffer)."""

    __slots__ = ("function", "types")

    def __init__(self, function: Any, types: Sequence[str | None]):
        self.function = function
        self.types = tuple(None if t is None else np.dtype(t).type for t in types)


class Device:
    dialect = CUDA
    fp64 = True
    on_cpu = False
    chosen = None

    def __init__(self, index: int):
        if index >= cupy.cuda.runtime.getDeviceCount():
            raise RuntimeError(f"there is no CUDA device {index}")
        self.index = index
        self.device = cupy.cuda.Device(index)
        self.name = f"cuda{index}"
        props = cupy.cuda.runtime.getDeviceProperties(index)
        self.description = f"{props['name'].decode()} (compute capability {props['major']}.{props['minor']})"
        self.compute_units = props["multiProcessorCount"]
        self._identity = f"{self.description}|{version()}|NVRTC {nvrtc_version()}"
        with self.device:
            self.stream = cupy.cuda.Stream(non_blocking=True)
        self._kernels: dict[str, _Compiled] = {}
        self._build_lock = threading.Lock()

    def alloc(self, nbytes: int) -> cupy.ndarray:
        with self.device, self.stream:  # the pool reuses a freed block only on this stream
            return cupy.empty(max(nbytes, 1), dtype=np.uint8)

    def upload(self, buffer: cupy.ndarray, host: np.ndarray, byte_offset: int = 0) -> None:
        with self.device:  # from pageable memory: the host array may be reused on return
            (buffer.data + byte_offset).copy_from_host_async(host.ctypes.data, host.nbytes, self.stream)

    def download(self, host: np.ndarray, buffer: cupy.ndarray, byte_offset: int) -> None:
        with self.device:
            (buffer.data + byte_offset).copy_to_host_async(host.ctypes.data, host.nbytes, self.stream)
            self.stream.synchronize()

    def _key(self, k: Kernel) -> str:
        return program.entry_name(k) + "|" + self._identity

    def missing(self, kernels: Sequence[Kernel]) -> list[Kernel]:
        """Those of ``kernels`` not compiled yet in this process."""
        return [k for k in kernels if self._key(k) not in self._kernels]

    def build(self, kernels: Sequence[Kernel]) -> list[_Compiled]:
        """The compiled kernels; those not built yet compiled together as one NVRTC module
        (CuPy keeps compiled modules in its own disk cache, keyed by source, options,
        architecture and NVRTC version)."""
        keys = [self._key(k) for k in kernels]
        if any(key not in self._kernels for key in keys):
            with self._build_lock, self.device:
                todo = {key: k for key, k in zip(keys, kernels) if key not in self._kernels}
                if todo:
                    module = cupy.RawModule(code=program.join(CUDA, list(todo.values())),
                                            backend="nvrtc")
                    for key, k in todo.items():
                        self._kernels[key] = _Compiled(module.get_function(program.entry_name(k)),
                                                       program.arg_dtypes(CUDA, k))
        return [self._kernels[key] for key in keys]

    def launch(self, kernel: _Compiled, global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
               args: Sequence) -> None:
        local = local_size or (256,) + (1,) * (len(global_size) - 1)
        typed = tuple(a if t is None else t(a) for a, t in zip(args, kernel.types))
        with self.device:
            kernel.function(grid(global_size, local), local, typed, stream=self.stream)

    relaunch = None  # arguments travel with every CUDA launch: none are kept to launch again

    def synchronize(self) -> None:
        self.stream.synchronize()

    def gemm(self, out: Any, a: Any, b: Any) -> None:
        """``out = a @ b`` with cuBLAS, on 2-d GpuArrays (any strides), on this stream."""
        with self.device, self.stream:
            cupy.matmul(wrap(a), wrap(b), out=wrap(out))

    # DLPack (kDLCUDA = 2) and __cuda_array_interface__, through CuPy's views.
    @property
    def dlpack_device(self) -> tuple[int, int]:
        return (2, self.index)

    def export(self, array: Any) -> cupy.ndarray:
        self.stream.synchronize()  # what the consumer reads is written
        return wrap(array)

    def cuda_array_interface(self, array: Any) -> dict:
        with self.device, self.stream:
            return wrap(array).__cuda_array_interface__

    def adopt(self, value: Any) -> tuple:
        """(buffer, shape, dtype, element strides) of a CUDA DLPack producer's memory."""
        with self.device:
            found = cupy.from_dlpack(value)
        itemsize = found.dtype.itemsize
        if any(s < 0 or s % itemsize for s in found.strides):
            found = cupy.ascontiguousarray(found)  # negative or odd strides: a device copy
        extent = sum((n - 1) * s for n, s in zip(found.shape, found.strides)) + itemsize if found.size else 1
        buffer = cupy.ndarray((extent,), np.uint8, memptr=found.data)
        return buffer, found.shape, found.dtype, [s // itemsize for s in found.strides]

    def _cudnn_conv(self, kind: str, out: Any, a: Any, b: Any, pads: tuple, stride: tuple,
                    dilation: tuple, groups: int) -> None:
        """cuDNN's cross-correlation into ``out``: ``'forward'`` (a: input, b: filters),
        ``'weights'`` (a: input, b: output gradient) or ``'inputs'`` (a: filters, b:
        output gradient); ``pads`` are (before, after) pairs, equal on both sides."""
        pad = tuple(int(lo) for lo, _ in pads)
        args = (pad, tuple(stride), tuple(dilation), int(groups))
        with self.device, self.stream:  # cuDNN runs on the current stream: this device's
            if kind == "forward":
                _cudnn.convolution_forward(wrap(a), wrap(b), None, wrap(out), *args,
                                           auto_tune=False, tensor_core="never")
            elif kind == "weights":
                _cudnn.convolution_backward_filter(wrap(a), wrap(b), wrap(out), *args, deterministic=False,
                                                   auto_tune=False, tensor_core="never")
            else:
                _cudnn.convolution_backward_data(wrap(a), wrap(b), None, wrap(out), *args,
                                                 deterministic=False, auto_tune=False, tensor_core="never")

    conv = _cudnn_conv if _cudnn is not None else None


def wrap(array: Any) -> cupy.ndarray:
    """A GpuArray as a CuPy array over the same memory."""
    size = array.dtype.itemsize
    return cupy.ndarray(array.shape, array.dtype, array.buffer.data + array.offset * size,
                        strides=tuple(s * size for s in array.strides))
