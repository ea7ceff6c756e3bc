"""The OpenCL runtime (pyopencl): buffers, transfers, compiling and launching.

With ``cuda.py`` this is one of the two files that import a driver library.

Threads: OpenCL calls are thread-safe except ``clSetKernelArg``: a launch sets
the arguments of a kernel object (shared by every node whose kernel has the
same source) where they changed and then enqueues it, so launches on one
device hold its launch lock. Program builds hold a build lock (one build per source, and the
compiler is not entered twice at once). Transfers need no lock: the queue is
in order, so each thread's commands run in the order it enqueued them.
"""
from __future__ import annotations

import math
import threading
from typing import Any
from collections.abc import Sequence

import numpy as np
import pyopencl as cl

from arignote.backends.gpu import binaries, binary_producer
from arignote.backends.kernels import program
from arignote.backends.kernels.render import OPENCL, Kernel
from arignote.config import config

# What `device=opencl` takes first: a GPU, then an accelerator, then anything (a CPU).
_PREFERENCE = (cl.device_type.GPU, cl.device_type.ACCELERATOR)


def platforms() -> list[dict[str, Any]]:
    """Every platform and device, for ``arignote info``."""
    result = []
    for platform in cl.get_platforms():
        devices = []
        for device in platform.get_devices():
            devices.append({
                "name": device.name.strip(), "type": cl.device_type.to_string(device.type),
                "version": device.version.strip(), "memory": device.global_mem_size,
                "fp64": bool(device.double_fp_config), "compute_units": device.max_compute_units,
                "gpu": bool(device.type & cl.device_type.GPU)})
        result.append({"name": platform.name.strip(), "version": platform.version.strip(),
                       "devices": devices})
    return result


def version() -> str:
    return cl.VERSION_TEXT


def identity(platform: cl.Platform, device: cl.Device) -> str:
    """What a program binary of ``device`` depends on: the device, its driver and pyopencl."""
    return "|".join([f"{device.name.strip()} ({platform.name.strip()})", device.driver_version,
                     device.version, cl.VERSION_TEXT])


def choose(found: Sequence[Sequence[int]]) -> tuple[int, int, str]:
    """(platform, device, why) for ``device=opencl``: the first GPU-type device, else the
    first accelerator, else the first device; ``found[p]`` lists platform p's device types."""
    pairs = [(p, d, kind) for p, kinds in enumerate(found) for d, kind in enumerate(kinds)]
    if not pairs:
        raise RuntimeError("no OpenCL device found")
    for wanted, label in zip(_PREFERENCE, ("GPU", "accelerator")):
        for p, d, kind in pairs:
            if kind & wanted:
                return p, d, f"the first {label}-type device"
    p, d, _ = pairs[0]
    return p, d, "the first device: there is no GPU-type OpenCL device on this machine"


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


def _seen(arg: Any) -> Any:
    """What an argument is compared by: a buffer's handle; a float with its sign (0.0 and
    -0.0 are equal, yet not the same argument)."""
    if type(arg) is cl.Buffer:
        return arg.int_ptr
    if isinstance(arg, (float, np.floating)) and arg == 0:
        return (0.0, math.copysign(1.0, arg))
    return arg


class Device:
    dialect = OPENCL

    def __init__(self, platform: int | None, device: int | None):
        found = cl.get_platforms()
        self.chosen = None  # why `device=opencl` took this device (None: it was named)
        if platform is None:
            platform, device, self.chosen = choose([[d.type for d in p.get_devices()] for p in found])
        if platform >= len(found):
            raise RuntimeError(f"there is no OpenCL platform {platform} ({len(found)} found)")
        devices = found[platform].get_devices()
        if device >= len(devices):
            raise RuntimeError(f"OpenCL platform {platform} has no device {device} "
                               f"({len(devices)} found)")
        self.cl_device = devices[device]
        self.name = f"opencl{platform}:{device}"
        self._where = {"platform": platform, "device": device}  # for a binary producer
        self.description = f"{self.cl_device.name.strip()} ({found[platform].name.strip()})"
        self.fp64 = bool(self.cl_device.double_fp_config)
        # PoCL (and other CPU drivers) give an OpenCL device that is the CPU itself.
        self.on_cpu = bool(self.cl_device.type & cl.device_type.CPU)
        self.compute_units = self.cl_device.max_compute_units
        self.context = cl.Context([self.cl_device])
        self.queue = cl.CommandQueue(self.context)
        self._identity = identity(found[platform], self.cl_device)
        # Program binaries stored as they are built, except on a CPU device: PoCL serialises
        # a program only after compiling a generic work-group function for every kernel
        # (2.5-14 s for benchmark G4's 11 kernels, measured); there a background process
        # makes them (binary_producer.py, flag opencl.background_binaries).
        self.cache_binaries = not self.on_cpu
        self._kernels: dict[str, cl.Kernel] = {}
        self._build_lock = threading.Lock()
        self._launch_lock = threading.Lock()
        self._last_args: dict[int, tuple] = {}  # id(kernel) -> (kernel, arguments seen, the list)

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

    def upload(self, buffer: cl.Buffer, host: np.ndarray, byte_offset: int = 0) -> None:
        cl.enqueue_copy(self.queue, buffer, host, dst_offset=byte_offset, is_blocking=True)

    def download(self, host: np.ndarray, buffer: cl.Buffer, byte_offset: int) -> None:
        cl.enqueue_copy(self.queue, host, buffer, src_offset=byte_offset, is_blocking=True)

    def missing(self, kernels: Sequence[Kernel]) -> list[Kernel]:
        """Those of ``kernels`` not compiled yet in this process."""
        return [k for k in kernels if self._key(k) not in self._kernels]

    def build(self, kernels: Sequence[Kernel]) -> list[cl.Kernel]:
        """The compiled kernels, those not built yet compiled together as one program
        (per set of options), from the disk cache when it has it."""
        keys = [self._key(k) for k in kernels]
        if any(key not in self._kernels for key in keys):
            with self._build_lock:
                todo = {key: k for key, k in zip(keys, kernels) if key not in self._kernels}
                for fp64 in (False, True):
                    group = [k for k in todo.values() if ("float64" in k.dtypes) == fp64]
                    if group:
                        self._build_program(group, self._options(group[0]))
        return [self._kernels[key] for key in keys]

    @staticmethod
    def _options(k: Kernel) -> list[str]:
        # Without fp64, double literals such as 0.5 in a float kernel would not compile,
        # and a float32 kernel computes in float32 as numpy does.
        return [] if "float64" in k.dtypes else ["-cl-single-precision-constant"]

    def _key(self, k: Kernel) -> str:
        return binaries.key(k.source, k.name, self._identity, *self._options(k))

    def _build_program(self, group: list[Kernel], options: list[str]) -> None:
        source = program.join(OPENCL, group)
        name = binaries.key(source, self._identity, *options)
        produced = not self.cache_binaries and config.opencl.background_binaries
        built = None
        binary = binaries.load(name) if self.cache_binaries or produced else None
        if binary is not None:
            try:
                built = cl.Program(self.context, [self.cl_device], [binary]).build(options=options)
            except cl.Error:
                built = None  # a binary this driver no longer takes: build from the source
        if built is None:
            built = cl.Program(self.context, source).build(options=options)
            if self.cache_binaries:
                binaries.store(name, built.get_info(cl.program_info.BINARIES)[0])
            elif produced:
                binary_producer.built_from_source(name, dict(self._where, source=source,
                                                             options=list(options)))
        found = {kernel.function_name: kernel for kernel in built.all_kernels()}  # one driver call
        for k in group:
            kernel = found[program.entry_name(k)]
            kernel.set_scalar_arg_dtypes([None if t is None else np.dtype(t)
                                          for t in program.arg_dtypes(OPENCL, k)])
            self._kernels[self._key(k)] = kernel

    def launch(self, kernel: cl.Kernel, global_size: tuple[int, ...],
               local_size: tuple[int, ...] | None, args: list, token: object = None) -> None:
        """Enqueue ``kernel``, setting its arguments only when they differ from its last
        launch's: a node's next call mostly passes the same buffers and sizes, and
        setting them is most of a small launch's cost. Buffers compare by handle (a
        kernel keeps handles, not buffers: holding them would keep freed memory).
        ``token``: what :meth:`relaunch` names this launch by."""
        seen = [_seen(a) for a in args]
        with self._launch_lock:
            last = self._last_args.get(id(kernel))
            if last is None or last[0] is not kernel or last[1] != seen:
                kernel.set_args(*args)
            self._last_args[id(kernel)] = (kernel, seen, token)
            cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size)

    def relaunch(self, kernel: cl.Kernel, global_size: tuple[int, ...],
                 local_size: tuple[int, ...] | None, token: object) -> bool:
        """Enqueue ``kernel`` again with the arguments of the launch given ``token`` if that
        was its last launch (a node running again on the same arrays: nothing to convert
        or compare); False, enqueuing nothing, otherwise."""
        with self._launch_lock:
            last = self._last_args.get(id(kernel))
            if last is None or last[0] is not kernel or last[2] is not token:
                return False
            cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size)
        return True

    def synchronize(self) -> None:
        self.queue.finish()

    # DLPack (kDLCPU = 1): only a CPU device's buffers are host memory the host can map.
    @property
    def dlpack_device(self) -> tuple[int, int]:
        if not self.on_cpu:
            raise BufferError(f"{self.name} is an OpenCL GPU: its buffers are not host memory and "
                              "DLPack has no OpenCL device type others read; use numpy.asarray(x) "
                              "(a copy)")
        return (1, 0)

    def export(self, array: Any) -> np.ndarray:
        """A numpy view of ``array``'s buffer, mapped (no copy on a CPU device) until the view
        and every array made from it are gone."""
        self.dlpack_device  # noqa: B018  (raises on a GPU)
        self.queue.finish()
        itemsize = array.dtype.itemsize
        whole, _ = cl.enqueue_map_buffer(self.queue, array.buffer, cl.map_flags.READ | cl.map_flags.WRITE,
                                         0, (array.buffer.size // itemsize,), array.dtype, is_blocking=True)
        return np.lib.stride_tricks.as_strided(
            whole[array.offset:], array.shape, [s * itemsize for s in array.strides])

    def adopt(self, value: Any) -> tuple:
        """(buffer, shape, dtype, element strides) of a host DLPack producer's memory, used by
        the device in place (USE_HOST_PTR: PoCL reads and writes that memory itself)."""
        self.dlpack_device  # noqa: B018  (raises on a GPU)
        host = np.from_dlpack(value)
        if not host.flags.c_contiguous or not host.flags.writeable:
            raise BufferError("only a contiguous, writeable array can be shared with the device; "
                              "pass numpy.ascontiguousarray(value) (a copy)")
        buffer = cl.Buffer(self.context, cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR,
                           hostbuf=host.reshape(-1) if host.size else np.empty(1, host.dtype))
        return buffer, host.shape, host.dtype, None

    gemm = None  # no vendor BLAS here: the tiled GEMM kernel runs instead
