"""Elemwise (a scalar op mapped over broadcast arrays) and DimShuffle."""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Op
from arignote.scalar.ops import ScalarOp
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable


class Elemwise(Op):
    """Apply ``scalar_op`` elementwise, with numpy broadcasting.

    Inputs of fewer dimensions are padded on the left with broadcastable
    dimensions (a DimShuffle is inserted), as numpy does. ``inplace_pattern``
    ``{out: in}`` makes output ``out`` overwrite input ``in``; only the in-place
    rewrite sets it, after proving that input is not needed elsewhere.
    """

    __props__ = ("scalar_op", "inplace_pattern")

    def __init__(self, scalar_op: ScalarOp, inplace_pattern: dict[int, int] | None = None):
        self.scalar_op = scalar_op
        self.inplace_pattern = tuple(sorted((inplace_pattern or {}).items()))
        self.destroy_map = {o: [i] for o, i in self.inplace_pattern}

    def __str__(self) -> str:
        if self.inplace_pattern:
            return f"Elemwise{{{self.scalar_op},inplace}}"
        return f"Elemwise{{{self.scalar_op},no_inplace}}"

    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != self.scalar_op.nin:
            raise TypeError(f"{self.scalar_op} takes {self.scalar_op.nin} inputs, got {len(inputs)}")
        inputs = [as_tensor_variable(i) for i in inputs]
        ndim = max(i.ndim for i in inputs)
        inputs = [pad_left(i, ndim) for i in inputs]
        names = [f"input {k} ({i.describe()})" for k, i in enumerate(inputs)]
        dtype = self.scalar_op.output_dtype(*[i.dtype for i in inputs], names=names)
        broadcastable = tuple(all(bs) for bs in zip(*[i.broadcastable for i in inputs])) if ndim else ()
        for _out, inp in self.inplace_pattern:
            if inputs[inp].dtype != dtype or inputs[inp].broadcastable != broadcastable:
                raise TypeError(f"{self}: input {inp} cannot hold the output in place")
        node = Apply(self, inputs, [TensorType(dtype, broadcastable)()])
        node.tag.elemwise_dtypes = self._dtypes(node)
        return node

    def _dtypes(self, node: Apply) -> tuple[np.dtype, str | None]:
        """(output dtype, dtype to compute in): fixed by the node's types, so found once."""
        out = node.outputs[0].type.dtype
        return np.dtype(out), self.scalar_op.compute_dtype(out, *[i.type.dtype for i in node.inputs])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        try:
            out_dtype, compute = node.tag.elemwise_dtypes
        except AttributeError:  # a node cloned without make_node
            out_dtype, compute = node.tag.elemwise_dtypes = self._dtypes(node)
        if compute is not None:
            inputs = [i.astype(compute) if i.dtype != compute else i for i in inputs]
        op = self.scalar_op
        cell = output_storage[0]
        if self.inplace_pattern:
            result = _apply(op, inputs, inputs[self.inplace_pattern[0][1]])
        else:
            target = cell[0]
            if (target is not None and op.ufunc is not None and target.dtype == out_dtype
                    and target.shape == _broadcast_shape(inputs)):
                result = op.ufunc(*inputs, out=target)
            else:
                result = op.impl(*inputs)
                if type(result) is not np.ndarray:
                    result = np.asarray(result)
        if result.dtype != out_dtype:
            result = result.astype(out_dtype)
        cell[0] = result

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        out_shape = []
        for dim, b in enumerate(node.outputs[0].broadcastable):
            if b:
                out_shape.append(1)
                continue
            candidates = [s[dim] for s, i in zip(input_shapes, node.inputs) if not i.broadcastable[dim]]
            out_shape.append(candidates[0])
        return [tuple(out_shape)]


def _apply(op: ScalarOp, inputs: list, out: np.ndarray | None) -> np.ndarray:
    if out is not None and op.ufunc is not None:
        return op.ufunc(*inputs, out=out)
    result = op.impl(*inputs)
    if out is not None:
        np.copyto(out, result, casting="unsafe")
        return out
    return result if type(result) is np.ndarray else np.asarray(result)


def _broadcast_shape(inputs: list) -> tuple:
    first = inputs[0].shape
    if all(i.shape == first for i in inputs):
        return first
    return np.broadcast_shapes(*[i.shape for i in inputs])


def pad_left(var: Any, ndim: int) -> Any:
    """``var`` with broadcastable dimensions added on the left up to ``ndim``."""
    if var.ndim == ndim:
        return var
    pattern = ["x"] * (ndim - var.ndim) + list(range(var.ndim))
    return DimShuffle(var.broadcastable, pattern)(var)


class DimShuffle(Op):
    """Permute dimensions, drop length-1 ones and add broadcastable ones (``'x'``).

    The output is always a view of the input, which ``view_map`` declares.
    """

    __props__ = ("input_broadcastable", "new_order")
    view_map = {0: [0]}

    def __init__(self, input_broadcastable: Sequence[bool], new_order: Sequence[int | str]):
        self.input_broadcastable = tuple(bool(b) for b in input_broadcastable)
        order = []
        for item in new_order:
            if item == "x":
                order.append("x")
            elif isinstance(item, (int, np.integer)) and 0 <= item < len(self.input_broadcastable):
                order.append(int(item))
            else:
                raise ValueError(f"dimshuffle pattern {tuple(new_order)}: {item!r} is neither 'x' "
                                 f"nor an axis of the {len(self.input_broadcastable)}-d input")
        self.new_order = tuple(order)
        kept = [i for i in order if i != "x"]
        if len(set(kept)) != len(kept):
            raise ValueError(f"dimshuffle pattern {self.new_order} repeats an axis")
        self.drop = tuple(i for i in range(len(self.input_broadcastable)) if i not in kept)
        for axis in self.drop:
            if not self.input_broadcastable[axis]:
                raise ValueError(
                    f"dimshuffle pattern {self.new_order} drops axis {axis}, which is not known to "
                    "have length 1: list it in the pattern, or make it broadcastable first "
                    "(tensor.addbroadcast / specify the shape)")
        # Precomputed numpy steps: index away dropped axes, transpose, then add new axes.
        remaining = [i for i in range(len(self.input_broadcastable)) if i not in self.drop]
        self._drop_index = tuple(0 if i in self.drop else slice(None)
                                 for i in range(len(self.input_broadcastable))) + (Ellipsis,)
        self._perm = tuple(remaining.index(i) for i in kept)
        self._expand = tuple(None if i == "x" else slice(None) for i in order)

    def __str__(self) -> str:
        return f"InplaceDimShuffle{{{','.join(map(str, self.new_order))}}}"

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.broadcastable != self.input_broadcastable:
            if x.ndim != len(self.input_broadcastable) or any(
                    b and not xb for b, xb in zip(self.input_broadcastable, x.broadcastable)):
                raise TypeError(f"{self} expects input of broadcastable pattern "
                                f"{self.input_broadcastable}, got {x} of type {x.type}")
        broadcastable = tuple(True if i == "x" else x.broadcastable[i] for i in self.new_order)
        return Apply(self, [x], [TensorType(x.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        y = inputs[0]
        if self.drop:
            y = y[self._drop_index]
        if self._perm != tuple(range(len(self._perm))):
            y = y.transpose(self._perm)
        if "x" in self.new_order:
            y = y[self._expand]
        output_storage[0][0] = y

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = input_shapes[0]
        return [tuple(1 if i == "x" else shape[i] for i in self.new_order)]
