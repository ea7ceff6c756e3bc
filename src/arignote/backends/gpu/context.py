"""GPU contexts: which device a name means, opening it once, and running kernels on it.

``config.device`` names the default context (context name None);
``config.contexts = "a->cuda0;b->opencl0:0"`` adds named ones. A device that
cannot be opened (no driver, no pyopencl/CuPy, no such device) makes the
default device fall back to the CPU with a warning, or raises with
``force_device=True``. The driver modules are imported here, lazily, and
nowhere else outside the two runtime files.
"""
from __future__ import annotations

import importlib
import re
import threading
import warnings
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote import progress
from arignote.backends.kernels import render
from arignote.backends.gpu.array import GpuArray, to_gpu
from arignote.compile.profiling import kernel_build
from arignote.config import config
from arignote.graph.basic import user_stacklevel
from arignote.scalar.ops import TABLE


class DeviceUnavailable(RuntimeError):
    """The requested GPU device cannot be used; the message says why and what to do."""


_FIXES = {"opencl": 'install the OpenCL extra: pip install "arignote[opencl]"',
          "cuda": 'install CuPy for your CUDA version: pip install "arignote[cuda]" '
                  "(this needs an NVIDIA GPU; any other GPU: use device=opencl0:0)"}


def open_device(spec: str) -> Any:
    """A runtime Device for ``cuda``, ``cudaN``, ``opencl`` or ``openclP:D``."""
    match = re.fullmatch(r"(cuda|opencl)(\d*)(?::(\d+))?", spec)
    if match is None:
        raise DeviceUnavailable(f"{spec!r} is not a GPU device name (cuda, cudaN, opencl, openclP:D)")
    kind = match.group(1)
    try:
        runtime = importlib.import_module(f"arignote.backends.gpu.{kind}")
    except ImportError as err:
        raise DeviceUnavailable(f"device {spec!r} needs {'pyopencl' if kind == 'opencl' else 'CuPy'}, "
                                f"which cannot be imported ({err}): {_FIXES[kind]}") from None
    try:
        if kind == "cuda":
            return runtime.Device(int(match.group(2) or 0))
        if match.group(2):
            return runtime.Device(int(match.group(2)), int(match.group(3)))
        return runtime.Device(None, None)
    except Exception as err:  # the drivers raise their own error types
        raise DeviceUnavailable(f"device {spec!r} cannot be opened: {err}; see `arignote info`"
                                ) from None


class GpuContext:
    """One opened device: its name, whether it has fp64, and its kernels."""

    def __init__(self, name: str | None, device: Any):
        self.name = name
        self.device = device
        self.dialect: render.Dialect = device.dialect
        self.fp64: bool = device.fp64
        self._copy_kernels: dict = {}

    def __repr__(self) -> str:
        return f"<GpuContext {self.name or 'default'}: {self.device.name} {self.device.description}>"

    def __reduce__(self) -> tuple:
        """Pickled by name: a device handle never travels; the loading process opens its own
        device (or none), as for the arrays (``loading_context``)."""
        return loading_context, (self.name,)

    def supports(self, dtype: str) -> str | None:
        """None if kernels can use ``dtype`` here, else the reason they cannot."""
        if dtype == "float64" and not self.fp64:
            return (f"float64 on {self.device.name}, which has no fp64: set floatX=float32 "
                    "or cast to float32")
        if dtype not in self.dialect.types:
            return f"{dtype} is not supported by the GPU kernels"
        return None

    def kernel(self, k: render.Kernel) -> Any:
        """``k`` compiled for this device (built now unless a batch built it already)."""
        return self.kernels([k])[0]

    def kernels(self, ks: Sequence[render.Kernel]) -> list:
        """``ks`` compiled for this device; those not built yet are built as one program
        (and counted as builds: finding a built one is a lookup, not a build)."""
        todo = self.device.missing(ks)
        if todo:
            progress.step(f"building {len(todo)} kernel{'s' * (len(todo) != 1)}")
            kernel_build(lambda: self.device.build(todo), len(todo))
        return self.device.build(ks)

    def launch(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int] | None,
               args: list) -> None:
        self.device.launch(kernel, tuple(global_size), None if local_size is None else tuple(local_size),
                           args)

    def elemwise_kernel(self, scalar_op: Any, in_dtypes: Sequence[str], out_dtype: str, ndim: int,
                        contiguous: bool, scalars: tuple[bool, ...]) -> render.Kernel:
        return render.elemwise(self.dialect, scalar_op, in_dtypes, out_dtype, ndim, contiguous,
                               by_value=[k for k, s in enumerate(scalars) if s])

    def run_elemwise(self, kernels: dict, scalar_op: Any, out: GpuArray, inputs: Sequence[Any]) -> None:
        """Launch ``out = scalar_op(*inputs)``; ``kernels`` memoizes the forms per node. An
        input that is not a GpuArray is a host 0-d array, passed to the kernel by value."""
        launch = self.elemwise_launch(kernels, scalar_op, out, inputs)
        if launch is not None:
            self.device.launch(*launch)

    def elemwise_launch(self, kernels: dict, scalar_op: Any, out: GpuArray,
                        inputs: Sequence[Any]) -> tuple | None:
        """The arguments of ``device.launch`` for ``out = scalar_op(*inputs)`` (None: no
        elements)."""
        size = out.size
        if not size:
            return None
        scalars = tuple(type(i) is not GpuArray for i in inputs)
        contiguous = out.is_c_contiguous and all(
            s or (i.shape == out.shape and i.is_c_contiguous) for i, s in zip(inputs, scalars))
        kernel = kernels.get((contiguous, scalars))
        if kernel is None:
            kernel = kernels[contiguous, scalars] = self.kernel(self.elemwise_kernel(
                scalar_op, [i.dtype.name for i in inputs], out.dtype.name, out.ndim, contiguous,
                scalars))
        args: list = [out.buffer, out.offset]
        for i, s in zip(inputs, scalars):
            if s:
                args.append(i.item())
            else:
                args += [i.buffer, i.offset]
        args.append(size)
        if not contiguous:
            ndim = out.ndim
            args += out.shape
            for a, s in zip((out, *inputs), (False, *scalars)):
                if not s:
                    pad = ndim - a.ndim
                    args += [0 if d < pad or a.shape[d - pad] == 1 else a.strides[d - pad]
                             for d in range(ndim)]
        groups = min(-(-size // render.LOCAL_SIZE), 4096)
        return kernel, (groups * render.LOCAL_SIZE,), (render.LOCAL_SIZE,), args

    def read_status(self, status: GpuArray) -> np.ndarray:
        """A kernel's small status array (bad indices found), read back after its launch."""
        host = np.empty(status.shape, status.dtype)
        self.device.download(host, status.buffer, status.offset * status.dtype.itemsize)
        return host

    def copy_into(self, out: GpuArray, source: GpuArray) -> None:
        key = ("copy", source.dtype.name, out.dtype.name, out.ndim)
        self.run_elemwise(self._copy_kernels.setdefault(key, {}), TABLE["identity"], out, [source])


_CONTEXTS: dict[tuple[str | None, str], GpuContext | DeviceUnavailable] = {}
_OPENING = threading.Lock()  # a device is opened once, even when threads ask for it at once


def get_context(name: str | None = None) -> GpuContext | None:
    """The context called ``name`` (None: ``config.device``), or None for the CPU.

    The default device falls back to the CPU with a warning when it cannot be
    opened (or raises DeviceUnavailable under ``force_device=True``); a named
    context that cannot be opened always raises.
    """
    spec = config.device if name is None else _named_contexts().get(name)
    if spec is None:
        raise DeviceUnavailable(f"no context named {name!r}: define it with "
                                "config.contexts='name->device;...'")
    if spec == "cpu":
        return None
    key = (name, spec)
    found = _CONTEXTS.get(key)
    if found is None:
        with _OPENING:
            found = _CONTEXTS.get(key)
            if found is None:
                try:
                    found = GpuContext(name, open_device(spec))
                except DeviceUnavailable as err:
                    found = err
                _CONTEXTS[key] = found
                if isinstance(found, DeviceUnavailable) and name is None and not config.force_device:
                    warnings.warn(f"{found}; running on the CPU instead (force_device=True makes "
                                  "this an error)", stacklevel=user_stacklevel())
    if isinstance(found, DeviceUnavailable):
        if name is not None or config.force_device:
            raise found
        return None
    return found


def why_unavailable(name: str | None = None) -> str | None:
    """Why the context ``name`` (None: ``config.device``) could not be opened, if it was tried."""
    spec = config.device if name is None else _named_contexts().get(name)
    found = _CONTEXTS.get((name, spec))
    return str(found) if isinstance(found, DeviceUnavailable) else None


def loading_context(name: str | None) -> GpuContext | None:
    """Where a value pickled on context ``name`` goes when loaded in this process: that
    context if this process defines it, else the default device (None: the CPU)."""
    return get_context(name if name is not None and name in _named_contexts() else None)


def load_array(host: np.ndarray, context_name: str | None) -> GpuArray | np.ndarray:
    """A pickled GpuArray: on this process's device, or the host array where there is none."""
    ctx = loading_context(context_name)
    return host if ctx is None else to_gpu(ctx, host)


def _named_contexts() -> dict[str, str]:
    pairs = (item.partition("->") for item in config.contexts.split(";") if item.strip())
    return {name.strip(): device.strip() for name, _, device in pairs}
