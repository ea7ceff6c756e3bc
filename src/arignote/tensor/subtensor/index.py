"""The ``idx_list``: how an index is written down once, when the graph is built.

An index is parsed into an ``idx_list`` (part of an indexing op's identity, so
equal indexings merge) and the symbolic inputs it needs, its *entries*.
Entries of ``idx_list``:

* ``None`` - a new axis of length 1;
* an ``int`` - a constant integer index, or ``SCALAR`` - the next entry, an
  integer scalar;
* an ``IndexSlice(start, stop, step)`` whose fields are ``None``, ints or ``SCALAR``;
* ``ARRAY`` - the next entry, an integer or boolean array (advanced indexing).

At run time ``numpy_index`` puts the entries' values back in, giving the index
numpy takes.
"""
from __future__ import annotations

from typing import Any, NamedTuple
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.scalar.dtypes import INTEGER
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["SCALAR", "ARRAY", "IndexSlice", "parse_index", "numpy_index", "index_error",
           "format_idx_list"]

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


def parse_index(x: Variable, index: Any) -> tuple[tuple, list[Variable]]:
    """``(idx_list, entries)`` for ``x[index]``, with bad indices refused before any graph exists.

    The Ellipsis is expanded and trailing full slices dropped, so equal
    indexings written differently (``x[1]``, ``x[1, ...]``, ``x[1, :]``) get
    one ``idx_list`` and merge.
    """
    # A list holding slices, None or ... is a tuple of index items (numpy < 1.23 and Theano).
    as_items = isinstance(index, tuple) or (isinstance(index, list) and any(
        item is None or item is Ellipsis or isinstance(item, slice) for item in index))
    items = list(index) if as_items else [index]
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
    normal = _read_run_time_slices(normal, x)
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
        return _int64_index(item, x)
    as_slice = getattr(getattr(item, "type", None), "index_slice", None)  # a slice variable
    if as_slice is not None:
        known = as_slice(item)
        return _RunTimeSlice(item) if known is None else _normalize(known, x)
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


class _RunTimeSlice(NamedTuple):
    """A slice variable whose bounds are known only at run time, until its axis is known."""

    var: Variable


def _read_run_time_slices(items: list, x: Variable) -> list:
    """Each ``_RunTimeSlice`` as the slice of the int scalars ``SliceIndices`` reads from it on
    its axis of ``x`` (after the Ellipsis is expanded, so the axes are known)."""
    from arignote.tensor.shape import shape_i
    from arignote.tensor.type_other import SliceIndices
    out, dim = [], 0
    for item in items:
        if isinstance(item, _RunTimeSlice):
            item = slice(*SliceIndices()(item.var, shape_i(x, dim)))
        out.append(item)
        dim += _dims_consumed(item)
    return out


def _scalar_index(value: Any, x: Variable, what: str) -> Any:
    if value is None or (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))):
        return None if value is None else _int64_index(value, x)
    if isinstance(value, Variable):
        var = as_tensor_variable(value)
        if var.ndim == 0 and var.dtype in INTEGER:
            # A constant goes into the idx_list, where equal indexings merge and checks see it.
            return int(var.data) if isinstance(var, Constant) else var
        raise TypeError(f"{what}s of {x.describe()} must be integer scalars, got {var.describe()} "
                        f"({var.type.describe()}): cast it with tensor.cast(i, 'int64')")
    raise TypeError(f"{what}s of {x.describe()} must be ints or symbolic integer scalars, got "
                    f"{type(value).__name__} {value!r}")


def _int64_index(value: int, x: Variable) -> int:
    """``value`` as an index, which must fit in int64 (the indices' dtype at run time)."""
    value = int(value)
    if not _INT64.min <= value <= _INT64.max:
        raise IndexError(f"index {value} of {x.describe()} does not fit in int64 "
                         f"[{_INT64.min}, {_INT64.max}]: use a smaller index")
    return value


_INT64 = np.iinfo(np.int64)


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
    """Index items as the user wrote them, for error messages."""
    def one(item: Any) -> str:
        if isinstance(item, slice):
            return str(IndexSlice(item.start, item.stop, item.step))
        return "..." if item is Ellipsis else str(item)
    return ", ".join(one(i) for i in items)


# ------------------------------------------------------------- run-time indices
def numpy_index(idx_list: Sequence, values: Sequence) -> tuple:
    """The index numpy takes: ``idx_list`` with the entries' run-time ``values`` put in."""
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


def index_error(node: Apply, x: np.ndarray, index: tuple, err: Exception) -> Exception:
    """numpy's ``err`` (of the same type) restated with the indexed variable, its shape and the index."""
    return type(err)(f"{node.inputs[0].describe()}[{_describe_index(index)}] with "
                     f"{node.inputs[0].describe()} of shape {x.shape}: {err}")


def format_idx_list(idx_list: Sequence) -> str:
    """``idx_list`` as ops print it: ``1:3, ?, :`` (``?`` for a symbolic scalar, ``[]`` for an array)."""
    return ", ".join(":" if item == _FULL else "None" if item is None else str(item) for item in idx_list)

