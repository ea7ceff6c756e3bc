"""Reading at an index: ``x[index]`` and the ops it builds.

Basic indexing (ints, slices, new axes) is ``Subtensor``, whose output is a
view of ``x``. Advanced indexing copies, as numpy's does: ``AdvancedSubtensor1``
for the common ``x[int_vector]`` (``numpy.take``), ``AdvancedSubtensor`` for
every other index holding an integer or boolean array.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from arignote.graph.basic import Apply, Op, Variable
from arignote.scalar.dtypes import INTEGER
from arignote.tensor.shape import Shape, Shape_i
from arignote.tensor.subtensor.index import (ARRAY, SCALAR, IndexSlice, _FULL, format_idx_list, index_error,
                                             numpy_index, parse_index)
from arignote.tensor.subtensor.layout import indexed_shape, indexed_type
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["IndexOp", "Subtensor", "AdvancedSubtensor", "AdvancedSubtensor1", "getitem",
           "advanced_subtensor", "advanced_subtensor1"]


def getitem(x: Any, index: Any) -> Variable:
    """``x[index]``: numpy's basic, integer-array and boolean-mask indexing."""
    x = as_tensor_variable(x)
    idx_list, entries = parse_index(x, index)
    if None in idx_list and all(item is None or item == _FULL for item in idx_list):
        return _new_axes(x, idx_list)
    if ARRAY not in idx_list:  # no items (x[:], x[...]) is a node too: set_subtensor(x[:], y)
        if (len(idx_list) == 1 and isinstance(idx_list[0], int) and x.owner is not None
                and isinstance(x.owner.op, Shape)):
            return _shape_entry(x.owner.inputs[0], idx_list[0])
        return Subtensor(idx_list)(x, *entries)
    if idx_list == (ARRAY,) and entries[0].ndim == 1 and entries[0].dtype in INTEGER:
        return AdvancedSubtensor1()(x, entries[0])
    read = AdvancedBooleanSubtensor if any(e.dtype == "bool" for e in entries) else AdvancedSubtensor
    return read(idx_list)(x, *entries)


def advanced_subtensor(x: Any, *index: Any) -> Variable:
    """Theano's ``advanced_subtensor(x, *index)``: ``x[index]``."""
    return getitem(x, index)


def advanced_subtensor1(x: Any, ilist: Any) -> Variable:
    """``x[ilist]`` for an integer vector ``ilist`` indexing the first axis."""
    return AdvancedSubtensor1()(x, ilist)


def _new_axes(x: Variable, idx_list: Sequence) -> Variable:
    """``x[:, None, :]`` and the like (new axes between whole axes): a DimShuffle, as in
    Theano, which rewrites and gradients know better than a Subtensor."""
    axes = iter(range(x.ndim))
    pattern = ["x" if item is None else next(axes) for item in idx_list]
    return x.dimshuffle(*pattern, *axes)


def new_axes_index(op: Any) -> tuple | None:
    """The index (``(_FULL, None)`` for ``[:, None]``) of a DimShuffle that only adds axes, in
    order, else None: set_subtensor(x[:, None], y) updates x through it."""
    order = [axis for axis in op.new_order if axis != "x"]
    if order != list(range(len(op.input_broadcastable))) or len(order) == len(op.new_order):
        return None
    index = [None if axis == "x" else _FULL for axis in op.new_order]
    while index[-1] == _FULL:
        index.pop()
    return tuple(index)


def _shape_entry(base: Variable, i: int) -> Variable:
    """``base.shape[i]`` read directly (``Shape_i``), which shape reasoning understands.

    A broadcastable dimension stays a node too, as in Theano (not the constant 1 that
    ``shape_i`` makes): the output still depends on ``base``, so ``function([v], expr)`` does
    not call ``v`` unused; the rewrites fold it to 1.
    """
    if not -base.ndim <= i < base.ndim:
        raise IndexError(f"index {i} is out of range for the shape of {base.describe()}, which has "
                         f"{base.ndim} dimensions")
    return Shape_i(i % base.ndim)(base)


class IndexOp(Op):
    """What the ops indexed by an ``idx_list`` share: the list and the count of its entries."""

    __props__ = ("idx_list",)

    def __init__(self, idx_list: Sequence):
        self.idx_list = tuple(idx_list)

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{format_idx_list(self.idx_list)}}}"

    def _entries(self, entries: Sequence[Any]) -> list[Variable]:
        expected = sum(v == SCALAR for item in self.idx_list
                       for v in (item if isinstance(item, IndexSlice) else (item,)))
        expected += sum(item == ARRAY for item in self.idx_list)
        if len(entries) != expected:
            raise TypeError(f"{self} takes {expected} index inputs, got {len(entries)}: one per "
                            "'?' and '[]' in its index")
        return [as_tensor_variable(e) for e in entries]


class _IndexRead(IndexOp):
    """``x[idx_list]``; inputs are ``x``, then the entries."""

    def make_node(self, x: Any, *entries: Any) -> Apply:
        x = as_tensor_variable(x)
        entries = self._entries(entries)
        return Apply(self, [x] + entries, [indexed_type(x, self.idx_list, entries)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        index = numpy_index(self.idx_list, inputs[1:])
        try:
            output_storage[0][0] = x[self._key(index)]
        except IndexError as err:
            raise index_error(node, x, index, err) from None

    def _key(self, index: tuple) -> tuple:
        """The key numpy is given for ``index``."""
        return index

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        x, *entries = node.inputs
        return [indexed_shape(x, input_shapes[0], self.idx_list, entries, input_shapes[1:])]


class Subtensor(_IndexRead):
    """Basic indexing (ints, slices, new axes); the output is a view of ``x``."""

    view_map = {0: [0]}

    def make_node(self, x: Any, *entries: Any) -> Apply:
        if ARRAY in self.idx_list:
            raise TypeError(f"{self} cannot take index arrays; use AdvancedSubtensor")
        return super().make_node(x, *entries)

    def _key(self, index: tuple) -> tuple:
        # The trailing Ellipsis makes an all-integer index give a 0-d view, not a scalar.
        return index + (Ellipsis,)


class AdvancedSubtensor(_IndexRead):
    """Indexing with integer or boolean arrays mixed with anything else; copies."""


class AdvancedBooleanSubtensor(AdvancedSubtensor):
    """An AdvancedSubtensor with a boolean mask among its index arrays (Theano's class of it,
    which its programs look for in graphs)."""


class AdvancedSubtensor1(Op):
    """``x[ilist]`` for an integer vector ``ilist`` on the first axis (``numpy.take``)."""

    __props__ = ()

    def make_node(self, x: Any, ilist: Any) -> Apply:
        x = as_tensor_variable(x)
        ilist = as_tensor_variable(ilist)
        if x.ndim == 0:
            raise IndexError(f"cannot index the scalar {x.describe()} with an array: a 0-d tensor "
                             "has no axis to index")
        if ilist.ndim != 1 or ilist.dtype not in INTEGER:
            raise TypeError(f"AdvancedSubtensor1 takes an integer vector of indices, got "
                            f"{ilist.describe()} ({ilist.type.describe()}): index with x[i] for "
                            "other indices, or cast them with tensor.cast(i, 'int64')")
        return Apply(self, [x, ilist], [TensorType(x.dtype, (False,) + x.broadcastable[1:])()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, ilist = inputs
        try:
            output_storage[0][0] = x.take(ilist, axis=0)
        except IndexError as err:
            raise index_error(node, x, (ilist,), err) from None

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        x_shape, ilist_shape = input_shapes
        return [(ilist_shape[0],) + tuple(x_shape[1:])]
