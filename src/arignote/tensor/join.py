"""Putting tensors together and taking them apart: join, stack, split, repeat, roll.

The axis of each op is fixed when the graph is built (a Python int), so the
output's type is known; the lengths along it may be symbolic.
"""
from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Op, Variable
from arignote.scalar.dtypes import DISCRETE, upcast
from arignote.tensor import math as _math
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Join", "MakeVector", "Split", "Repeat", "Roll", "join", "concatenate", "stack", "split",
           "repeat", "roll", "make_vector"]


class Join(Op):
    """Concatenate tensors of equal rank along an axis (numpy.concatenate).

    Theano's signature: the axis is the first *input*, ``Join()(axis, *tensors)``,
    so it may be symbolic. A constant axis fixes the output's broadcastable
    pattern; a symbolic one leaves every dimension non-broadcastable. ``view=k``
    makes the output a view of tensor ``k`` when all the others are empty along
    the axis (then no copy is made).
    """

    __props__ = ("view",)

    def __init__(self, view: int = -1):
        self.view = int(view)
        if self.view != -1:
            self.view_map = {0: [1 + self.view]}

    def make_node(self, axis: Any, *tensors: Any) -> Apply:
        axis = as_tensor_variable(axis)
        tensors = [as_tensor_variable(t) for t in tensors]
        if axis.ndim != 0 or axis.dtype not in DISCRETE or axis.dtype == "bool":
            raise TypeError(f"join: the axis must be an int scalar, got {axis.describe()} "
                            f"({axis.type.describe()}): call Join()(axis, a, b)")
        if not tensors:
            raise ValueError("join needs at least one tensor, got none: pass them after the axis, "
                             "join(axis, a, b)")
        ndim = tensors[0].ndim
        for t in tensors:
            if t.ndim != ndim:
                raise TypeError(f"join: all tensors must have the same number of dimensions; "
                                f"{tensors[0].describe()} has {ndim} and {t.describe()} has "
                                f"{t.ndim}: use shape_padleft or reshape to match them")
        if ndim == 0:
            raise TypeError("join of 0-d tensors: there is no axis to join along; use stack to "
                            "make a vector of scalars")
        if not -1 <= self.view < len(tensors):
            raise ValueError(f"Join(view={self.view}) with {len(tensors)} tensors: view must be "
                             f"-1 or the position of one of them")
        known = _shape.static_value(axis)
        if known is None:
            broadcastable = [False] * ndim
        else:
            value = _checked_axis(int(known), ndim)
            broadcastable = [any(bs) for bs in zip(*[t.broadcastable for t in tensors])]
            broadcastable[value] = len(tensors) == 1 and tensors[0].broadcastable[value]
        dtype = upcast(*[t.dtype for t in tensors])
        return Apply(self, [axis, *tensors], [TensorType(dtype, broadcastable)()])

    def static_axis(self, node: Apply) -> int | None:
        """The non-negative join axis of ``node`` when the graph fixes it, else None."""
        known = _shape.static_value(node.inputs[0])
        return None if known is None else int(known) % node.outputs[0].ndim

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        axis, tensors = int(inputs[0]), inputs[1:]
        axis = _checked_axis(axis, node.outputs[0].ndim)
        dtype = node.outputs[0].type.numpy_dtype
        if self.view != -1 and tensors[self.view].dtype == dtype and all(
                t.shape[axis] == 0 for k, t in enumerate(tensors) if k != self.view):
            output_storage[0][0] = tensors[self.view]
            return
        try:
            result = np.concatenate(tensors, axis=axis, dtype=dtype, casting="unsafe")
        except ValueError:
            shapes = ", ".join(f"{v.describe()}: {a.shape}" for v, a in zip(node.inputs[1:], tensors))
            raise ValueError(f"join along axis {axis}: the shapes differ outside that axis "
                             f"({shapes})") from None
        output_storage[0][0] = result

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shapes = input_shapes[1:]
        axis = self.static_axis(node)
        if axis is None:
            # A symbolic axis: each entry is the sum where it is the axis, else the first's.
            ndim = node.outputs[0].ndim
            axis_var = _math.cast(node.inputs[0], "int64") % ndim
            return [tuple(_math.switch(_math.eq(axis_var, d), _sum_entries([s[d] for s in shapes]),
                                       shapes[0][d]) for d in range(ndim))]
        out = []
        for dim in range(len(shapes[0])):
            if dim == axis:
                out.append(_sum_entries([s[dim] for s in shapes]))
            elif node.outputs[0].broadcastable[dim]:
                out.append(1)
            else:
                out.append(shapes[0][dim])
        return [tuple(out)]


def _checked_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"join along axis {axis}: the tensors have {ndim} "
                                      f"dimensions; use {-ndim} <= axis < {ndim}")
    return axis % ndim


def join(axis: Any, *tensors: Any) -> Variable:
    """Concatenate ``tensors`` along ``axis`` (negative counts from the end; an int scalar
    variable chooses the axis when the function runs). One tensor is returned as it is."""
    tensors = [as_tensor_variable(t) for t in tensors]
    if not tensors:
        raise ValueError("join needs at least one tensor, got none: pass them after the axis, "
                         "join(axis, a, b)")
    if len(tensors) == 1:
        return tensors[0]
    if tensors[0].ndim == 0:
        raise TypeError("join of 0-d tensors: there is no axis to join along; use stack to "
                        "make a vector of scalars")
    if not isinstance(axis, Variable) or _shape.static_value(axis) is not None:
        axis = _static_axis(axis, tensors[0].ndim, "join")
    return Join()(axis, *tensors)


def concatenate(tensors: Sequence[Any], axis: int = 0) -> Variable:
    """numpy.concatenate: join ``tensors`` along ``axis``."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"concatenate takes a list of tensors, got {type(tensors).__name__}: "
                        "write concatenate([a, b], axis)")
    return join(axis, *tensors)


class MakeVector(Op):
    """A vector of scalars (Theano's ``tensor.opt.MakeVector``): what ``stack`` builds
    from 0-d tensors and what shape vectors are made of.

    Every input is cast up to ``dtype``; one that ``dtype`` cannot hold without
    loss is refused.
    """

    __props__ = ("dtype",)

    def __init__(self, dtype: str = "int64"):
        self.dtype = str(np.dtype(dtype))

    def make_node(self, *scalars: Any) -> Apply:
        scalars = [as_tensor_variable(s) for s in scalars]
        for s in scalars:
            if s.ndim != 0:
                raise TypeError(f"MakeVector takes scalars, got {s.describe()} ({s.type.describe()}):"
                                " use stack or join for tensors")
            if upcast(self.dtype, s.dtype) != self.dtype:
                raise TypeError(f"MakeVector({self.dtype!r}): {s.describe()} is {s.dtype}, which "
                                f"{self.dtype} cannot hold without loss; use "
                                f"MakeVector({upcast(self.dtype, s.dtype)!r})")
        scalars = [s if s.dtype == self.dtype else _math.cast(s, self.dtype) for s in scalars]
        return Apply(self, scalars, [TensorType(self.dtype, (len(scalars) == 1,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(inputs, dtype=self.dtype).reshape(len(inputs))

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(len(node.inputs),)]


def make_vector(*scalars: Any) -> Variable:
    """A vector of ``scalars`` in their common dtype."""
    scalars = [as_tensor_variable(s) for s in scalars]
    return MakeVector(upcast(*[s.dtype for s in scalars]) if scalars else "int64")(*scalars)


def stack(*tensors: Any, **kwargs: Any) -> Variable:
    """numpy.stack: ``stack(tensors, axis=0)`` joins tensors of equal shape along a new
    ``axis``; scalars make a vector (MakeVector). Theano's older ``stack(a, b, ...)``
    still works, with a DeprecationWarning."""
    unknown = set(kwargs) - {"tensors", "axis"}
    if unknown:
        raise TypeError(f"stack got unexpected keyword arguments {sorted(unknown)}: it takes "
                        "stack(tensors, axis=0)")
    if "tensors" in kwargs:
        if tensors:
            raise TypeError("stack: give the tensors once, as stack(tensors, axis)")
        tensors, axis = kwargs["tensors"], kwargs.get("axis", 0)
    elif tensors and isinstance(tensors[0], (list, tuple)):
        if len(tensors) > 2 or (len(tensors) == 2 and "axis" in kwargs):
            raise TypeError("stack takes stack(tensors, axis=0): one list and at most one axis")
        axis = tensors[1] if len(tensors) == 2 else kwargs.get("axis", 0)
        tensors = tensors[0]
    elif tensors and not kwargs:
        warnings.warn("stack(a, b, ...) is deprecated (as in Theano): write stack([a, b, ...], "
                      "axis=0)", DeprecationWarning, stacklevel=2)
        axis = 0
    else:
        raise TypeError("stack takes a list of tensors: write stack([a, b], axis)")
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
    if ndim == 0:
        return make_vector(*tensors)
    return join(axis, *[_shape.shape_padaxis(t, axis) for t in tensors])


class Split(Op):
    """Cut ``x`` along ``axis`` into ``len_splits`` pieces of the lengths in ``splits``.

    Theano's signature: ``Split(len_splits)(x, axis, splits)``; the axis may be an
    int scalar variable. The pieces are views of ``x``.
    """

    __props__ = ("len_splits",)

    def __init__(self, len_splits: int):
        self.len_splits = int(len_splits)
        self.view_map = {k: [0] for k in range(self.len_splits)}

    def make_node(self, x: Any, axis: Any, splits: Any) -> Apply:
        x = as_tensor_variable(x)
        axis = as_tensor_variable(axis)
        if axis.ndim != 0 or axis.dtype not in DISCRETE or axis.dtype == "bool":
            raise TypeError(f"split of {x.describe()}: the axis must be an int scalar, got "
                            f"{axis.describe()} ({axis.type.describe()})")
        splits = _shape.as_shape_vector(splits, "split")
        length = _shape.vector_length(splits)
        if length is not None and length != self.len_splits:
            raise ValueError(f"split of {x.describe()}: {length} sizes given for "
                             f"len_splits={self.len_splits}; give one size per piece")
        known = _shape.static_value(axis)
        broadcastable = [False] * x.ndim
        if known is not None:
            value = int(known)
            if not -x.ndim <= value < x.ndim:
                raise np.exceptions.AxisError(f"split along axis {value}: {x.describe()} has "
                                              f"{x.ndim} dimensions; use {-x.ndim} <= axis < {x.ndim}")
            sizes = _shape.static_value(splits)
            if sizes is not None and x.broadcastable[value % x.ndim] and sizes.sum() != 1:
                raise ValueError(f"split of {x.describe()}: its axis {value} has length 1 but the "
                                 f"sizes {tuple(sizes.tolist())} add up to {sizes.sum()}")
            broadcastable = list(x.broadcastable)
            broadcastable[value % x.ndim] = False
        outputs = [TensorType(x.dtype, broadcastable)() for _ in range(self.len_splits)]
        return Apply(self, [x, axis, splits], outputs)

    def static_axis(self, node: Apply) -> int | None:
        """The non-negative split axis of ``node`` when the graph fixes it, else None."""
        known = _shape.static_value(node.inputs[1])
        return None if known is None else int(known) % node.inputs[0].ndim

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, axis, splits = inputs
        axis = _checked_axis(int(axis), x.ndim)
        length = x.shape[axis]
        if len(splits) != self.len_splits or (splits < 0).any() or splits.sum() != length:
            raise ValueError(f"split of {node.inputs[0].describe()} (shape {x.shape}) along axis "
                             f"{axis}: the sizes {tuple(splits.tolist())} must be "
                             f"{self.len_splits} non-negative lengths adding up to {length}")
        for cell, piece in zip(output_storage, np.split(x, np.cumsum(splits[:-1]), axis=axis)):
            cell[0] = piece

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        axis = self.static_axis(node)
        out = []
        for k in range(self.len_splits):
            size = _shape.vector_entry(node.inputs[2], k)
            if axis is None:
                axis_var = _math.cast(node.inputs[1], "int64") % node.inputs[0].ndim
                out.append(tuple(_math.switch(_math.eq(axis_var, d), size, s)
                                 for d, s in enumerate(input_shapes[0])))
            else:
                out.append(_replace(input_shapes[0], axis, size))
        return out


def split(x: Any, splits_size: Any, n_splits: int, axis: Any = 0) -> list[Variable]:
    """Cut ``x`` along ``axis`` into ``n_splits`` pieces whose lengths are ``splits_size``
    (ints or an int vector); returns the list of pieces, each a view of ``x``."""
    x = as_tensor_variable(x)
    if not isinstance(axis, Variable) or _shape.static_value(axis) is not None:
        axis = _static_axis(axis, x.ndim, "split")
    outputs = Split(n_splits).build(x, axis, splits_size).outputs
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
