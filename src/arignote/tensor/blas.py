"""The dot family: dot, matmul, tensordot, outer, batched_dot, batched_tensordot.

Each op calls numpy (which calls BLAS for floats) and gives the upcast of its
inputs' dtypes. A contraction whose lengths the graph already fixes
(constants, broadcastable dimensions) is checked when the graph is built;
otherwise the error comes at run time, naming both inputs and their shapes.
"""
from __future__ import annotations

import string
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Constant, Op, Variable
from arignote.scalar.dtypes import upcast
from arignote.tensor import math as _math
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Dot", "MatMul", "TensorDot", "BatchedTensordot", "dot", "matmul", "tensordot",
           "outer", "batched_dot", "batched_tensordot"]


class Dot(Op):
    """numpy.dot of two tensors of at least one dimension: the last axis of ``a``
    against the second-to-last of ``b`` (its only one when ``b`` is a vector)."""

    __props__ = ()

    def __str__(self) -> str:
        return "dot" if type(self) is Dot else type(self).__name__  # Theano's name in printed graphs

    def make_node(self, a: Any, b: Any) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim == 0 or b.ndim == 0:
            raise TypeError(f"Dot takes tensors of at least one dimension, got {a.describe()} "
                            f"({a.ndim}-d) and {b.describe()} ({b.ndim}-d): use dot(), which "
                            "multiplies scalars")
        _check_contraction("dot", a, b, [a.ndim - 1], [_dot_axis(b)])
        broadcastable = a.broadcastable[:-1] + b.broadcastable[:-2] + b.broadcastable[-1:] \
            if b.ndim > 1 else a.broadcastable[:-1]
        return Apply(self, [a, b], [TensorType(upcast(a.dtype, b.dtype), broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b = inputs
        try:
            result = np.dot(a, b)
        except ValueError:
            raise _mismatch("dot", node, a, b, a.ndim - 1, _dot_axis(b)) from None
        output_storage[0][0] = _as_output(result, node)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        a, b = input_shapes
        return [tuple(a[:-1]) + (tuple(b[:-2]) + tuple(b[-1:]) if len(b) > 1 else ())]


class MatMul(Op):
    """numpy.matmul: matrix products over the last two axes, broadcasting the rest;
    a vector operand acts as a matrix whose added axis is then dropped."""

    __props__ = ()

    def make_node(self, a: Any, b: Any) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul does not take scalars ({a.describe()} is {a.ndim}-d, "
                             f"{b.describe()} is {b.ndim}-d): use mul, or dot")
        _check_contraction("matmul", a, b, [a.ndim - 1], [_dot_axis(b)])
        batch_a, batch_b = _batch_dims(a), _batch_dims(b)
        for back, (x, y) in enumerate(zip(reversed(batch_a), reversed(batch_b))):
            if x is not None and y is not None and x != y and 1 not in (x, y):
                raise ValueError(f"matmul: batch dimension {-3 - back} of {a.describe()} has length "
                                 f"{x} and of {b.describe()} length {y}; they must match or be 1")
        pa, pb = _padded_batch_broadcastable(a, b)
        broadcastable = tuple(x and y for x, y in zip(pa, pb))
        if a.ndim > 1:
            broadcastable += (a.broadcastable[-2],)
        if b.ndim > 1:
            broadcastable += (b.broadcastable[-1],)
        return Apply(self, [a, b], [TensorType(upcast(a.dtype, b.dtype), broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b = inputs
        try:
            result = np.matmul(a, b)
        except ValueError:
            raise _mismatch("matmul", node, a, b, a.ndim - 1, _dot_axis(b),
                            "; the batch dimensions must match or be 1") from None
        output_storage[0][0] = _as_output(result, node)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        a, b = node.inputs
        sa, sb = list(input_shapes[0]), list(input_shapes[1])
        batch_a = sa[:-2] if a.ndim > 1 else []
        batch_b = sb[:-2] if b.ndim > 1 else []
        pa, pb = _padded_batch_broadcastable(a, b)
        n = len(pa)
        batch_a = [1] * (n - len(batch_a)) + batch_a
        batch_b = [1] * (n - len(batch_b)) + batch_b
        out = []
        for x, y, bx, by in zip(batch_a, batch_b, pa, pb):
            if bx:
                out.append(y)
            elif by:
                out.append(x)
            else:
                out.append(_math.maximum(x, y))
        if a.ndim > 1:
            out.append(sa[-2])
        if b.ndim > 1:
            out.append(sb[-1])
        return [tuple(out)]


class TensorDot(Op):
    """numpy.tensordot: sum products over ``axes`` = ((axes of a), (axes of b));
    the output has a's remaining axes, then b's."""

    __props__ = ("axes",)

    def __init__(self, axes: tuple[Sequence[int], Sequence[int]]):
        self.axes = (tuple(int(i) for i in axes[0]), tuple(int(i) for i in axes[1]))

    def make_node(self, a: Any, b: Any) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        a_axes, b_axes = self.axes
        _check_axes("tensordot", a, a_axes, 0)
        _check_axes("tensordot", b, b_axes, 0)
        _check_contraction("tensordot", a, b, a_axes, b_axes)
        broadcastable = _free(a.broadcastable, a_axes) + _free(b.broadcastable, b_axes)
        return Apply(self, [a, b], [TensorType(upcast(a.dtype, b.dtype), broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b = inputs
        try:
            result = np.tensordot(a, b, self.axes)
        except ValueError:
            raise _mismatch("tensordot", node, a, b, *self.axes) from None
        output_storage[0][0] = _as_output(result, node)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        a, b = input_shapes
        return [_free(tuple(a), self.axes[0]) + _free(tuple(b), self.axes[1])]


class BatchedTensordot(Op):
    """For each ``i`` along axis 0 (the batch), ``tensordot(a[i], b[i])`` over
    ``axes`` = ((axes of a), (axes of b)), counted in the full tensors (never 0)."""

    __props__ = ("axes",)

    def __init__(self, axes: tuple[Sequence[int], Sequence[int]]):
        self.axes = (tuple(int(i) for i in axes[0]), tuple(int(i) for i in axes[1]))

    def make_node(self, a: Any, b: Any) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        for x in (a, b):
            if x.ndim < 2:
                raise TypeError(f"batched_tensordot: {x.describe()} is {x.ndim}-d; each input "
                                "needs a batch axis and at least one more")
        _check_axes("batched_tensordot", a, self.axes[0], 1)
        _check_axes("batched_tensordot", b, self.axes[1], 1)
        _check_contraction("batched_tensordot", a, b, (0,) + self.axes[0], (0,) + self.axes[1])
        broadcastable = ((a.broadcastable[0] or b.broadcastable[0],)
                         + _free(a.broadcastable, (0,) + self.axes[0])
                         + _free(b.broadcastable, (0,) + self.axes[1]))
        return Apply(self, [a, b], [TensorType(upcast(a.dtype, b.dtype), broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b = inputs
        a_axes, b_axes = self.axes
        if a.shape[0] != b.shape[0] or any(a.shape[i] != b.shape[j] for i, j in zip(a_axes, b_axes)):
            raise _mismatch("batched_tensordot", node, a, b, (0,) + a_axes, (0,) + b_axes)
        if a.ndim == 3 and b.ndim == 3 and self.axes == ((2,), (1,)):
            result = np.matmul(a, b)
        else:
            result = np.einsum(self._subscripts(a.ndim, b.ndim), a, b)
        output_storage[0][0] = _as_output(result, node)

    def _subscripts(self, a_ndim: int, b_ndim: int) -> str:
        letters = iter(string.ascii_letters[1:])
        shared = {i: next(letters) for i in self.axes[0]}
        a_sub = "a" + "".join(shared.get(i) or next(letters) for i in range(1, a_ndim))
        by_b = dict(zip(self.axes[1], (shared[i] for i in self.axes[0])))
        b_sub = "a" + "".join(by_b.get(i) or next(letters) for i in range(1, b_ndim))
        out = "a" + "".join(c for i, c in enumerate(a_sub) if i and i not in self.axes[0]) \
            + "".join(c for i, c in enumerate(b_sub) if i and i not in self.axes[1])
        return f"{a_sub},{b_sub}->{out}"

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        a, b = input_shapes
        batch = b[0] if node.inputs[0].broadcastable[0] else a[0]
        return [(batch,) + _free(tuple(a), (0,) + self.axes[0]) + _free(tuple(b), (0,) + self.axes[1])]


# ----------------------------------------------------------------- functions
def dot(a: Any, b: Any) -> Variable:
    """numpy.dot: scalars multiply; otherwise the last axis of ``a`` meets the
    second-to-last of ``b`` (its only axis when ``b`` is a vector). A sparse operand
    (arignote.sparse) makes it ``structured_dot``, as Theano's ``theano.dot`` did."""
    if getattr(a, "__dot__", None) is not None:
        return a.__dot__(b)
    if getattr(b, "__rdot__", None) is not None:
        return b.__rdot__(a)
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return _math.mul(a, b)
    return Dot()(a, b)


def matmul(a: Any, b: Any) -> Variable:
    """numpy.matmul (the ``@`` operator): batched matrix products with broadcasting."""
    return MatMul()(a, b)


def tensordot(a: Any, b: Any, axes: int | Sequence = 2) -> Variable:
    """numpy.tensordot: ``axes`` is a count (a's last ``axes`` axes against b's first)
    or a pair of axis lists."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    return TensorDot(_normalize_axes("tensordot", a, b, axes, 0))(a, b)


def outer(x: Any, y: Any) -> Variable:
    """numpy.outer: every product of an element of ``x`` with one of ``y`` (inputs flattened)."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    if x.ndim != 1:
        x = _shape.flatten(x)
    if y.ndim != 1:
        y = _shape.flatten(y)
    return Dot()(x.dimshuffle(0, "x"), y.dimshuffle("x", 0))


def batched_dot(a: Any, b: Any) -> Variable:
    """``dot(a[i], b[i])`` for every ``i`` along the first (batch) axis."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        raise TypeError(f"batched_dot: {a.describe()} ({a.ndim}-d) and {b.describe()} "
                        f"({b.ndim}-d) both need a batch axis")
    if a.ndim == 1:
        return _math.mul(_shape.shape_padright(a, b.ndim - 1), b)
    if b.ndim == 1:
        return _math.mul(a, _shape.shape_padright(b, a.ndim - 1))
    return BatchedTensordot(((a.ndim - 1,), (max(1, b.ndim - 2),)))(a, b)


def batched_tensordot(a: Any, b: Any, axes: int | Sequence = 2) -> Variable:
    """``tensordot(a[i], b[i])`` for every ``i`` along the first axis. ``axes`` is a
    count (a's last ``axes`` against b's first after the batch) or a pair of axis
    lists counted in the full tensors."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    return BatchedTensordot(_normalize_axes("batched_tensordot", a, b, axes, 1))(a, b)


# ------------------------------------------------------------------ helpers
def _dot_axis(b: Variable) -> int:
    return b.ndim - 2 if b.ndim > 1 else 0


def _known_length(x: Variable, dim: int) -> int | None:
    if isinstance(x, Constant):
        return x.data.shape[dim]
    return 1 if x.broadcastable[dim] else None


def _batch_dims(x: Variable) -> list:
    return [_known_length(x, d) for d in range(x.ndim - 2)]


def _padded_batch_broadcastable(a: Variable, b: Variable) -> tuple[tuple, tuple]:
    ba = a.broadcastable[:-2] if a.ndim > 1 else ()
    bb = b.broadcastable[:-2] if b.ndim > 1 else ()
    n = max(len(ba), len(bb))
    return (True,) * (n - len(ba)) + ba, (True,) * (n - len(bb)) + bb


def _check_contraction(what: str, a: Variable, b: Variable, a_axes: Sequence[int],
                       b_axes: Sequence[int]) -> None:
    for i, j in zip(a_axes, b_axes):
        la, lb = _known_length(a, i), _known_length(b, j)
        if la is not None and lb is not None and la != lb:
            raise ValueError(f"{what}: axis {i} of {a.describe()} has length {la} but axis {j} of "
                             f"{b.describe()} has length {lb}; the summed axes must match")


def _check_axes(what: str, x: Variable, axes: Sequence[int], first: int) -> None:
    for axis in axes:
        if not first <= axis < x.ndim:
            raise np.exceptions.AxisError(f"{what}: axis {axis} is not an axis of {x.describe()} "
                                          f"({x.ndim}-d){' other than the batch axis 0' * first}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{what}: axes {tuple(axes)} of {x.describe()} repeat an axis; name each once")


def _normalize_axes(what: str, a: Variable, b: Variable, axes: Any, first: int) -> tuple:
    """``axes`` (a count, or a pair of ints or int lists; numpy arrays too, as numpy takes) as
    two tuples of axes."""
    if isinstance(axes, np.ndarray):
        axes = axes.tolist()
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > a.ndim - first or n > b.ndim - first:
            raise ValueError(f"{what}: cannot sum over {n} axes of {a.describe()} ({a.ndim}-d) "
                             f"and {b.describe()} ({b.ndim}-d): give a count from 0 to "
                             f"{min(a.ndim, b.ndim) - first}")
        return tuple(range(a.ndim - n, a.ndim)), tuple(range(first, first + n))
    if not isinstance(axes, (list, tuple)):
        raise TypeError(f"{what}: axes must be an int or a pair of axis lists, got {axes!r}")
    if len(axes) != 2:
        raise ValueError(f"{what}: axes {axes!r} has {len(axes)} entries; give an int or a pair "
                         "(axes of the first input, axes of the second)")
    pair = [tuple(x) if isinstance(x, (list, tuple)) else (x,) for x in axes]
    if len(pair[0]) != len(pair[1]):
        raise ValueError(f"{what}: axes {axes!r} name {len(pair[0])} axes of the first input but "
                         f"{len(pair[1])} of the second; they are summed in pairs")
    out = []
    for x, items in zip((a, b), pair):
        fixed = []
        for item in items:
            if not isinstance(item, (int, np.integer)) or not -x.ndim <= item < x.ndim:
                raise np.exceptions.AxisError(f"{what}: {item!r} is not an axis of {x.describe()} "
                                              f"({x.ndim}-d)")
            fixed.append(int(item) % x.ndim)
        out.append(tuple(fixed))
    return tuple(out)


def _free(items: tuple, axes: Sequence[int]) -> tuple:
    return tuple(v for i, v in enumerate(items) if i not in axes)


def _as_output(result: Any, node: Apply) -> np.ndarray:
    dtype = node.outputs[0].type.numpy_dtype
    if type(result) is np.ndarray and result.dtype == dtype:
        return result
    return np.asarray(result, dtype=dtype)


def _mismatch(what: str, node: Apply, a: np.ndarray, b: np.ndarray, a_axes: Any, b_axes: Any,
              extra: str = "") -> ValueError:
    return ValueError(f"{what}: {node.inputs[0].describe()} has shape {a.shape} and "
                      f"{node.inputs[1].describe()} has shape {b.shape}; axes {a_axes} of the first "
                      f"must have the lengths of axes {b_axes} of the second{extra}")


from arignote.tensor import shape as _shape  # noqa: E402
