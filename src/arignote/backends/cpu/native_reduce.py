"""Native reductions: CAReduce, ElemwiseReduce (a map fused into its reduction),
SumOfSquares (the map ``sqr``), and Softmax / LogSoftmax (a max, a sum and a write per
slice). Sums and products accumulate in the op's ``acc_dtype`` (float64 for float32,
Theano's) and round once to the output.

The kernel is ``render.reduce_nest``; the entry point broadcasts the inputs,
gives the output stride 0 on the reduced axes and, when the output accumulates
in memory, fills it with the identity first. Arrays under ``native_reduce_min_size``
elements (0 by default: numpy's paths here are several numpy calls, and the kernel
wins at every size, 2-3x on a 128x10 softmax or sum; ``benchmarks/thresholds.py``),
layouts the entry was not built for, empty max/min (an error numpy's path words)
and Argmax/Argmin run the op's ``perform``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.backends.cpu import native, native_glue
from arignote.backends.cpu.thunks import Thunk, make_thunk, perform_thunk
from arignote.backends.kernels import cache, render
from arignote.config import config
from arignote.graph.basic import Apply, Constant
from arignote.scalar import ops as scalar_ops
from arignote.tensor.elemwise import BroadcastRule
from arignote.tensor.fused_reduce import ElemwiseReduce
from arignote.tensor.gemm import SumOfSquares
from arignote.tensor.nnet import LogSoftmax, Softmax
from arignote.tensor.reduction import BITWISE, CAReduce


def _parts(op: Any) -> tuple[Any, Any]:
    """(the reduction, the map fused into it or None) of a reduction node's op; a
    SumOfSquares in its input's dtype has none (BLAS's dot or einsum do it, threaded)."""
    if isinstance(op, ElemwiseReduce):
        return op.reducer, op.scalar_op
    if isinstance(op, SumOfSquares):
        if op.acc_dtype is None:
            return None, None
        return CAReduce(scalar_ops.add, op.axis, None, op.acc_dtype), scalar_ops.sqr
    return op, None


def kernel(node: Apply) -> Any:
    """``source(symbol)`` of the node's kernel, or None (see module docstring)."""
    reducer, map_op = _parts(node.op)
    if not isinstance(reducer, CAReduce) or not native.wanted() or all(node.inputs[0].type.broadcastable):
        return None
    in_dtypes = [v.type.dtype for v in node.inputs]
    ndim = node.inputs[0].type.ndim
    map_dtype = in_dtypes[0] if map_op is None else map_op.output_dtype(*in_dtypes)
    name = reducer.scalar_op.name
    out_dtype = node.outputs[0].type.dtype
    if name in BITWISE and (out_dtype != "bool" or name not in render.LOGICAL_REDUCE):
        return None  # the kernels reduce truth values; bits (and xor) are numpy's reduce
    acc = "bool" if name in BITWISE else reducer.acc_dtype or out_dtype
    axes = reducer.axis
    try:
        body = render.reduce_nest(render.C, name, map_op, in_dtypes, map_dtype, acc, out_dtype,
                                  ndim, axes, "KERNEL_r")
        identity = render._reduce_parts(render.C, name, acc)[0]
        dtypes = [out_dtype, *in_dtypes]
        args = [native_glue.pointer(k, d, const=k > 0) for k, d in enumerate(dtypes)]
    except render.UnsupportedDtype:
        return None
    count = len(dtypes)
    lines = [f"if (a0->nd != {ndim - len(axes)}) return 1;",
             f"for (int d = 0; d < {ndim}; d++) n[d] = 1;",
             f"for (int k = 1; k < {count}; k++) {{",
             f"  if (a[k]->nd != {ndim}) return 1;",
             f"  for (int d = 0; d < {ndim}; d++) {{",
             "    const index_t len = a[k]->dims[d];",
             "    if (a[k]->strides[d] % isz[k]) return 1;",
             "    st[k * MAXD + d] = len == 1 ? 0 : a[k]->strides[d] / isz[k];",
             "    if (len != 1) { if (n[d] != 1 && n[d] != len) return 1; n[d] = len; }",
             "  }", "}", "index_t kept = 1, reduced = 1;"]
    j = 0
    for d in range(ndim):
        if d in axes:
            lines += [f"st[{d}] = 0;", f"reduced *= n[{d}];"]
        else:
            lines += [f"if (a0->dims[{j}] != n[{d}] || a0->strides[{j}] % isz[0]) return 1;",
                      f"st[{d}] = n[{d}] == 1 ? 0 : a0->strides[{j}] / isz[0];", f"kept *= n[{d}];"]
            j += 1
    if name in ("maximum", "minimum"):
        lines.append("if (!reduced) return 1;")
    lines.append("if (!kept) return 0;")
    if ndim and ndim - 1 not in axes:
        # The output accumulates in memory: numpy's path allocated it contiguous. When its
        # dtype is not the accumulator's, a buffer of that dtype with the same element
        # strides takes its place and is rounded into it at the end.
        lines.append("if (!(a0->flags & 1)) return 1;")
        if acc != out_dtype:
            lines += [f"{render.C.ctype(acc)} *const acc = malloc(kept * sizeof(*acc));", "if (!acc) return 1;"]
            args[0] = "acc"
        lines.append(f"for (index_t i = 0; i < kept; i++) ({args[0]})[i] = {identity};")
    lines.append(f"KERNEL_r({', '.join(args)}, n, st);")
    if args[0] == "acc":
        rounded = render.c_convert("acc[i]", out_dtype, render.C.ctype)
        lines += [f"for (index_t i = 0; i < kept; i++) ({native_glue.pointer(0, out_dtype)})[i] = {rounded};",
                  "free(acc);"]
    source = body.source + native_glue.entry("KERNEL", dtypes, lines, merged=False)
    return lambda symbol: source.replace("KERNEL", symbol)


def softmax_kernel(node: Apply) -> Any:
    """``source(symbol)`` of a Softmax or LogSoftmax node's kernel, or None."""
    if not native.wanted():
        return None
    in_dtype, out_dtype = node.inputs[0].type.dtype, node.outputs[0].type.dtype
    ndim = node.inputs[0].type.ndim
    try:
        body = render.softmax_nest(render.C, in_dtype, out_dtype, ndim, node.op.axis,
                                   isinstance(node.op, LogSoftmax), "KERNEL_r")
    except (render.UnsupportedDtype, KeyError):
        return None
    lines = []
    for k in range(2):
        lines += [f"if (a{k}->nd != {ndim}) return 1;"]
        for d in range(ndim):
            lines += [f"if (a{k}->dims[{d}] != a0->dims[{d}] || a{k}->strides[{d}] % isz[{k}]) return 1;",
                      f"n[{d}] = a0->dims[{d}]; st[{k} * MAXD + {d}] = a{k}->strides[{d}] / isz[{k}];"]
    lines.append(f"KERNEL_r({native_glue.pointer(0, out_dtype)}, {native_glue.pointer(1, in_dtype, True)}, n, st);")
    source = body.source + native_glue.entry("KERNEL", [out_dtype, in_dtype], lines, merged=False)
    return lambda symbol: source.replace("KERNEL", symbol)


def reduce_thunk(op: Any, node: Apply, input_cells: list[list], output_cells: list[list]) -> Thunk:
    fallback = perform_thunk(op, node, input_cells, output_cells)
    softmax = isinstance(op, (Softmax, LogSoftmax))
    source = softmax_kernel(node) if softmax else kernel(node)
    if source is None:
        return fallback
    ns: dict[str, Any] = {"K": native.refuse, "FALLBACK": fallback, "OUT": output_cells[0],
                          "DT": np.dtype(node.outputs[0].type.dtype), "empty": np.empty}
    native.request(source, len(node.inputs) + 1, lambda fn: ns.__setitem__("K", fn))
    names, lines = [], []
    for k, (var, cell) in enumerate(zip(node.inputs, input_cells)):
        if isinstance(var, Constant):
            ns[f"NK{k}"] = np.asarray(var.data, dtype=var.type.dtype)
            names.append(f"NK{k}")
        else:
            ns[f"C{k}"] = cell
            lines.append(f"    v{k} = C{k}[0]")
            names.append(f"v{k}")
    shaped = [n for n, v in zip(names, node.inputs) if not all(v.type.broadcastable)] or names
    first = f"{shaped[0]}.shape"
    shape = first
    if len(shaped) > 1:  # the fused map's inputs meet by the one broadcasting rule (the types')
        ns["RULE"] = BroadcastRule(op._map.make_node(*node.inputs), [names.index(n) for n in shaped])
        shape = (f"({first} if {' and '.join(f'{s}.shape == {first}' for s in shaped[1:])} "
                 f"else RULE({', '.join(s + '.shape' for s in shaped)}))")
    axes = () if softmax else _parts(op)[0].axis
    kept = [i for i in range(node.inputs[0].type.ndim) if i not in axes]
    out_shape = "(" + "".join(f"shape[{i}], " for i in kept) + ")"
    minimum = config.native_reduce_min_size
    lines += [f"    if {shaped[0]}.size >= {minimum}:" if minimum else "    if True:",
              f"        shape = {shape}",
              f"        out_shape = {out_shape}",
              "        target = OUT[0]",
              "        if target is None or target.shape != out_shape:",
              "            target = empty(out_shape, DT)",
              f"        if not K(target, {', '.join(names)}):",
              "            OUT[0] = target",
              "            return",
              "    FALLBACK()"]
    source_py = "def thunk():\n" + "\n".join(lines) + "\n"
    exec(cache.python_code(source_py, f"<thunk {op}>"), ns)
    thunk = ns["thunk"]
    thunk.source = source_py
    return thunk


make_thunk.register(CAReduce)(reduce_thunk)
make_thunk.register(ElemwiseReduce)(reduce_thunk)
make_thunk.register(SumOfSquares)(reduce_thunk)
make_thunk.register(Softmax)(reduce_thunk)
make_thunk.register(LogSoftmax)(reduce_thunk)
