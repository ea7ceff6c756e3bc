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

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor import math as _math
from arignote.tensor.alloc import Alloc
from arignote.tensor.checks import Assert
from arignote.tensor.rewrites.canonicalize import same_length
from arignote.tensor.rewrites.known_values import local_div_of_known
from arignote.tensor.rewrites.shape_feature import shape_feature
from arignote.tensor.rewrites.utils import retype, single_client
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


def _known(*values: Any) -> bool:
    return all(isinstance(v, (int, np.integer, bool, np.bool_)) for v in values)


def _op(py: Any, sym: Any) -> Any:
    """An operation done in Python while its operands are known, so the merged index of
    constant slices adds few nodes (the equilibrium bounds how much a graph may grow)."""
    def apply(*args: Any) -> Any:
        return py(*(int(a) for a in args)) if _known(*args) else sym(*(_i64(a) for a in args))
    return apply


_add, _sub, _mul = _op(lambda a, b: a + b, _math.add), _op(lambda a, b: a - b, _math.sub), _op(
    lambda a, b: a * b, _math.mul)
_lt, _ge, _gt = _op(lambda a, b: a < b, _math.lt), _op(lambda a, b: a >= b, _math.ge), _op(
    lambda a, b: a > b, _math.gt)


def _switch(cond: Any, a: Any, b: Any) -> Any:
    if _known(cond):
        return a if cond else b
    return _math.switch(cond, _i64(a), _i64(b))


def _and(a: Any, b: Any) -> Any:
    if _known(a):
        return b if a else False
    if _known(b):
        return a if b else False
    return _math.and_(a, b)


def _walk(length: Any, theslice: slice) -> tuple[Any, Any, Any]:
    """``(first, stride, count)``: ``x[theslice]`` along an axis of ``length`` is the
    elements ``first + j * stride`` for ``0 <= j < count`` (``first`` is meaningful only
    when ``count > 0``)."""
    canonical, direction = get_canonical_form_slice(theslice, length)
    count = slice_length(length, theslice.start, theslice.stop, theslice.step)
    forward = _gt(direction, 0)
    first = _switch(forward, canonical.start, _sub(canonical.stop, 1))
    return first, _switch(forward, canonical.step, _sub(0, canonical.step)), count


def _merge_index(length: Any, outer: slice, inner: Any) -> Any:
    """The one index of ``x`` (an axis of ``length``) that reads ``x[outer][inner]``."""
    first, stride, count = _walk(length, outer)
    if not isinstance(inner, slice):
        i = _switch(_lt(inner, 0), _add(inner, count), inner)
        inside = _and(_ge(i, 0), _lt(i, count))
        # Out of range of x[outer]: an index out of range of x too (its length), so it still fails.
        return _switch(inside, _add(first, _mul(i, stride)), length)
    first2, stride2, count2 = _walk(count, inner)
    start = _add(first, _mul(first2, stride))
    step = _mul(stride2, stride)
    stop = _add(start, _mul(count2, step))
    if _known(step) and step > 0:
        return slice(start, stop, step)  # both >= 0; an empty result is start:start
    # A negative stop would count from the end: -length - 1 is "before the first element";
    # an empty result is 0:0 (start means nothing then).
    stop = _switch(_lt(stop, 0), _sub(_sub(0, length), 1), stop)
    some = _gt(count2, 0)
    return slice(_switch(some, start, 0), _switch(some, stop, 0), step)


@node_rewriter([Subtensor])
def local_subtensor_merge(fgraph: FunctionGraph, node: Apply):
    """``x[outer][inner]`` -> ``x[merged]``: each inner item that falls on an axis the outer
    index sliced is composed with that slice; outer integers and inner items on axes the
    outer index left whole are kept (new axes are left alone)."""
    y = node.inputs[0]
    if y.owner is None or type(y.owner.op) is not Subtensor or not single_client(fgraph, y):
        return None
    x = y.owner.inputs[0]
    if _scan_output(x):
        return None
    outer = index_items(y.owner.op, y.owner.inputs[1:])
    inner = index_items(node.op, node.inputs[1:])
    if None in outer or None in inner or not all(_fixed(item) for item in outer + inner):
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


def _scan_output(x: Variable) -> bool:
    """Whether ``x`` comes out of a loop: scan's save-memory rewrite (phase fusion) reads the
    indexings of its outputs as written (``out[1:][-1]``: keep one row)."""
    from arignote.scan_module.op import Scan  # scan's module builds on the tensor package
    return x.owner is not None and isinstance(x.owner.op, Scan)


def _fixed(item: Any) -> bool:
    """Slices with constant bounds: symbolic ones make the merged index dozens of scalar
    nodes, enough to stop a phase's equilibrium (which bounds growth) early."""
    return not isinstance(item, slice) or all(v is None or _known(v) for v in (item.start, item.stop, item.step))

# The op reading what an indexed write writes to, by the write's class.
_READ_OF = {IncSubtensor: Subtensor, AdvancedIncSubtensor: AdvancedSubtensor,
            AdvancedBooleanIncSubtensor: AdvancedBooleanSubtensor}


@node_rewriter([IncSubtensor, AdvancedIncSubtensor, AdvancedIncSubtensor1])
def local_useless_inc_subtensor_alloc(fgraph: FunctionGraph, node: Apply):
    """``inc_subtensor(x[idx], alloc(y, *lengths))`` -> ``inc_subtensor(x[idx], y)`` (set too):
    the write broadcasts ``y`` as the alloc did; each length not provably that of ``x[idx]``
    is checked by an Assert on ``y``, so a wrong shape still fails. A single value filled out
    (every dimension of ``y`` broadcastable, as a gradient's ``-1/n`` is) keeps its alloc: on a
    GPU the alloc is a device fill of a host scalar, where the broadcast value itself would be
    a host array uploaded at every call."""
    x, value, *entries = node.inputs
    if value.owner is None or not isinstance(value.owner.op, Alloc):
        return None
    y, *lengths = value.owner.inputs
    if all(y.type.broadcastable):
        return None
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


# Specialize, after canonicalize has run to equilibrium: the merged index's scalar nodes then
# count against this phase's growth bound, not the one that folds constants. Integer
# divisions by 1 that slice lengths make are removed there too.
rewrites.register(local_subtensor_merge, "specialize", "fast_run")
rewrites.register(local_div_of_known, "specialize", "fast_run", "local_div_of_known", name="local_div_of_known_after_merge")
rewrites.register(local_useless_inc_subtensor_alloc, "canonicalize", "fast_run")
