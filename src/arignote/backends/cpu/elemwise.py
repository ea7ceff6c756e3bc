"""The CPU thunk for Elemwise: everything decidable at link time is decided there.

Per call it only reads the input cells, calls the numpy ufunc (into the
previous output buffer when the executor left it to reuse), and fixes the dtype.
"""
from __future__ import annotations

import numpy as np

from arignote.backends.cpu.thunks import Thunk, make_thunk, perform_thunk
from arignote.graph.basic import Apply
from arignote.tensor.elemwise import Elemwise


@make_thunk.register(Elemwise)
def elemwise_thunk(op: Elemwise, node: Apply, input_cells: list[list], output_cells: list[list]) -> Thunk:
    ufunc = op.scalar_op.ufunc
    if op.inplace_pattern:
        return _inplace_thunk(op, node, input_cells, output_cells)
    if ufunc is None or len(node.outputs) != 1:
        return perform_thunk(op, node, input_cells, output_cells)
    out_dtype = node.outputs[0].type.numpy_dtype
    compute = None
    if _numpy_result_dtype(ufunc, node) != out_dtype:
        compute = op.scalar_op.compute_dtype(out_dtype.name, *[i.type.dtype for i in node.inputs])
    cell = output_cells[0]
    ndarray = np.ndarray

    def finish(result: object) -> None:
        if type(result) is not ndarray:
            result = np.asarray(result)
        if result.dtype != out_dtype:
            result = result.astype(out_dtype)
        cell[0] = result

    if compute is not None:
        def thunk() -> None:
            finish(ufunc(*[np.asarray(c[0], dtype=compute) for c in input_cells]))
    elif len(input_cells) == 1:
        (a,) = input_cells

        def thunk() -> None:
            x = a[0]
            out = cell[0]
            if out is not None and out.shape == x.shape:
                ufunc(x, out=out)
            else:
                finish(ufunc(x))
    elif len(input_cells) == 2:
        a, b = input_cells

        def thunk() -> None:
            x = a[0]
            y = b[0]
            out = cell[0]
            if out is not None and out.shape == (x.shape if x.shape == y.shape
                                                 else np.broadcast_shapes(x.shape, y.shape)):
                ufunc(x, y, out=out)
            else:
                finish(ufunc(x, y))
    else:
        def thunk() -> None:
            finish(ufunc(*[c[0] for c in input_cells]))
    return thunk


def _numpy_result_dtype(ufunc: np.ufunc, node: Apply) -> np.dtype:
    """What numpy itself returns for these input dtypes (casting first is needed
    only where it differs from our dtype rule, e.g. exp(int8) is float16 in numpy)."""
    probes = [np.ones(1, dtype=i.type.numpy_dtype) for i in node.inputs]
    with np.errstate(all="ignore"):
        return np.asarray(ufunc(*probes)).dtype


def _inplace_thunk(op: Elemwise, node: Apply, input_cells: list[list], output_cells: list[list]) -> Thunk:
    """Write into the destroyed input; fall back to a new buffer when broadcasting at run
    time makes the output larger than that input (a length-1 dim not declared broadcastable)."""
    impl = op.scalar_op.ufunc or op.scalar_op.impl
    target_cell = input_cells[op.inplace_pattern[0][1]]
    cell = output_cells[0]
    out_dtype = node.outputs[0].type.numpy_dtype
    is_ufunc = op.scalar_op.ufunc is not None and _numpy_result_dtype(op.scalar_op.ufunc, node) == out_dtype

    def thunk() -> None:
        values = [c[0] for c in input_cells]
        target = target_cell[0]
        shape = values[0].shape if all(v.shape == values[0].shape for v in values) else \
            np.broadcast_shapes(*[v.shape for v in values])
        if target.shape != shape:
            result = np.asarray(impl(*values)).astype(out_dtype, copy=False)
        elif is_ufunc:
            result = impl(*values, out=target)
        else:
            np.copyto(target, impl(*values), casting="unsafe")
            result = target
        cell[0] = result
    return thunk
