"""The OpenCL runtime (pyopencl): buffers, transfers, compiling and launching.

With ``cuda.py`` this is one of the two files that import a driver library.

Threads: OpenCL calls are thread-safe except ``clSetKernelArg``: a launch sets
the arguments of a kernel object (shared by every node whose kernel has the
same source) and then enqueues it, so launches on one device hold its launch
lock. Program builds hold a build lock (one build per source, and the
compiler is not entered twice at once). Transfers need no lock: the queue is
in order, so each thread's commands run in the order it enqueued them.
"""
from __future__ import annotations

import hashlib
import threading
from typing import Any

import numpy as np
import pyopencl as cl

from arignote.backends.kernels.render import OPENCL


def platforms() -> list[dict[str, Any]]:
    """Every platform and device, for ``arignote info``."""
    result = []
    for platform in cl.get_platforms():
        devices = []
        for device in platform.get_devices():
            devices.append({
                "name": device.name.strip(), "type": cl.device_type.to_string(device.type),
                "version": device.version.strip(), "memory": device.global_mem_size,
                "fp64": bool(device.double_fp_config), "compute_units": device.max_compute_units})
        result.append({"name": platform.name.strip(), "version": platform.version.strip(),
                       "devices": devices})
    return result


def version() -> str:
    return cl.VERSION_TEXT


_NO_MEMORY = {cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE, cl.status_code.OUT_OF_RESOURCES,
              cl.status_code.OUT_OF_HOST_MEMORY, cl.status_code.INVALID_BUFFER_SIZE}


def _bytes(n: int) -> str:
    """``4294967296 bytes (4.0 GiB)``."""
    size, unit = float(n), "bytes"
    for bigger in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{n} byte{'s' * (n != 1)}" + (f" ({size:.1f} {unit})" if unit != "bytes" else "")


class Device:
    dialect = OPENCL

    def __init__(self, platform: int | None, device: int | None):
        found = cl.get_platforms()
        if platform is None:
            pairs = [(p, d) for p, plat in enumerate(found) for d in range(len(plat.get_devices()))]
            if not pairs:
                raise RuntimeError("no OpenCL device found")
            platform, device = pairs[0]
        if platform >= len(found):
            raise RuntimeError(f"there is no OpenCL platform {platform} ({len(found)} found)")
        devices = found[platform].get_devices()
        if device >= len(devices):
            raise RuntimeError(f"OpenCL platform {platform} has no device {device} "
                               f"({len(devices)} found)")
        self.cl_device = devices[device]
        self.name = f"opencl{platform}:{device}"
        self.description = f"{self.cl_device.name.strip()} ({found[platform].name.strip()})"
        self.fp64 = bool(self.cl_device.double_fp_config)
        # PoCL (and other CPU drivers) give an OpenCL device that is the CPU itself.
        self.on_cpu = bool(self.cl_device.type & cl.device_type.CPU)
        self.context = cl.Context([self.cl_device])
        self.queue = cl.CommandQueue(self.context)
        self._identity = f"{self.description}|{self.cl_device.driver_version}|{cl.VERSION_TEXT}"
        self._kernels: dict[str, cl.Kernel] = {}
        self._build_lock = threading.Lock()
        self._launch_lock = threading.Lock()

    def alloc(self, nbytes: int) -> cl.Buffer:
        """A device buffer; MemoryError (with the size, the device and its limits) when
        the device cannot hold it, where pyopencl would say INVALID_BUFFER_SIZE."""
        limit = self.cl_device.max_mem_alloc_size
        if nbytes > limit:
            raise MemoryError(self._no_room(nbytes, f"one buffer may hold at most {_bytes(limit)} there"))
        try:
            return cl.Buffer(self.context, cl.mem_flags.READ_WRITE, max(nbytes, 1))
        except cl.Error as err:
            if getattr(err, "code", None) not in _NO_MEMORY:
                raise
            raise MemoryError(self._no_room(nbytes, f"the driver refused it ({err})")) from None

    def _no_room(self, nbytes: int, why: str) -> str:
        return (f"cannot allocate {_bytes(nbytes)} on {self.name} ({self.description}): {why}, "
                f"of {_bytes(self.cl_device.global_mem_size)} in all. Use smaller arrays (a smaller "
                "batch), float32 rather than float64, or run this on the CPU (device=cpu)")

    def upload(self, buffer: cl.Buffer, host: np.ndarray) -> None:
        cl.enqueue_copy(self.queue, buffer, host, is_blocking=True)

    def download(self, host: np.ndarray, buffer: cl.Buffer, byte_offset: int) -> None:
        cl.enqueue_copy(self.queue, host, buffer, src_offset=byte_offset, is_blocking=True)

    def build(self, source: str, name: str, fp64: bool) -> cl.Kernel:
        # Without fp64, double literals such as 0.5 in a float kernel would not compile.
        options = [] if fp64 else ["-cl-single-precision-constant"]
        key = hashlib.sha256("\0".join([source, name, self._identity, *options]).encode()).hexdigest()
        kernel = self._kernels.get(key)
        if kernel is None:
            with self._build_lock:
                kernel = self._kernels.get(key)
                if kernel is None:
                    program = cl.Program(self.context, source).build(options=options)
                    kernel = self._kernels[key] = getattr(program, name)
        return kernel

    def launch(self, kernel: cl.Kernel, global_size: tuple[int, ...],
               local_size: tuple[int, ...] | None, args: list) -> None:
        with self._launch_lock:
            kernel(self.queue, global_size, local_size, *args)

    def synchronize(self) -> None:
        self.queue.finish()

    gemm = None  # no vendor BLAS here: the tiled GEMM kernel runs instead
