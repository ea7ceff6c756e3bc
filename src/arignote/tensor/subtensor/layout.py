"""What ``x[idx]`` looks like before it runs: its type, and its shape as a graph.

Both come from one layout of the index: where each output dimension comes
from (a new axis, a slice of a dimension of ``x``, the broadcast block of the
advanced indices, or an untouched dimension). ``slice_length`` is the length of
a slice along a dimension, as an int when everything is known, else as an
int64 graph following Python's slice rules, so ``infer_shape`` needs no values.
"""
from __future__ import annotations

from typing import Any, NamedTuple
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Variable
from arignote.tensor import math as _math
from arignote.tensor import reduction as _reduction
from arignote.tensor.subtensor.index import ARRAY, SCALAR, IndexSlice
from arignote.tensor.type import TensorType
from arignote.tensor.variable import constant

__all__ = ["indexed_type", "indexed_shape", "slice_length"]


class _Layout(NamedTuple):
    """Where each output dimension of ``x[idx]`` comes from.

    ``dims`` holds, per output dimension: ``("new",)``, ``("slice", item,
    x_dim, fields)`` with ``fields`` the slice's start/stop/step as ints, None
    or Variables, ``("adv", j)`` for dimension j of the broadcast advanced
    block, or ``("x", x_dim)`` for an untouched dimension. ``advanced`` lists
    the advanced entries as ``(kind, variable_or_int)``, kind in scalar/int/bool.
    """

    dims: list
    advanced: list
    adv_ndim: int


def _layout(x_ndim: int, idx_list: Sequence, entries: Sequence[Variable]) -> _Layout:
    """numpy's placement rule: the advanced block replaces the advanced items where they
    stand when they are adjacent, and goes first when other items separate them."""
    it = iter(entries)
    has_array = ARRAY in idx_list
    dims: list = []
    advanced: list = []
    adv_items: list[int] = []
    adv_at = None
    x_dim = 0
    for k, item in enumerate(idx_list):
        if item is None:
            dims.append(("new",))
            continue
        if isinstance(item, IndexSlice):
            fields = [next(it) if v == SCALAR else v for v in item]
            dims.append(("slice", item, x_dim, fields))
            x_dim += 1
            continue
        if item == ARRAY:
            var = next(it)
            kind = "bool" if var.dtype == "bool" else "int"
            x_dim += var.ndim if kind == "bool" else 1
        else:
            var = next(it) if item == SCALAR else item
            kind = "scalar"
            x_dim += 1
        if has_array:
            advanced.append((kind, var))
            if adv_at is None:
                adv_at = len(dims)
            adv_items.append(k)
    adv_ndim = max((1 if kind == "bool" else getattr(v, "ndim", 0) for kind, v in advanced), default=0)
    if advanced:
        adjacent = adv_items == list(range(adv_items[0], adv_items[-1] + 1))
        at = adv_at if adjacent else 0
        dims[at:at] = [("adv", j) for j in range(adv_ndim)]
    dims.extend(("x", d) for d in range(x_dim, x_ndim))
    return _Layout(dims, advanced, adv_ndim)


def _is_full(item: IndexSlice) -> bool:
    return item.start is None and item.stop is None and item.step in (None, 1, -1)


def indexed_type(x: Variable, idx_list: Sequence, entries: Sequence[Variable]) -> TensorType:
    """The type of ``x[idx_list]``: a dimension is broadcastable only where that is certain."""
    layout = _layout(x.ndim, idx_list, entries)
    adv = _broadcast_patterns([(False,) if kind == "bool" else getattr(v, "broadcastable", ())
                               for kind, v in layout.advanced], layout.adv_ndim)
    pattern = []
    for dim in layout.dims:
        if dim[0] == "new":
            pattern.append(True)
        elif dim[0] == "slice":
            pattern.append(x.broadcastable[dim[2]] and _is_full(dim[1]))
        elif dim[0] == "adv":
            pattern.append(adv[dim[1]])
        else:
            pattern.append(x.broadcastable[dim[1]])
    return TensorType(x.dtype, pattern)


def _broadcast_patterns(patterns: Sequence[Sequence[bool]], ndim: int) -> list[bool]:
    padded = [(True,) * (ndim - len(p)) + tuple(p) for p in patterns]
    return [all(p[j] for p in padded) for j in range(ndim)]


def indexed_shape(x: Variable, x_shape: Sequence, idx_list: Sequence, entries: Sequence[Variable],
                  entry_shapes: Sequence) -> tuple:
    """The shape of ``x[idx_list]`` from the shapes of ``x`` and the entries, for ``infer_shape``.

    A boolean mask contributes its count of True values, which only its value
    gives, so that one length is a reduction over the mask.
    """
    layout = _layout(x.ndim, idx_list, entries)
    shapes = dict(zip(map(id, entries), entry_shapes))
    adv_shapes = []
    for kind, var in layout.advanced:
        if kind == "bool":
            adv_shapes.append(((_reduction.sum(_math.cast(var, "int64"))), ))
        elif kind == "int":
            adv_shapes.append(tuple(shapes[id(var)]))
        else:
            adv_shapes.append(())
    adv = _broadcast_shapes(adv_shapes, layout.adv_ndim)
    out = []
    for dim in layout.dims:
        if dim[0] == "new":
            out.append(1)
        elif dim[0] == "slice":
            out.append(slice_length(x_shape[dim[2]], *dim[3]))
        elif dim[0] == "adv":
            out.append(adv[dim[1]])
        else:
            out.append(x_shape[dim[1]])
    return tuple(out)


def _broadcast_shapes(shapes: Sequence[tuple], ndim: int) -> list:
    """numpy's broadcast of the advanced indices' shapes, a switch where a length may be 1."""
    result = []
    for j in range(ndim):
        length: Any = 1
        for shape in shapes:
            k = j - (ndim - len(shape))
            if k < 0 or _static_int_or_none(shape[k]) == 1:
                continue
            if _static_int_or_none(length) == 1:
                length = shape[k]
            else:
                length = _math.switch(_math.eq(_int64(length), 1), _int64(shape[k]), _int64(length))
        result.append(length)
    return result


def _static_int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, np.integer)) else None


# --------------------------------------------------------------- slice lengths
def slice_length(n: Any, start: Any, stop: Any, step: Any) -> Any:
    """The length of ``x[start:stop:step]`` along a dimension of length ``n``.

    Arguments are ints, None or integer scalars; the result is an int when they
    are all ints, else an int64 scalar built with Python's slice rules.
    """
    step = 1 if step is None else step
    values = [n, start, stop, step]
    if all(v is None or isinstance(v, (int, np.integer)) for v in values):
        return len(range(*slice(start, stop, step).indices(int(n))))
    if isinstance(step, (int, np.integer)):
        return _directed_length(n, start, stop, int(step))
    step = _int64(step)
    forward = _directed_length(n, start, stop, step, forward=True)
    backward = _directed_length(n, start, stop, step, forward=False)
    return _math.switch(_math.gt(step, 0), _int64(forward), _int64(backward))


def get_canonical_form_slice(theslice: Any, length: Any) -> tuple[Any, Any]:
    """Theano's ``(canonical, direction)`` of an index into a dimension of ``length``.

    For a slice, ``canonical`` is a slice with ``0 <= start <= stop <= length`` and a
    positive step selecting the same elements, and ``direction`` is 1, or -1 when
    they must then be reversed: ``x[s] == x[canonical][::direction]``. For an integer
    index, ``canonical`` is the index made non-negative and ``direction`` is 1.
    Ints stay ints; symbolic bounds give int64 scalars.
    """
    if not isinstance(theslice, slice):
        if isinstance(theslice, (int, np.integer)) and isinstance(length, (int, np.integer)):
            return (int(theslice) + int(length) if theslice < 0 else int(theslice)), 1
        index = _int64(theslice)
        return _math.switch(_math.lt(index, 0), _add(index, length), index), 1
    start, stop, step = theslice.start, theslice.stop, 1 if theslice.step is None else theslice.step
    if all(v is None or isinstance(v, (int, np.integer)) for v in (length, start, stop, step)):
        chosen = range(*slice(start, stop, step).indices(int(length)))
        if not chosen:
            return slice(0, 0, abs(step)), 1 if step > 0 else -1
        if step > 0:
            return slice(chosen[0], chosen[-1] + 1, step), 1
        return slice(chosen[-1], chosen[0] + 1, -step), -1
    if isinstance(step, (int, np.integer)):
        low, high = _canonical_bounds(length, start, stop, int(step), step > 0)
        return slice(low, high, abs(int(step))), 1 if step > 0 else -1
    step = _int64(step)
    forward = _math.gt(step, 0)
    ahead, back = (_canonical_bounds(length, start, stop, step, f) for f in (True, False))
    low, high = (_math.switch(forward, _int64(a), _int64(b)) for a, b in zip(ahead, back))
    return (slice(low, high, _math.switch(forward, step, _neg(step))),
            _math.switch(forward, _int64(1), _int64(-1)))


def _canonical_bounds(n: Any, start: Any, stop: Any, step: Any, forward: bool) -> tuple[Any, Any]:
    """``(low, high)`` of the canonical slice when the step's sign is ``forward``."""
    count = _directed_length(n, start, stop, step, forward)
    if forward:
        first = 0 if start is None else _clamp(start, n, low=0, high=n)
    else:
        first = _sub(n, 1) if start is None else _clamp(start, n, low=-1, high=_sub(n, 1))
    last = _add(first, _mul(_sub(count, 1), step))
    low, high = (first, _add(last, 1)) if forward else (last, _add(first, 1))
    nonempty = _math.gt(_int64(count), 0)
    return _math.switch(nonempty, _int64(low), _int64(0)), _math.switch(nonempty, _int64(high), _int64(0))


def _directed_length(n: Any, start: Any, stop: Any, step: Any, forward: bool | None = None) -> Any:
    if forward is None:
        forward = step > 0
    if forward:
        first = 0 if start is None else _clamp(start, n, low=0, high=n)
        end = n if stop is None else _clamp(stop, n, low=0, high=n)
        span, stride = _sub(end, first), step
    else:
        first = _sub(n, 1) if start is None else _clamp(start, n, low=-1, high=_sub(n, 1))
        end = -1 if stop is None else _clamp(stop, n, low=-1, high=_sub(n, 1))
        span, stride = _sub(first, end), _neg(step)
    # ceil(span / stride) for a positive stride, never below 0.
    return _maximum(_neg(_floordiv(_neg(span), stride)), 0)


def _clamp(bound: Any, n: Any, low: Any, high: Any) -> Any:
    """A slice bound made absolute (negative counts from the end) and clipped to [low, high]."""
    if isinstance(bound, (int, np.integer)):
        return _maximum(_add(bound, n), low) if bound < 0 else _minimum(bound, high)
    bound = _int64(bound)
    return _math.switch(_math.lt(bound, 0), _int64(_maximum(_add(bound, n), low)),
                        _int64(_minimum(bound, high)))


def _int64(value: Any) -> Variable:
    if isinstance(value, (int, np.integer)):
        return constant(int(value), dtype="int64")
    return _math.cast(value, "int64")


def _arith(py: Any, sym: Any) -> Any:
    """An operation on Python ints while both operands are ints, so known lengths stay
    ints; int64 nodes as soon as one is symbolic."""
    def apply(a: Any, b: Any) -> Any:
        if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
            return py(int(a), int(b))
        return sym(_int64(a), _int64(b))
    return apply


_add = _arith(lambda a, b: a + b, _math.add)
_sub = _arith(lambda a, b: a - b, _math.sub)
_mul = _arith(lambda a, b: a * b, _math.mul)
_floordiv = _arith(lambda a, b: a // b, _math.int_div)
_maximum = _arith(max, _math.maximum)
_minimum = _arith(min, _math.minimum)


def _neg(value: Any) -> Any:
    return -int(value) if isinstance(value, (int, np.integer)) else _math.neg(_int64(value))

