"""Native Elemwise: one kernel per node, fused Composites included, any layout.

The kernel is ``render.elemwise`` in the C dialect, in both forms: contiguous
(inputs that are one element by type are read once) and strided (any
broadcasting, strides, transposed views; dimensions merged first). The
entry point picks the form from the arrays it is given; the rank is a run-time
value, so one compiled kernel serves every rank of a scalar op and dtypes.
"""
from __future__ import annotations

from collections.abc import Callable

from arignote.backends.cpu import native, native_glue
from arignote.backends.kernels import render
from arignote.graph.basic import Apply


def kernel(node: Apply) -> Callable[[str], str] | None:
    """``source(symbol)`` of the node's native kernel, or None when it has none
    (no compiler, a dtype C lacks, a scalar op without a kernel expression)."""
    if not native.wanted() or all(node.outputs[0].type.broadcastable):
        return None  # one element, always under native_min_size (shape arithmetic)
    scalar_op = node.op.scalar_op
    in_dtypes = [v.type.dtype for v in node.inputs]
    out_dtype = node.outputs[0].type.dtype
    scalars = [k for k, v in enumerate(node.inputs) if all(v.type.broadcastable)]
    try:
        contiguous = render.elemwise(render.C, scalar_op, in_dtypes, out_dtype, 0, True, scalars,
                                     name="KERNEL_c")
        strided = render.elemwise(render.C, scalar_op, in_dtypes, out_dtype, 0, False, name="KERNEL_s")
    except render.UnsupportedDtype:
        return None
    dtypes = [out_dtype, *in_dtypes]
    args = ", ".join(f"{native_glue.pointer(k, d, const=k > 0)}, 0" for k, d in enumerate(dtypes))
    dense = " && ".join(["nd == 1"] + [f"st[{k} * MAXD] == 1" for k in range(len(dtypes))
                                       if k - 1 not in scalars])
    body = ["if (!size) return 0;",
            f"if (size == 1 || ({dense})) KERNEL_c({args}, size);",
            f"else KERNEL_s({args}, size, nd, n, st);"]
    source = contiguous.source + strided.source + native_glue.entry("KERNEL", dtypes, body)
    return lambda symbol: source.replace("KERNEL", symbol)
