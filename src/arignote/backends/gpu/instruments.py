"""What the modes that look inside a function need from the GPU layer.

NanGuardMode's check of a device array runs on the device (three flags come
back, never the array: ``compile.nanguardmode.finite_flags``), and a profile
waits for a node's device before it stops the clock
(``compile.profiling.synchronizer``).
"""
from __future__ import annotations

import numpy as np

from arignote.backends.gpu.array import GpuArray
from arignote.backends.gpu.type import GpuArrayType
from arignote.backends.kernels import render_check
from arignote.backends.kernels.render import LOCAL_SIZE
from arignote.compile.nanguardmode import BIG, Flags, finite_flags
from arignote.compile.profiling import synchronizer

MAX_GROUPS = 64  # partial flags per launch, combined on the host
_KERNELS: dict = {}  # (context, dtype) -> the built kernel


@finite_flags.register(GpuArray)
def _device_flags(value: GpuArray) -> Flags:
    dtype = value.dtype
    # Integers narrower than 64 bits cannot exceed BIG; bool and the rest hold no NaN.
    if not value.size or not (dtype.kind == "f" or (dtype.kind in "iu" and dtype.itemsize == 8)):
        return False, False, False
    array = value if value.is_c_contiguous else value.copy()
    ctx = array.context
    kernel = _KERNELS.get((ctx, dtype.name))
    if kernel is None:
        kernel = _KERNELS[ctx, dtype.name] = ctx.kernel(render_check.finite_check(ctx.dialect, dtype.name))
    groups = min(-(-array.size // LOCAL_SIZE), MAX_GROUPS)
    flags = GpuArray(ctx, (groups,), "int32")
    ctx.launch(kernel, (groups * LOCAL_SIZE,), (LOCAL_SIZE,),
               [flags.buffer, array.buffer, np.int64(array.offset), np.int64(array.size),
                dtype.type(BIG)])
    bits = int(np.bitwise_or.reduce(flags.get()))
    return (bool(bits & render_check.NAN), bool(bits & render_check.INF),
            bool(bits & render_check.BIG))


@synchronizer.register(GpuArrayType)
def _device_sync(var_type: GpuArrayType):
    return var_type.context.device.synchronize
