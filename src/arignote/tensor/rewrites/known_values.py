"""Rewrites that read values the graph fixes: filled arrays, constant conditions, useless allocs.

Gradients are full of them: the gradient of ``x[:4].sum()`` with respect to
``x`` is ``inc_subtensor(zeros_like(x)[:4], ones)``, of an unused branch a
product with zeros, of ``switch(c, a, b)`` with a constant ``c`` one branch.
A filled array is a constant whose elements are equal, an ``alloc`` or
``fill`` of such a value, or a DimShuffle of one (``filled_value``).

As Theano (and as ``x * 0`` in canonicalize), adding zeros into ``x[idx]``
gives ``x`` without checking that the zeros' shape fits ``x[idx]``, and
``0 / x`` is 0 even where ``x`` is 0.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar.dtypes import DISCRETE
from arignote.tensor import math as _math
from arignote.tensor.alloc import Alloc, alloc
from arignote.tensor.blas import Dot
from arignote.tensor.checks import Assert
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.join import MakeVector
from arignote.tensor.rewrites.canonicalize import _filled, same_length
from arignote.tensor.rewrites.shape_feature import shape_feature
from arignote.tensor.rewrites.utils import op_name, retype
from arignote.tensor.shape import Rebroadcast, Shape, static_value
from arignote.tensor.subtensor.index import numpy_index
from arignote.tensor.subtensor.read import AdvancedSubtensor1, Subtensor
from arignote.tensor.subtensor.write import _IncOp

UNKNOWN = object()  # what filled_value gives when the graph does not fix the value (0 and False are values)


def filled_value(var: Variable) -> Any:
    """The one value every element of ``var`` has, when the graph fixes it; else ``UNKNOWN``."""
    while True:
        owner = var.owner
        if isinstance(var, Constant):
            data = np.asarray(var.data)
            if data.size == 0 or not (data == data.flat[0]).all():
                return UNKNOWN
            return data.flat[0].item()
        if owner is None:
            return UNKNOWN
        if isinstance(owner.op, (Alloc, DimShuffle, Rebroadcast)):
            var = owner.inputs[0]
        elif op_name(var) == "second":
            var = owner.inputs[1]
        else:
            return UNKNOWN


def _is_filled_with(var: Variable, value: Any) -> bool:
    found = filled_value(var)
    return found is not UNKNOWN and not isinstance(found, complex) and found == value


def _broadcast_to_out(fgraph: FunctionGraph, var: Variable, out: Variable) -> Variable | None:
    """``var`` as ``out``: its type, and an alloc to its shape where ``var`` is broadcast along a
    dimension ``out`` is not (two non-broadcastable dimensions that meet have one length, as in
    shape inference)."""
    if var.ndim == out.ndim and all(out.broadcastable[d] or not var.broadcastable[d] for d in range(out.ndim)):
        return retype(var, out, same_shape=True)
    feature = shape_feature(fgraph)
    return retype(alloc(var, *[feature.entry(out, d) for d in range(out.ndim)]), out, same_shape=True)


@node_rewriter([_IncOp])
def local_incsubtensor_of_zeros(fgraph: FunctionGraph, node: Apply):
    """``inc_subtensor(x[idx], zeros)`` -> ``x``; ``set_subtensor(x[idx], y)`` -> ``x`` when ``x``
    and ``y`` are filled with one value (``set_subtensor(zeros[idx], zeros)``)."""
    x, y = node.inputs[:2]
    if node.op.set_instead_of_inc:
        known = filled_value(x)
        if known is UNKNOWN or not _is_filled_with(y, known):
            return None
    elif not _is_filled_with(y, 0):
        return None
    return [retype(x, node.outputs[0])]


@node_rewriter([Dot])
def local_0_dot_x(fgraph: FunctionGraph, node: Apply):
    """``dot(zeros, y)`` and ``dot(x, zeros)`` -> zeros of the product's shape (no BLAS call),
    still checking that the summed lengths agree, as the product did."""
    if not any(_is_filled_with(i, 0) for i in node.inputs):
        return None
    x, y = node.inputs
    feature = shape_feature(fgraph)
    summed = _math.eq(feature.entry(x, x.ndim - 1), feature.entry(y, 0))
    check = Assert(f"dot: {x.describe()} has a last length other than the first of {y.describe()} "
                   "(the product of zeros kept the product's shape check)")
    return [retype(check(_filled(fgraph, 0, node.outputs[0]), summed), node.outputs[0])]


@node_rewriter([Elemwise])
def local_useless_switch(fgraph: FunctionGraph, node: Apply):
    """``switch(c, a, b)`` with ``c`` filled -> ``a`` or ``b``; ``switch(c, a, a)`` -> ``a``
    (broadcast to the switch's shape where ``c`` made it larger)."""
    out = node.outputs[0]
    if op_name(out) != "switch":
        return None
    cond, a, b = node.inputs
    known = filled_value(cond)
    if known is not UNKNOWN:
        return [_broadcast_to_out(fgraph, a if known else b, out)]
    if a is b:
        return [_broadcast_to_out(fgraph, a, out)]
    return None


@node_rewriter([Elemwise])
def local_div_of_known(fgraph: FunctionGraph, node: Apply):
    """``0 / x`` and ``0 // x`` -> zeros; ``x // 1`` -> ``x`` for integer ``x`` (for a float
    ``x`` it is ``floor(x)``)."""
    out = node.outputs[0]
    name = op_name(out)
    if name not in ("true_div", "int_div"):
        return None
    num, den = node.inputs
    if _is_filled_with(num, 0) and out.dtype not in ("bool",):
        return [_filled(fgraph, 0, out)]
    if name == "int_div" and num.dtype in DISCRETE and _is_filled_with(den, 1) and all(den.broadcastable):
        return [retype(num, out)]
    return None


@node_rewriter([Subtensor, AdvancedSubtensor1])
def local_subtensor_make_vector(fgraph: FunctionGraph, node: Apply):
    """A constant index into ``make_vector(a, b, c)`` or ``x.shape`` -> the element, or the
    MakeVector of the elements it selects: ``x.shape[1:]`` reads the lengths it keeps, alone.
    The index is applied to the positions ``arange(n)``, so every index numpy takes is handled;
    an out-of-range one is left for its error when the function runs."""
    vec = node.inputs[0]
    if vec.owner is None:
        return None
    if isinstance(vec.owner.op, MakeVector):
        elements, make = vec.owner.inputs, vec.owner.op
    elif isinstance(vec.owner.op, Shape):  # the shape's lengths, each read alone
        x = vec.owner.inputs[0]
        elements, make = [shape_feature(fgraph).entry(x, d) for d in range(x.ndim)], MakeVector("int64")
    else:
        return None
    values = [static_value(e) for e in node.inputs[1:]]
    if any(v is None for v in values):
        return None
    positions = np.arange(len(elements))
    try:
        if isinstance(node.op, AdvancedSubtensor1):
            chosen = positions[np.asarray(values[0], dtype="int64")]
        else:
            chosen = positions[numpy_index(node.op.idx_list, values)]
    except IndexError:
        return None
    if chosen.ndim == 0:
        return [retype(elements[int(chosen)], node.outputs[0])]
    return [retype(make(*[elements[i] for i in chosen]), node.outputs[0])]


@node_rewriter([Alloc])
def local_merge_alloc(fgraph: FunctionGraph, node: Apply):
    """``alloc(alloc(m, *a), *b)`` -> ``alloc(m, *b)``: one fill, not two. A length of ``a`` that
    is not 1 must equal the length of ``b`` it meets: checked (an Assert) unless the graph shows it."""
    inner = node.inputs[0].owner
    if inner is None or not isinstance(inner.op, Alloc):
        return None
    value, *a = inner.inputs
    b = node.inputs[1:]
    checks = []
    for length, meets in zip(a, b[len(b) - len(a):]):
        fixed, other = static_value(length), static_value(meets)
        if length is meets or (fixed is not None and (int(fixed) == 1 or int(fixed) == other)):
            continue
        checks.append(_math.eq(length, meets))
    merged = alloc(value, *b)
    if checks:
        merged = Assert("alloc of an alloc: an inner length differs from the outer one it meets")(merged, *checks)
    return [retype(merged, node.outputs[0])]


@node_rewriter([Alloc])
def local_useless_alloc(fgraph: FunctionGraph, node: Apply):
    """``alloc(x, *lengths)`` -> ``x`` when ``x`` already has those lengths (an alloc is a copy)."""
    x, *lengths = node.inputs
    out = node.outputs[0]
    if x.ndim != out.ndim or x.dtype != out.dtype:
        return None
    feature = shape_feature(fgraph)
    if not all(same_length(feature, x, d, n) for d, n in enumerate(lengths)):
        return None
    return [retype(x, out, same_shape=True)]


for _rewriter in (local_incsubtensor_of_zeros, local_0_dot_x, local_useless_switch, local_div_of_known,
                  local_subtensor_make_vector, local_merge_alloc, local_useless_alloc):
    rewrites.register(_rewriter, "canonicalize", "fast_run")
