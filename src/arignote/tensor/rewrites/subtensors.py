"""Rewrites of indexing: two indexings in a row merged into one; an alloc written at an index.

``x[a:b:c][i]`` reads one element of ``x``; written as two Subtensors it makes
two views and hides, from the rewrites that look for ``x[i]`` (a row of a
``dot``, an element of an ``alloc``), which element is read. The merged index
is computed from both slices and the lengths they apply to, with Python's slice
rules (negative bounds, negative steps, empty results); an integer index out of
range of the first slice's result still raises IndexError.

``inc_subtensor(x[idx], alloc(y, *shape))`` fills a buffer only to write it:
the write broadcasts ``y`` itself, after an Assert that ``shape`` is that of
``x[idx]`` where the graph cannot prove it (a check costs less than a fill).
"""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor import math as _math
from arignote.tensor.alloc import Alloc
from arignote.tensor.checks import Assert
from arignote.tensor.rewrites.canonicalize import same_length
from arignote.tensor.rewrites.shape_feature import shape_feature
from arignote.tensor.rewrites.utils import retype
from arignote.tensor.subtensor.index import SCALAR, IndexSlice
from arignote.tensor.subtensor.layout import get_canonical_form_slice, slice_length
from arignote.tensor.subtensor.read import (AdvancedBooleanSubtensor, AdvancedSubtensor, AdvancedSubtensor1,
                                            Subtensor)
from arignote.tensor.subtensor.write import (AdvancedBooleanIncSubtensor, AdvancedIncSubtensor,
                                             AdvancedIncSubtensor1, IncSubtensor)
from arignote.tensor.variable import constant


def index_items(op: Subtensor, entries: list[Variable]) -> list[Any]:
    """A Subtensor's index as Python items: ints, symbolic scalars, slices of either."""
    it = iter(entries)
    items: list[Any] = []
    for item in op.idx_list:
        if isinstance(item, IndexSlice):
            items.append(slice(*(next(it) if v == SCALAR else v for v in item)))
        else:
            items.append(next(it) if item == SCALAR else item)
    return items


def _i64(value: Any) -> Variable:
    return constant(int(value), dtype="int64") if isinstance(value, int) else _math.cast(value, "int64")


def _walk(length: Any, theslice: slice) -> tuple[Variable, Variable, Variable]:
    """``(first, stride, count)``: ``x[theslice]`` along an axis of ``length`` is the
    elements ``first + j * stride`` for ``0 <= j < count`` (``first`` is meaningful only
    when ``count > 0``)."""
    canonical, direction = get_canonical_form_slice(theslice, length)
    count = _i64(slice_length(length, theslice.start, theslice.stop, theslice.step))
    low, high, step = (_i64(v) for v in (canonical.start, canonical.stop, canonical.step))
    forward = _math.gt(_i64(direction), 0)
    first = _math.switch(forward, low, _math.sub(high, 1))
    return first, _math.switch(forward, step, _math.neg(step)), count


def _merge_index(length: Any, outer: slice, inner: Any) -> Any:
    """The one index of ``x`` (an axis of ``length``) that reads ``x[outer][inner]``."""
    n = _i64(length)
    first, stride, count = _walk(n, outer)
    if not isinstance(inner, slice):
        i = _i64(inner)
        i = _math.switch(_math.lt(i, 0), _math.add(i, count), i)
        inside = _math.and_(_math.ge(i, 0), _math.lt(i, count))
        # Out of range of x[outer]: an index out of range of x too (n), so it still fails.
        return _math.switch(inside, _math.add(first, _math.mul(i, stride)), n)
    first2, stride2, count2 = _walk(count, inner)
    start = _math.add(first, _math.mul(first2, stride))
    step = _math.mul(stride2, stride)
    stop = _math.add(start, _math.mul(count2, step))
    # A negative stop would count from the end: -n - 1 is "before the first element".
    stop = _math.switch(_math.lt(stop, 0), _math.sub(_math.neg(n), 1), stop)
    some = _math.gt(count2, 0)
    zero = _i64(0)
    return slice(_math.switch(some, start, zero), _math.switch(some, stop, zero), step)


@node_rewriter([Subtensor])
def local_subtensor_merge(fgraph: FunctionGraph, node: Apply):
    """``x[outer][inner]`` -> ``x[merged]``: each inner item that falls on an axis the outer
    index sliced is composed with that slice; outer integers and inner items on axes the
    outer index left whole are kept (new axes are left alone)."""
    y = node.inputs[0]
    if y.owner is None or type(y.owner.op) is not Subtensor:
        return None
    x = y.owner.inputs[0]
    outer = index_items(y.owner.op, y.owner.inputs[1:])
    inner = index_items(node.op, node.inputs[1:])
    if None in outer or None in inner:
        return None
    pending = iter(inner)
    merged = []
    for axis, item in enumerate(outer):
        if isinstance(item, slice):
            nxt = next(pending, _NONE)
            merged.append(item if nxt is _NONE else _merge_index(x.shape[axis], item, nxt))
        else:
            merged.append(item)
    merged.extend(pending)
    return [retype(x[tuple(merged)], node.outputs[0], same_shape=True)]


_NONE = object()

# The op reading what an indexed write writes to, by the write's class.
_READ_OF = {IncSubtensor: Subtensor, AdvancedIncSubtensor: AdvancedSubtensor,
            AdvancedBooleanIncSubtensor: AdvancedBooleanSubtensor}


@node_rewriter([IncSubtensor, AdvancedIncSubtensor, AdvancedIncSubtensor1])
def local_useless_inc_subtensor_alloc(fgraph: FunctionGraph, node: Apply):
    """``inc_subtensor(x[idx], alloc(y, *lengths))`` -> ``inc_subtensor(x[idx], y)`` (set too):
    the write broadcasts ``y`` as the alloc did; each length not provably that of ``x[idx]``
    is checked by an Assert on ``y``, so a wrong shape still fails."""
    x, value, *entries = node.inputs
    if value.owner is None or not isinstance(value.owner.op, Alloc):
        return None
    y, *lengths = value.owner.inputs
    op = node.op
    read = (AdvancedSubtensor1()(x, *entries) if type(op) is AdvancedIncSubtensor1
            else _READ_OF[type(op)](op.idx_list)(x, *entries))
    if read.ndim != len(lengths):
        return None
    feature = shape_feature(fgraph)
    unproven = [(feature.shape(read)[d], n) for d, n in enumerate(lengths)
                if not same_length(feature, read, d, n)]
    if unproven:
        y = Assert("inc_subtensor/set_subtensor: the alloc written at the index has a shape other than "
                   "the indexed part's")(y, *[_math.eq(have, want) for have, want in unproven])
    return [retype(op(x, y, *entries), node.outputs[0])]


rewrites.register(local_subtensor_merge, "canonicalize", "fast_run")
rewrites.register(local_useless_inc_subtensor_alloc, "canonicalize", "fast_run")
