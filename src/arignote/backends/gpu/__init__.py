"""The GPU layer: one device-independent array type, ops and kernel renderer,
with two thin runtimes (``opencl.py``, ``cuda.py``) that alone import a driver.

Importing this package imports no driver: a device is opened when
``config.device`` (or a ``contexts`` name) first asks for it.
"""
from arignote.backends.gpu.array import GpuArray
from arignote.backends.gpu.context import DeviceUnavailable, GpuContext, get_context
from arignote.backends.gpu.explain import explain
from arignote.backends.gpu.type import (GpuArrayType, GpuArraySharedVariable, GpuFromHost,
                                        GpuToGpu, HostFromGpu)
from arignote.backends.gpu import mrg, scan  # noqa: F401  (register the lowerings of MRG draws and Scan)
from arignote.backends.gpu import instruments  # noqa: F401  (NanGuardMode's check, profiles' sync)
from arignote.backends.gpu import prebuild  # noqa: F401  (a function's kernels built as one program)

__all__ = ["GpuArray", "GpuArrayType", "GpuArraySharedVariable", "GpuContext", "GpuFromHost",
           "GpuToGpu", "HostFromGpu", "DeviceUnavailable", "explain", "get_context"]
