"""Writing at an index: ``set_subtensor``, ``inc_subtensor`` and their ops.

The ``*IncSubtensor`` ops return a new array: they copy ``x`` and write into
the copy. Their ``inplace`` form (Theano's ``inplace=True``, declared in
``destroy_map``) writes into ``x`` itself; the in-place rewrite makes it where
the destroy check proves nothing else needs ``x`` (the zeros a gradient of
``x[idx]`` scatters into, a chain of ``set_subtensor``). Where an advanced index
repeats a position, increments accumulate (``numpy.add.at``), as Theano's did.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Op, Variable
from arignote.scalar.dtypes import upcast
from arignote.tensor.subtensor.index import ARRAY, format_idx_list, index_error, numpy_index
from arignote.tensor.subtensor.layout import indexed_type
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.math import cast
from arignote.tensor.subtensor.read import (AdvancedBooleanSubtensor, AdvancedSubtensor, AdvancedSubtensor1,
                                            IndexOp, Subtensor, getitem, new_axes_index)
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["IncSubtensor", "AdvancedIncSubtensor", "AdvancedIncSubtensor1", "set_subtensor",
           "inc_subtensor", "advanced_inc_subtensor", "advanced_set_subtensor",
           "advanced_inc_subtensor1", "advanced_set_subtensor1"]


class _IncOp(Op):
    """What the set/increment ops share: copy ``x`` (unless ``inplace``), then write ``y`` at
    the index."""

    __props__ = ()
    inplace = False

    def _set_flags(self, inplace: bool, set_instead_of_inc: bool) -> None:
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def _fresh_copy(self, x: np.ndarray, cell: list) -> np.ndarray:
        """A copy of ``x`` to write into: last call's array when it fits, so no allocation;
        ``x`` itself for the in-place form."""
        if self.inplace:
            return x
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
                if y.ndim:
                    # numpy 2.4's add.at reads past the value when it broadcasts it along
                    # the index's leading dimensions (garbage sums): broadcast it first.
                    y = np.broadcast_to(y, out[index].shape)
                np.add.at(out, index, y)
            else:
                out[index] += y
        except (IndexError, ValueError) as err:
            shown = index if isinstance(index, tuple) else (index,)
            raise index_error(node, out, shown, err) from None

    def __str__(self) -> str:
        what = ("Inplace" if self.inplace else "") + ("Set" if self.set_instead_of_inc else "Inc")
        index = format_idx_list(getattr(self, "idx_list", (ARRAY,)))
        return f"{type(self).__name__}{{{what};{index}}}"


class _IndexedIncOp(_IncOp, IndexOp):
    """Set or increment at an ``idx_list`` index; inputs are ``x``, ``y``, then the entries."""

    __props__ = ("idx_list", "inplace", "set_instead_of_inc")
    accumulate = False

    def __init__(self, idx_list: Sequence, inplace: bool = False, set_instead_of_inc: bool = False,
                 destroyhandler_tolerate_aliased: Any = None):
        super().__init__(idx_list)
        self._set_flags(inplace, set_instead_of_inc)

    def inplace_version(self) -> _IndexedIncOp:
        """This op writing into ``x`` (the in-place rewrite's replacement)."""
        return type(self)(self.idx_list, True, self.set_instead_of_inc)

    def make_node(self, x: Any, y: Any, *entries: Any) -> Apply:
        x = as_tensor_variable(x)
        entries = self._entries(entries)
        y = _value_for(x, indexed_type(x, self.idx_list, entries), y, self.set_instead_of_inc)
        return Apply(self, [x, y] + entries, [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, y = inputs[:2]
        out = self._fresh_copy(x, output_storage[0])
        index = numpy_index(self.idx_list, inputs[2:])
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


class AdvancedBooleanIncSubtensor(AdvancedIncSubtensor):
    """An AdvancedIncSubtensor with a boolean mask among its index arrays (Theano's class)."""


class AdvancedIncSubtensor1(_IncOp):
    """Set or add rows ``ilist`` of ``x``; repeated indices accumulate."""

    __props__ = ("inplace", "set_instead_of_inc")

    def __init__(self, inplace: bool = False, set_instead_of_inc: bool = False):
        self._set_flags(inplace, set_instead_of_inc)

    def inplace_version(self) -> AdvancedIncSubtensor1:
        """This op writing into ``x`` (the in-place rewrite's replacement)."""
        return AdvancedIncSubtensor1(True, self.set_instead_of_inc)

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
            # A narrower type of the same kind (float64 into float32) is rounded, as Theano's
            # numpy assignment did: floatX=float32 code writes float64 terms into float32
            # buffers. A change of kind (float into int) would cut values: an error.
            if not np.can_cast(y.dtype, x.dtype, casting="same_kind"):
                raise TypeError(f"{what}: {x.describe()} is {x.dtype} but the value {y.describe()} is "
                                f"{y.dtype}, a kind of number {x.dtype} cannot hold: cast it with "
                                f"tensor.cast(y, {x.dtype!r}) if cutting its values is what you mean")
            y = cast(y, x.dtype)
    else:
        data = np.asarray(y)
        converted = data.astype(x.dtype) if data.dtype != object else None
        if converted is None or not np.array_equal(converted, data, equal_nan=data.dtype.kind in "fc"):
            raise TypeError(f"{what}: the value {y!r} does not fit {x.describe()}'s dtype {x.dtype}: "
                            "give a value that dtype holds exactly, or cast x first")
        y = constant(converted)
    if y.ndim > target.ndim:
        raise TypeError(f"{what}: the value {y.describe()} has {y.ndim} dimensions but the indexed "
                        f"part of {x.describe()} has {target.ndim}: the value must broadcast to it")
    return y


def set_subtensor(x: Any, y: Any, inplace: bool = False, tolerate_inplace_aliasing: bool = False) -> Variable:
    """A copy of ``x``'s base tensor with ``y`` written at the index: ``set_subtensor(a[1:], y)``.

    ``x`` is the indexed expression; the result has the shape of the tensor
    that was indexed, and that tensor is not modified. ``inplace`` and
    ``tolerate_inplace_aliasing`` are Theano's signature (which said not to use them):
    the in-place rewrite writes in place where the destroy check proves it safe.
    """
    return _inc_or_set(x, y, set_=True)


def inc_subtensor(x: Any, y: Any, inplace: bool = False, set_instead_of_inc: bool = False,
                  tolerate_inplace_aliasing: bool = False) -> Variable:
    """A copy of the indexed tensor with ``y`` added at the index (written there with
    ``set_instead_of_inc``): ``inc_subtensor(a[idx], y)``.

    With integer-array indices, an index that repeats adds once per occurrence.
    ``inplace`` and ``tolerate_inplace_aliasing``: as for :func:`set_subtensor`.
    """
    return _inc_or_set(x, y, set_=bool(set_instead_of_inc))


def advanced_inc_subtensor(x: Any, y: Any, *index: Any) -> Variable:
    """Theano's ``advanced_inc_subtensor(x, y, *index)``: ``inc_subtensor(x[index], y)``."""
    return _inc_or_set(getitem(x, index), y, set_=False)


def advanced_set_subtensor(x: Any, y: Any, *index: Any) -> Variable:
    """Theano's ``advanced_set_subtensor(x, y, *index)``: ``set_subtensor(x[index], y)``."""
    return _inc_or_set(getitem(x, index), y, set_=True)


def advanced_inc_subtensor1(x: Any, y: Any, ilist: Any) -> Variable:
    """``inc_subtensor(x[ilist], y)`` for an integer vector ``ilist`` indexing the first axis."""
    return AdvancedIncSubtensor1()(x, y, ilist)


def advanced_set_subtensor1(x: Any, y: Any, ilist: Any) -> Variable:
    """``set_subtensor(x[ilist], y)`` for an integer vector ``ilist`` indexing the first axis."""
    return AdvancedIncSubtensor1(set_instead_of_inc=True)(x, y, ilist)


def _inc_or_set(indexed: Any, y: Any, set_: bool) -> Variable:
    what = "set_subtensor" if set_ else "inc_subtensor"
    node = getattr(indexed, "owner", None)
    if node is not None and isinstance(node.op, DimShuffle) and new_axes_index(node.op) is not None:
        node = Subtensor(new_axes_index(node.op))(node.inputs[0]).owner  # x[:, None] is a DimShuffle
    if node is None or not isinstance(node.op, (Subtensor, AdvancedSubtensor, AdvancedSubtensor1)):
        raise TypeError(f"{what} expects an indexed expression such as {what}(x[1:3], y), got "
                        f"{getattr(indexed, 'describe', lambda: repr(indexed))()}: index the "
                        "tensor you want to update")
    op = node.op
    if isinstance(op, AdvancedSubtensor1):
        return AdvancedIncSubtensor1(set_instead_of_inc=set_)(node.inputs[0], y, node.inputs[1])
    write = (IncSubtensor if isinstance(op, Subtensor) else AdvancedBooleanIncSubtensor
             if isinstance(op, AdvancedBooleanSubtensor) else AdvancedIncSubtensor)
    inc_op = write(op.idx_list, set_instead_of_inc=set_)
    return inc_op(node.inputs[0], y, *node.inputs[1:])
