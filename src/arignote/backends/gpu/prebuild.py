"""All of a Function's GPU kernels built at ``function()`` time, as one program per device.

While a Function links (``backends.linking.link_batch``), the thunk factory of
GPU ops adds each node's kernels (``GpuOp.gpu_kernels``) to this thread's
batch; when the links are made, each device builds its share in one compiler
run (and through the disk cache). At call time an op's ``ctx.kernel(k)``
then finds ``k`` already compiled. Kernels a node only turns out to need at
call time (a strided form for a view) are built then.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from arignote.backends import linking
from arignote.backends.cpu.thunks import make_thunk, perform_thunk
from arignote.backends.gpu.ops import GpuOp
from arignote.backends.gpu.type import GpuArrayType
from arignote.graph.basic import Apply

_batch = threading.local()


@linking.register
@contextlib.contextmanager
def gpu_batch() -> Iterator[None]:
    outer = getattr(_batch, "found", None)
    _batch.found = found = {}  # context -> its kernels, by source
    try:
        yield
    finally:
        _batch.found = outer
    for ctx, kernels in found.items():
        ctx.kernels(list(kernels.values()))


@make_thunk.register(GpuOp)
def _gpu_thunk(op: GpuOp, node: Apply, input_cells: list[list], output_cells: list[list]):
    found = getattr(_batch, "found", None)
    if found is not None:
        kernels = op.gpu_kernels(node)
        if kernels:
            ctx = next(v.type for v in node.outputs + node.inputs if isinstance(v.type, GpuArrayType)).context
            for k in kernels:
                found.setdefault(ctx, {})[(k.name, k.source)] = k
    return perform_thunk(op, node, input_cells, output_cells)
