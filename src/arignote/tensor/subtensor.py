"""Indexing: ``x[index]``, ``set_subtensor`` and ``inc_subtensor``, with numpy's semantics.

An index is parsed once, when the graph is built, into an ``idx_list`` (part
of the op's identity, so equal indexings merge) and the symbolic inputs it
needs. Entries of ``idx_list``:

* ``None`` - a new axis of length 1;
* an ``int`` - a constant integer index, or ``SCALAR`` - the next input, an
  integer scalar;
* an ``IndexSlice(start, stop, step)`` whose fields are ``None``, ints or ``SCALAR``;
* ``ARRAY`` - the next input, an integer or boolean array (advanced indexing).

Basic indexing (no arrays) is ``Subtensor``, whose output is a view of ``x``.
Advanced indexing copies: ``AdvancedSubtensor1`` for the common ``x[int_vector]``,
``AdvancedSubtensor`` for the rest. The ``*IncSubtensor`` ops return a new
array: they copy ``x`` and write into the copy (an in-place variant is the
in-place rewrite's job, once the destroy handler proves ``x`` is free).
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from arignote.graph.basic import Apply, Constant, Op, Variable
from arignote.scalar.dtypes import INTEGER, upcast
from arignote.tensor import math as _math
from arignote.tensor import reduction as _reduction
from arignote.tensor.shape import Shape, shape_i
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["Subtensor", "IncSubtensor", "AdvancedSubtensor1", "AdvancedIncSubtensor1",
           "AdvancedSubtensor", "AdvancedIncSubtensor", "IndexSlice", "getitem",
           "set_subtensor", "inc_subtensor"]

SCALAR = "?"
ARRAY = "[]"


class IndexSlice(NamedTuple):
    """A slice in an ``idx_list`` (a tuple, so ops that hold it stay hashable)."""

    start: Any
    stop: Any
    step: Any

    def __str__(self) -> str:
        text = ":".join("" if v is None else str(v) for v in self[:2])
        return text if self.step is None else f"{text}:{self.step}"


_FULL = IndexSlice(None, None, None)


# ----------------------------------------------------------------------- parsing
def getitem(x: Any, index: Any) -> Variable:
    """``x[index]``: numpy's basic, integer-array and boolean-mask indexing."""
    x = as_tensor_variable(x)
    idx_list, entries = _parse(x, index)
    if not idx_list:
        return x
    if ARRAY not in idx_list:
        if (len(idx_list) == 1 and isinstance(idx_list[0], int) and x.owner is not None
                and isinstance(x.owner.op, Shape)):
            return _shape_entry(x.owner.inputs[0], idx_list[0])
        return Subtensor(idx_list)(x, *entries)
    if idx_list == (ARRAY,) and entries[0].ndim == 1 and entries[0].dtype in INTEGER:
        return AdvancedSubtensor1()(x, entries[0])
    return AdvancedSubtensor(idx_list)(x, *entries)


def _shape_entry(base: Variable, i: int) -> Variable:
    """``base.shape[i]`` read directly (``Shape_i``), which shape reasoning understands."""
    if not -base.ndim <= i < base.ndim:
        raise IndexError(f"index {i} is out of range for the shape of {base.describe()}, which has "
                         f"{base.ndim} dimensions")
    return shape_i(base, i)


def _parse(x: Variable, index: Any) -> tuple[tuple, list[Variable]]:
    items = list(index) if isinstance(index, tuple) else [index]
    normal = [_normalize(item, x) for item in items]
    used = sum(_dims_consumed(item) for item in normal if item is not Ellipsis)
    if normal.count(Ellipsis) > 1:
        raise IndexError(f"an index of {x.describe()} may hold only one Ellipsis (...)")
    if used > x.ndim:
        raise IndexError(f"too many indices for {x.describe()}: it has {x.ndim} dimensions but "
                         f"the index {_show(items)} uses {used}")
    if Ellipsis in normal:
        at = normal.index(Ellipsis)
        normal[at:at + 1] = [slice(None)] * (x.ndim - used)
    while normal and isinstance(normal[-1], slice) and normal[-1] == slice(None):
        normal.pop()
    idx_list: list[Any] = []
    entries: list[Variable] = []
    for item in normal:
        if isinstance(item, slice):
            fields = []
            for value in (item.start, item.stop, item.step):
                if isinstance(value, Variable):
                    entries.append(value)
                    value = SCALAR
                fields.append(value)
            idx_list.append(IndexSlice(*fields))
        elif isinstance(item, Variable):
            entries.append(item)
            idx_list.append(SCALAR if item.ndim == 0 else ARRAY)
        else:
            idx_list.append(item)
    _check_constant_indices(x, idx_list)
    return tuple(idx_list), entries


def _normalize(item: Any, x: Variable) -> Any:
    """One index item as None, Ellipsis, an int, a slice of ints/scalars, or a Variable."""
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, slice):
        if item.step is not None and _static_int(item.step) == 0:
            raise ValueError(f"slice step of {x.describe()}[{_show([item])}] cannot be zero")
        return slice(*(_scalar_index(v, x, "slice bound") for v in (item.start, item.stop, item.step)))
    if isinstance(item, (bool, np.bool_)):
        raise TypeError(f"indexing {x.describe()} with the boolean {item!r} is not supported: "
                        "use a boolean array of x's shape as a mask, or None for a new axis")
    if isinstance(item, (int, np.integer)):
        return int(item)
    if isinstance(item, Variable):
        var = as_tensor_variable(item)
        if var.ndim == 0:
            return _scalar_index(var, x, "index")
        if var.dtype not in INTEGER and var.dtype != "bool":
            raise TypeError(f"index arrays of {x.describe()} must be integer or boolean, got "
                            f"{var.describe()} ({var.type.describe()}): cast it with "
                            "tensor.cast(i, 'int64')")
        return var
    if isinstance(item, (list, tuple, np.ndarray)):
        try:
            data = np.asarray(item)
        except (ValueError, TypeError):
            data = None
        if data is None or data.dtype == object:
            return _normalize(as_tensor_variable(list(item)), x)
        if data.size == 0 and data.dtype.kind == "f":
            data = data.astype("int64")
        if data.dtype.kind not in "iub":
            raise TypeError(f"index arrays of {x.describe()} must be integer or boolean, got "
                            f"{data.dtype} values {_show([item])}")
        if data.ndim == 0:
            return int(data)
        return constant(data.astype("int64") if data.dtype.kind in "iu" else data)
    raise TypeError(f"cannot index {x.describe()} with {type(item).__name__} {item!r}: use ints, "
                    "slices, None, ..., integer or boolean arrays, or symbolic integer scalars")


def _scalar_index(value: Any, x: Variable, what: str) -> Any:
    if value is None or (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))):
        return None if value is None else int(value)
    if isinstance(value, Variable):
        var = as_tensor_variable(value)
        if var.ndim == 0 and var.dtype in INTEGER:
            # A constant goes into the idx_list, where equal indexings merge and checks see it.
            return int(var.data) if isinstance(var, Constant) else var
        raise TypeError(f"{what}s of {x.describe()} must be integer scalars, got {var.describe()} "
                        f"({var.type.describe()}): cast it with tensor.cast(i, 'int64')")
    raise TypeError(f"{what}s of {x.describe()} must be ints or symbolic integer scalars, got "
                    f"{type(value).__name__} {value!r}")


def _dims_consumed(item: Any) -> int:
    if item is None:
        return 0
    if isinstance(item, Variable) and item.ndim > 0 and item.dtype == "bool":
        return item.ndim
    return 1


def _check_constant_indices(x: Variable, idx_list: Sequence) -> None:
    """A constant index into a dimension known to have length 1 can be checked now."""
    dim = 0
    for item in idx_list:
        if item == ARRAY:
            return
        if isinstance(item, int) and x.broadcastable[dim] and item not in (0, -1):
            raise IndexError(f"index {item} is out of range for dimension {dim} of {x.describe()}, "
                             f"which has length 1 ({x.type.describe()})")
        dim += 0 if item is None else 1


def _static_int(value: Any) -> int | None:
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, Constant):
        return int(value.data)
    return None


def _show(items: Sequence) -> str:
    def one(item: Any) -> str:
        if isinstance(item, slice):
            text = ":".join("" if v is None else str(v) for v in (item.start, item.stop))
            return text if item.step is None else f"{text}:{item.step}"
        return "..." if item is Ellipsis else str(item)
    return ", ".join(one(i) for i in items)


# ---------------------------------------------------------------- the index layout
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


def _indexed_type(x: Variable, idx_list: Sequence, entries: Sequence[Variable]) -> TensorType:
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


def _indexed_shape(x: Variable, x_shape: Sequence, idx_list: Sequence, entries: Sequence[Variable],
                   entry_shapes: Sequence) -> tuple:
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
    def apply(a: Any, b: Any) -> Any:
        if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
            return py(int(a), int(b))
        return sym(_int64(a), _int64(b))
    return apply


_add = _arith(lambda a, b: a + b, _math.add)
_sub = _arith(lambda a, b: a - b, _math.sub)
_floordiv = _arith(lambda a, b: a // b, _math.int_div)
_maximum = _arith(max, _math.maximum)
_minimum = _arith(min, _math.minimum)


def _neg(value: Any) -> Any:
    return -int(value) if isinstance(value, (int, np.integer)) else _math.neg(_int64(value))


# ------------------------------------------------------------- run-time indices
def _numpy_index(idx_list: Sequence, values: Sequence) -> tuple:
    it = iter(values)
    index = []
    for item in idx_list:
        if isinstance(item, IndexSlice):
            index.append(slice(*(int(next(it)) if v == SCALAR else v for v in item)))
        elif item == SCALAR:
            index.append(int(next(it)))
        elif item == ARRAY:
            index.append(next(it))
        else:
            index.append(item)
    return tuple(index)


def _describe_index(index: tuple) -> str:
    def one(value: Any) -> str:
        if isinstance(value, slice):
            return _show([value])
        if isinstance(value, np.ndarray):
            return f"<{value.dtype} array of shape {value.shape}>"
        return "None" if value is None else str(value)
    return ", ".join(one(v) for v in index)


def _index_error(node: Apply, x: np.ndarray, index: tuple, err: Exception) -> Exception:
    return type(err)(f"{node.inputs[0].describe()}[{_describe_index(index)}] with "
                     f"{node.inputs[0].describe()} of shape {x.shape}: {err}")


def _format_idx_list(idx_list: Sequence) -> str:
    return ", ".join(":" if item == _FULL else "None" if item is None else str(item) for item in idx_list)


# --------------------------------------------------------------------- the ops
class _IndexOp(Op):
    """What the indexing ops share: the ``idx_list`` and its checks."""

    __props__ = ("idx_list",)

    def __init__(self, idx_list: Sequence):
        self.idx_list = tuple(idx_list)

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{_format_idx_list(self.idx_list)}}}"

    def _entries(self, entries: Sequence[Any]) -> list[Variable]:
        expected = sum(v == SCALAR for item in self.idx_list
                       for v in (item if isinstance(item, IndexSlice) else (item,)))
        expected += sum(item == ARRAY for item in self.idx_list)
        if len(entries) != expected:
            raise TypeError(f"{self} takes {expected} index inputs, got {len(entries)}")
        return [as_tensor_variable(e) for e in entries]


class Subtensor(_IndexOp):
    """Basic indexing (ints, slices, new axes); the output is a view of ``x``."""

    view_map = {0: [0]}

    def make_node(self, x: Any, *entries: Any) -> Apply:
        x = as_tensor_variable(x)
        entries = self._entries(entries)
        if ARRAY in self.idx_list:
            raise TypeError(f"{self} cannot take index arrays; use AdvancedSubtensor")
        return Apply(self, [x] + entries, [_indexed_type(x, self.idx_list, entries)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        index = _numpy_index(self.idx_list, inputs[1:])
        try:
            # The trailing Ellipsis makes an all-integer index give a 0-d view, not a scalar.
            output_storage[0][0] = x[index + (Ellipsis,)]
        except IndexError as err:
            raise _index_error(node, x, index, err) from None

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        x, *entries = node.inputs
        return [_indexed_shape(x, input_shapes[0], self.idx_list, entries, input_shapes[1:])]


class AdvancedSubtensor(_IndexOp):
    """Indexing with integer or boolean arrays mixed with anything else; copies."""

    def make_node(self, x: Any, *entries: Any) -> Apply:
        x = as_tensor_variable(x)
        entries = self._entries(entries)
        return Apply(self, [x] + entries, [_indexed_type(x, self.idx_list, entries)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        index = _numpy_index(self.idx_list, inputs[1:])
        try:
            output_storage[0][0] = x[index]
        except IndexError as err:
            raise _index_error(node, x, index, err) from None

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        x, *entries = node.inputs
        return [_indexed_shape(x, input_shapes[0], self.idx_list, entries, input_shapes[1:])]


class AdvancedSubtensor1(Op):
    """``x[ilist]`` for an integer vector ``ilist`` on the first axis (``numpy.take``)."""

    def make_node(self, x: Any, ilist: Any) -> Apply:
        x = as_tensor_variable(x)
        ilist = as_tensor_variable(ilist)
        if x.ndim == 0:
            raise IndexError(f"cannot index the scalar {x.describe()} with an array")
        if ilist.ndim != 1 or ilist.dtype not in INTEGER:
            raise TypeError(f"AdvancedSubtensor1 takes an integer vector of indices, got "
                            f"{ilist.describe()} ({ilist.type.describe()})")
        return Apply(self, [x, ilist], [TensorType(x.dtype, (False,) + x.broadcastable[1:])()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, ilist = inputs
        try:
            output_storage[0][0] = x.take(ilist, axis=0)
        except IndexError as err:
            raise _index_error(node, x, (ilist,), err) from None

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        x_shape, ilist_shape = input_shapes
        return [(ilist_shape[0],) + tuple(x_shape[1:])]


# ------------------------------------------------------------ set / increment
class _IncOp(Op):
    """What the set/increment ops share: copy ``x``, then write ``y`` at the index."""

    def _fresh_copy(self, x: np.ndarray, cell: list) -> np.ndarray:
        out = cell[0]
        if out is not None and out.shape == x.shape and out.dtype == x.dtype and out is not x:
            np.copyto(out, x)
            return out
        return x.copy()

    def _write(self, node: Apply, out: np.ndarray, index: Any, y: np.ndarray,
               accumulate: bool) -> None:
        y = y.astype(out.dtype, copy=False)
        try:
            if self.set_instead_of_inc:
                out[index] = y
            elif accumulate:
                np.add.at(out, index, y)
            else:
                out[index] += y
        except (IndexError, ValueError) as err:
            shown = index if isinstance(index, tuple) else (index,)
            raise _index_error(node, out, shown, err) from None

    def __str__(self) -> str:
        what = "Set" if self.set_instead_of_inc else "Inc"
        index = _format_idx_list(getattr(self, "idx_list", (ARRAY,)))
        return f"{type(self).__name__}{{{what};{index}}}"


class _IndexedIncOp(_IncOp, _IndexOp):
    """Set or increment at an ``idx_list`` index; inputs are ``x``, ``y``, then the entries."""

    __props__ = ("idx_list", "set_instead_of_inc")
    accumulate = False

    def __init__(self, idx_list: Sequence, set_instead_of_inc: bool = False):
        super().__init__(idx_list)
        self.set_instead_of_inc = bool(set_instead_of_inc)

    def make_node(self, x: Any, y: Any, *entries: Any) -> Apply:
        x = as_tensor_variable(x)
        entries = self._entries(entries)
        y = _value_for(x, _indexed_type(x, self.idx_list, entries), y, self.set_instead_of_inc)
        return Apply(self, [x, y] + entries, [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, y = inputs[:2]
        out = self._fresh_copy(x, output_storage[0])
        index = _numpy_index(self.idx_list, inputs[2:])
        self._write(node, out, index, y, accumulate=self.accumulate)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class IncSubtensor(_IndexedIncOp):
    """``x`` with ``y`` written (``set_instead_of_inc``) or added at a basic index."""

    def make_node(self, x: Any, y: Any, *entries: Any) -> Apply:
        if ARRAY in self.idx_list:
            raise TypeError(f"{self} cannot take index arrays; use AdvancedIncSubtensor")
        return super().make_node(x, y, *entries)


class AdvancedIncSubtensor(_IndexedIncOp):
    """Set or add at an advanced index; repeated indices accumulate (``numpy.add.at``)."""

    accumulate = True


class AdvancedIncSubtensor1(_IncOp):
    """Set or add rows ``ilist`` of ``x``; repeated indices accumulate."""

    __props__ = ("set_instead_of_inc",)

    def __init__(self, set_instead_of_inc: bool = False):
        self.set_instead_of_inc = bool(set_instead_of_inc)

    def make_node(self, x: Any, y: Any, ilist: Any) -> Apply:
        x = as_tensor_variable(x)
        indexed = AdvancedSubtensor1().make_node(x, ilist)
        y = _value_for(x, indexed.outputs[0].type, y, self.set_instead_of_inc)
        return Apply(self, [x, y, indexed.inputs[1]], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, y, ilist = inputs
        out = self._fresh_copy(x, output_storage[0])
        self._write(node, out, ilist, y, accumulate=True)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def _value_for(x: Variable, target: TensorType, y: Any, set_: bool) -> Variable:
    """``y`` checked as a value to write into ``x[idx]`` (of type ``target``)."""
    what = "set_subtensor" if set_ else "inc_subtensor"
    if isinstance(y, Variable):
        y = as_tensor_variable(y)
        if upcast(x.dtype, y.dtype) != x.dtype:
            raise TypeError(f"{what}: {x.describe()} is {x.dtype} but the value {y.describe()} is "
                            f"{y.dtype}, which would lose precision: cast it with "
                            f"tensor.cast(y, {x.dtype!r})")
    else:
        data = np.asarray(y)
        converted = data.astype(x.dtype) if data.dtype != object else None
        if converted is None or not np.array_equal(converted, data, equal_nan=data.dtype.kind in "fc"):
            raise TypeError(f"{what}: the value {y!r} does not fit {x.describe()}'s dtype {x.dtype}")
        y = constant(converted)
    if y.ndim > target.ndim:
        raise TypeError(f"{what}: the value {y.describe()} has {y.ndim} dimensions but the indexed "
                        f"part of {x.describe()} has {target.ndim}: the value must broadcast to it")
    return y


def set_subtensor(x: Any, y: Any) -> Variable:
    """A copy of ``x``'s base tensor with ``y`` written at the index: ``set_subtensor(a[1:], y)``.

    ``x`` is the indexed expression; the result has the shape of the tensor
    that was indexed, and that tensor is not modified.
    """
    return _inc_or_set(x, y, set_=True)


def inc_subtensor(x: Any, y: Any) -> Variable:
    """A copy of the indexed tensor with ``y`` added at the index: ``inc_subtensor(a[idx], y)``.

    With integer-array indices, an index that repeats adds once per occurrence.
    """
    return _inc_or_set(x, y, set_=False)


def _inc_or_set(indexed: Any, y: Any, set_: bool) -> Variable:
    what = "set_subtensor" if set_ else "inc_subtensor"
    node = getattr(indexed, "owner", None)
    if node is None or not isinstance(node.op, (Subtensor, AdvancedSubtensor, AdvancedSubtensor1)):
        raise TypeError(f"{what} expects an indexed expression such as {what}(x[1:3], y), got "
                        f"{getattr(indexed, 'describe', lambda: repr(indexed))()}: index the "
                        "tensor you want to update")
    op = node.op
    if isinstance(op, AdvancedSubtensor1):
        return AdvancedIncSubtensor1(set_)(node.inputs[0], y, node.inputs[1])
    inc_op = (IncSubtensor if isinstance(op, Subtensor) else AdvancedIncSubtensor)(op.idx_list, set_)
    return inc_op(node.inputs[0], y, *node.inputs[1:])
