"""Putting tensors together and taking them apart: join, stack, split, repeat, roll.

The axis of each op is fixed when the graph is built (a Python int), so the
output's type is known; the lengths along it may be symbolic.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Op, Variable
from arignote.scalar.dtypes import DISCRETE, upcast
from arignote.tensor import math as _math
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Join", "Split", "Repeat", "Roll", "join", "concatenate", "stack", "split", "repeat",
           "roll"]


class Join(Op):
    """Concatenate tensors of equal rank along ``axis`` (numpy.concatenate)."""

    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def make_node(self, *tensors: Any) -> Apply:
        tensors = [as_tensor_variable(t) for t in tensors]
        if not tensors:
            raise ValueError("join needs at least one tensor, got none: pass them after the axis, "
                             "join(axis, a, b)")
        ndim = tensors[0].ndim
        for t in tensors:
            if t.ndim != ndim:
                raise TypeError(f"join: all tensors must have the same number of dimensions; "
                                f"{tensors[0].describe()} has {ndim} and {t.describe()} has "
                                f"{t.ndim}: use shape_padleft or reshape to match them")
        if not 0 <= self.axis < ndim:
            raise np.exceptions.AxisError(
                f"join along axis {self.axis}: the tensors have {ndim} dimensions"
                + ("; use stack to join 0-d tensors" if ndim == 0 else ""))
        broadcastable = [any(bs) for bs in zip(*[t.broadcastable for t in tensors])]
        broadcastable[self.axis] = len(tensors) == 1 and tensors[0].broadcastable[self.axis]
        dtype = upcast(*[t.dtype for t in tensors])
        return Apply(self, tensors, [TensorType(dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        dtype = node.outputs[0].type.numpy_dtype
        try:
            result = np.concatenate(inputs, axis=self.axis, dtype=dtype, casting="unsafe")
        except ValueError:
            shapes = ", ".join(f"{v.describe()}: {a.shape}" for v, a in zip(node.inputs, inputs))
            raise ValueError(f"join along axis {self.axis}: the shapes differ outside that axis "
                             f"({shapes})") from None
        output_storage[0][0] = result

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        first = input_shapes[0]
        out = []
        for dim in range(len(first)):
            if dim == self.axis:
                out.append(_sum_entries([s[dim] for s in input_shapes]))
            elif node.outputs[0].broadcastable[dim]:
                out.append(1)
            else:
                out.append(first[dim])
        return [tuple(out)]


def join(axis: int, *tensors: Any) -> Variable:
    """Concatenate ``tensors`` along ``axis`` (negative counts from the end)."""
    tensors = [as_tensor_variable(t) for t in tensors]
    if not tensors:
        raise ValueError("join needs at least one tensor, got none: pass them after the axis, "
                         "join(axis, a, b)")
    axis = _static_axis(axis, tensors[0].ndim, "join")
    if len(tensors) == 1:
        return tensors[0]
    return Join(axis)(*tensors)


def concatenate(tensors: Sequence[Any], axis: int = 0) -> Variable:
    """numpy.concatenate: join ``tensors`` along ``axis``."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"concatenate takes a list of tensors, got {type(tensors).__name__}: "
                        "write concatenate([a, b], axis)")
    return join(axis, *tensors)


def stack(tensors: Sequence[Any], axis: int = 0) -> Variable:
    """numpy.stack: tensors of equal shape joined along a new ``axis``."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"stack takes a list of tensors, got {type(tensors).__name__}: "
                        "write stack([a, b], axis)")
    if not tensors:
        raise ValueError("stack needs at least one tensor, got an empty list: pass [a, b, ...]")
    tensors = [as_tensor_variable(t) for t in tensors]
    ndim = tensors[0].ndim
    for t in tensors:
        if t.ndim != ndim:
            raise TypeError(f"stack: all tensors must have the same number of dimensions; "
                            f"{tensors[0].describe()} has {ndim} and {t.describe()} has {t.ndim}: "
                            "stack tensors of one shape")
    axis = _static_axis(axis, ndim + 1, "stack")
    return join(axis, *[_shape.shape_padaxis(t, axis) for t in tensors])


class Split(Op):
    """Cut ``x`` along ``axis`` into ``n_splits`` pieces of the lengths in ``splits``.

    The pieces are views of ``x``.
    """

    __props__ = ("n_splits", "axis")

    def __init__(self, n_splits: int, axis: int):
        self.n_splits = int(n_splits)
        self.axis = int(axis)
        self.view_map = {k: [0] for k in range(self.n_splits)}

    def make_node(self, x: Any, splits: Any) -> Apply:
        x = as_tensor_variable(x)
        splits = _shape.as_shape_vector(splits, "split")
        if not 0 <= self.axis < x.ndim:
            raise np.exceptions.AxisError(f"split along axis {self.axis}: {x.describe()} has "
                                          f"{x.ndim} dimensions; use 0 <= axis < {x.ndim}")
        length = _shape.vector_length(splits)
        if length is not None and length != self.n_splits:
            raise ValueError(f"split of {x.describe()}: {length} sizes given for "
                             f"n_splits={self.n_splits}; give one size per piece")
        sizes = _shape.static_value(splits)
        if sizes is not None and (sizes < 0).any():
            raise ValueError(f"split of {x.describe()}: sizes {tuple(sizes.tolist())} must be >= 0")
        if sizes is not None and x.broadcastable[self.axis] and sizes.sum() != 1:
            raise ValueError(f"split of {x.describe()}: its axis {self.axis} has length 1 but the "
                             f"sizes {tuple(sizes.tolist())} add up to {sizes.sum()}")
        broadcastable = list(x.broadcastable)
        broadcastable[self.axis] = False
        outputs = [TensorType(x.dtype, broadcastable)() for _ in range(self.n_splits)]
        return Apply(self, [x, splits], outputs)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, splits = inputs
        length = x.shape[self.axis]
        if len(splits) != self.n_splits or (splits < 0).any() or splits.sum() != length:
            raise ValueError(f"split of {node.inputs[0].describe()} (shape {x.shape}) along axis "
                             f"{self.axis}: the sizes {tuple(splits.tolist())} must be "
                             f"{self.n_splits} non-negative lengths adding up to {length}")
        for cell, piece in zip(output_storage, np.split(x, np.cumsum(splits[:-1]), axis=self.axis)):
            cell[0] = piece

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = list(input_shapes[0])
        out = []
        for k in range(self.n_splits):
            shape[self.axis] = _shape.vector_entry(node.inputs[1], k)
            out.append(tuple(shape))
        return out


def split(x: Any, splits_size: Any, n_splits: int, axis: int = 0) -> list[Variable]:
    """Cut ``x`` along ``axis`` into ``n_splits`` pieces whose lengths are ``splits_size``
    (ints or an int vector); returns the list of pieces, each a view of ``x``."""
    x = as_tensor_variable(x)
    axis = _static_axis(axis, x.ndim, "split")
    outputs = Split(n_splits, axis).build(x, splits_size).outputs
    return list(outputs)


class Repeat(Op):
    """numpy.repeat: each element of ``x`` repeated ``repeats`` times along ``axis``.

    ``axis`` None repeats the flattened ``x``. ``repeats`` is an int scalar, or
    an int vector with one count per element along the axis.
    """

    __props__ = ("axis",)

    def __init__(self, axis: int | None = None):
        self.axis = None if axis is None else int(axis)

    def make_node(self, x: Any, repeats: Any) -> Apply:
        x = as_tensor_variable(x)
        repeats = as_tensor_variable(repeats)
        if repeats.dtype not in DISCRETE or repeats.dtype == "bool" or repeats.ndim > 1:
            raise TypeError(f"repeat of {x.describe()}: repeats must be an int scalar or int "
                            f"vector, got {repeats.describe()} ({repeats.type.describe()})")
        if repeats.dtype == "uint64":
            raise TypeError(f"repeat of {x.describe()}: repeats {repeats.describe()} is uint64, "
                            "which numpy.repeat cannot take: cast it to int64")
        counts = _shape.static_value(repeats)
        if counts is not None and (counts < 0).any():
            raise ValueError(f"repeat of {x.describe()}: repeats {counts.tolist()} must be >= 0")
        if self.axis is None:
            broadcastable: list[bool] = [False]
        else:
            axis = self.axis_of(x)
            broadcastable = list(x.broadcastable)
            # Repeating once keeps a broadcastable dimension broadcastable (Theano's rule).
            broadcastable[axis] = broadcastable[axis] and counts is not None and bool(np.all(counts == 1))
        return Apply(self, [x, repeats], [TensorType(x.dtype, broadcastable)()])

    def axis_of(self, x: Variable) -> int:
        """``self.axis`` as a non-negative axis of ``x`` (it may count from the end)."""
        if not -x.ndim <= self.axis < x.ndim:
            raise np.exceptions.AxisError(f"repeat along axis {self.axis}: {x.describe()} has "
                                          f"{x.ndim} dimensions; use {-x.ndim} <= axis < {x.ndim}")
        return self.axis % x.ndim

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, repeats = inputs
        try:
            output_storage[0][0] = np.asarray(np.repeat(x, repeats, axis=self.axis))
        except ValueError as err:
            along = "the flattened input" if self.axis is None else f"axis {self.axis}"
            raise ValueError(f"repeat of {node.inputs[0].describe()} (shape {x.shape}) along "
                             f"{along} with repeats of shape {repeats.shape}: {err}; repeats must "
                             "be >= 0 and, as a vector, have one count per element") from None

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        x_shape = list(input_shapes[0])
        repeats = node.inputs[1]
        counts = _shape.static_value(repeats)
        if repeats.ndim == 1:
            total = int(counts.sum()) if counts is not None else _math.cast(
                _reduction.sum(repeats), "int64")
            return [(total,)] if self.axis is None else [_replace(x_shape, self.axis, total)]
        each = int(counts) if counts is not None else _math.cast(repeats, "int64")
        if self.axis is None:
            return [(_shape.product(x_shape + [each]),)]
        return [_replace(x_shape, self.axis, _shape.product([x_shape[self.axis], each]))]


def repeat(x: Any, repeats: Any, axis: int | None = None) -> Variable:
    """numpy.repeat: repeat elements of ``x`` (flattened when ``axis`` is None)."""
    x = as_tensor_variable(x)
    if axis is not None:
        axis = _static_axis(axis, x.ndim, "repeat")
    repeats = as_tensor_variable(repeats)
    if repeats.ndim == 1 and repeats.broadcastable[0] and repeats.dtype in DISCRETE:
        repeats = repeats[0]
    if repeats.ndim != 0 or repeats.dtype not in DISCRETE or repeats.dtype in ("bool", "uint64"):
        return Repeat(axis)(x, repeats)
    counts = _shape.static_value(repeats)
    if counts is not None and counts < 0:
        raise ValueError(f"repeat of {x.describe()}: repeats {int(counts)} must be >= 0")
    # One count for every element: a broadcast along a new axis, then a reshape (no host op).
    if axis is None:
        x, axis = _shape.flatten(x), 0
    lengths = [_shape.shape_i(x, d) for d in range(x.ndim)]
    count = _math.cast(repeats, "int64")
    spread = _alloc.alloc(_shape.shape_padaxis(x, axis + 1), *lengths[:axis + 1], count,
                          *lengths[axis + 1:])
    lengths[axis] = lengths[axis] * count
    return _shape.reshape(spread, lengths, ndim=x.ndim)


class Roll(Op):
    """numpy.roll: elements shifted by ``shift`` along ``axis`` (None: the flattened array)."""

    __props__ = ("axis",)

    def __init__(self, axis: int | None = None):
        self.axis = None if axis is None else int(axis)

    def make_node(self, x: Any, shift: Any) -> Apply:
        x = as_tensor_variable(x)
        shift = as_tensor_variable(shift)
        if shift.dtype not in DISCRETE or shift.dtype == "bool" or shift.ndim != 0:
            raise TypeError(f"roll of {x.describe()}: shift must be an int scalar, got "
                            f"{shift.describe()} ({shift.type.describe()})")
        if self.axis is not None and not 0 <= self.axis < x.ndim:
            raise np.exceptions.AxisError(f"roll along axis {self.axis}: {x.describe()} has "
                                          f"{x.ndim} dimensions; use 0 <= axis < {x.ndim}")
        return Apply(self, [x, shift], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, shift = inputs
        output_storage[0][0] = np.asarray(np.roll(x, int(shift), axis=self.axis))

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [tuple(input_shapes[0])]


def roll(x: Any, shift: Any, axis: int | None = None) -> Variable:
    """numpy.roll: shift the elements of ``x`` circularly along ``axis``."""
    x = as_tensor_variable(x)
    if axis is not None:
        axis = _static_axis(axis, x.ndim, "roll")
    return Roll(axis)(x, shift)


def _static_axis(axis: Any, ndim: int, what: str) -> int:
    """A Python int axis in ``[-ndim, ndim)`` made non-negative, or a clear error."""
    value = _shape.static_value(axis) if isinstance(axis, Variable) else axis
    if value is None or np.ndim(value) != 0 or not np.issubdtype(np.asarray(value).dtype, np.integer):
        raise TypeError(f"{what}: axis must be a Python int fixed when the graph is built, got "
                        f"{axis!r}" + (f"; did you mean {what}([a, b, ...])?"
                                       if isinstance(axis, Variable) else ""))
    value = int(value)
    if not -ndim <= value < ndim:
        raise np.exceptions.AxisError(f"{what}: axis {value} is out of range for {ndim}-d "
                                      f"tensors; use {-ndim} <= axis < {ndim}")
    return value % ndim


def _sum_entries(items: list) -> Any:
    static = sum(i for i in items if isinstance(i, (int, np.integer)))
    symbolic = [i for i in items if not isinstance(i, (int, np.integer))]
    if not symbolic:
        return static
    result = _math.add(*symbolic) if len(symbolic) > 1 else symbolic[0]
    return _math.add(result, static) if static else result


def _replace(shape: list, axis: int, value: Any) -> tuple:
    shape = list(shape)
    shape[axis] = value
    return tuple(shape)


from arignote.tensor import alloc as _alloc  # noqa: E402
from arignote.tensor import reduction as _reduction  # noqa: E402
from arignote.tensor import shape as _shape  # noqa: E402
