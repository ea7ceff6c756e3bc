"""Canonicalization of reductions: fewer passes over the data, and no passes over what is known.

``x.sum(0).sum(0)`` reads ``x`` once as ``x.sum((0, 1))``; a reduction over axes
of length 1 is a DimShuffle; the sum of an alloc is its value times the count
(``sum(zeros_like(x))`` fills nothing); ``(c * x).sum()`` multiplies the one
result, not every element; the max of a stack of arrays (``max(stack([a, b]),
0)``) is the elementwise ``maximum(a, b)``, with no joined copy. What each
reduction's operator allows is one table, ``ALGEBRA``.
"""
from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from collections.abc import Callable

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar import ops as scalar_ops
from arignote.scalar.dtypes import FLOAT
from arignote.tensor import math as _math
from arignote.tensor.alloc import Alloc, alloc
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.join import Join
from arignote.tensor.reduction import CAReduce
from arignote.tensor.rewrites.utils import op_name, retype, single_client
from arignote.tensor.shape import static_value


@dataclass(frozen=True)
class Algebra:
    """What a reduction's scalar operator allows: ``repeated(v, n)`` is the reduction of ``n``
    copies of ``v`` (None: not rewritten: ``max`` of no copies is an error the alloc must keep);
    ``pairwise`` is the elementwise op that reduces two arrays; ``scales`` whether a scalar factor
    can be taken out (``sum(c * x) = c * sum(x)``); ``negated`` the operator ``g``
    with ``reduce(-x) = -g(x)`` (``max(-x) = -min(x)``), None where there is none."""
    repeated: Callable[[Variable, Variable], Variable] | None
    pairwise: Callable[[Variable, Variable], Variable]
    scales: bool = False
    negated: str | None = None


ALGEBRA = {
    "add": Algebra(_math.mul, _math.add, scales=True, negated="add"),
    "mul": Algebra(_math.pow, _math.mul),
    "maximum": Algebra(None, _math.maximum, negated="minimum"),
    "minimum": Algebra(None, _math.minimum, negated="maximum"),
    "and_": Algebra(None, _math.and_),
    "or_": Algebra(None, _math.or_),
    "xor": Algebra(None, _math.xor),
}


ALGEBRA_OPS = {"maximum": scalar_ops.maximum, "minimum": scalar_ops.minimum}


def _rebuild(op: CAReduce, axis: tuple[int, ...]) -> CAReduce:
    """``op`` over other axes, keeping its class (Sum, Prod...), dtype and accumulator."""
    new = copy.copy(op)
    new.axis = axis
    return new


def _accumulator(op: CAReduce, out: Variable) -> str:
    return op.acc_dtype or out.dtype


def _drop(x: Variable, axes: tuple[int, ...]) -> Variable:
    """``x`` without its broadcastable ``axes``."""
    if not axes:
        return x
    return DimShuffle(x.broadcastable, [i for i in range(x.ndim) if i not in axes])(x)


@node_rewriter([CAReduce])
def local_reduce_merge(fgraph: FunctionGraph, node: Apply):
    """``reduce(reduce(x, a), b)`` of one operator, dtype and accumulator -> ``reduce(x, a + b')``."""
    op, inner_out = node.op, node.inputs[0]
    inner = inner_out.owner
    if (inner is None or not isinstance(inner.op, CAReduce) or inner.op.scalar_op != op.scalar_op
            or inner.op.acc_dtype != op.acc_dtype or inner_out.dtype != node.outputs[0].dtype
            or not single_client(fgraph, inner_out)):
        return None
    x = inner.inputs[0]
    remaining = [i for i in range(x.ndim) if i not in inner.op.axis]
    axis = tuple(sorted(inner.op.axis + tuple(remaining[a] for a in op.axis)))
    return [retype(_rebuild(op, axis)(x), node.outputs[0])]


@node_rewriter([CAReduce])
def local_reduce_broadcastable(fgraph: FunctionGraph, node: Apply):
    """The axes of length 1 (broadcastable) of a reduction are dropped, not reduced: all of them
    -> a DimShuffle (and the cast to the reduction's dtype)."""
    op, x = node.op, node.inputs[0]
    ones = tuple(a for a in op.axis if x.broadcastable[a])
    if not ones:
        return None
    rest = tuple(a for a in op.axis if a not in ones)
    dropped = _drop(x, ones)
    if not rest:
        # One element reduces to itself, in the result's dtype; to a bool, to its truth
        # (all, any: a complex x is never cast to bool).
        out = node.outputs[0]
        single = _math.neq(dropped, 0) if out.dtype == "bool" and dropped.dtype != "bool" else dropped
        return [retype(_math.cast(single, out.dtype), out)]
    return [retype(_rebuild(op, tuple(a - sum(o < a for o in ones) for a in rest))(dropped), node.outputs[0])]


@node_rewriter([CAReduce])
def local_reduce_alloc(fgraph: FunctionGraph, node: Apply):
    """``sum(alloc(v, *shape), axes)`` -> ``alloc(v * n, *kept lengths)`` (``n`` the count of
    reduced elements; ``prod``: ``v ** n``) when ``v`` is broadcast along the reduced axes.
    As the product ``v * 0``, an infinite or NaN ``v`` over an empty axis gives NaN, not 0."""
    op, var = node.op, node.inputs[0]
    algebra = ALGEBRA[op.scalar_op.name]
    if algebra.repeated is None or var.owner is None or not isinstance(var.owner.op, Alloc):
        return None
    value, *lengths = var.owner.inputs
    value = DimShuffle(value.broadcastable, ["x"] * (var.ndim - value.ndim) + list(range(value.ndim)))(value)
    if not all(value.broadcastable[a] for a in op.axis):
        return None
    out = node.outputs[0]
    acc = _accumulator(op, out)
    count = functools.reduce(_math.mul, [lengths[a] for a in op.axis], _math.cast(1, "int64"))
    fixed = static_value(count)
    count = _math.cast(int(fixed) if fixed is not None else count, acc)
    total = algebra.repeated(_math.cast(_drop(value, op.axis), acc), count)
    kept = [n for i, n in enumerate(lengths) if i not in op.axis]
    return [retype(_math.cast(alloc(total, *kept) if kept else total, out.dtype), out)]


@node_rewriter([CAReduce])
def local_reduce_scaled(fgraph: FunctionGraph, node: Apply):
    """``sum(c * x)`` and ``sum(x / c)`` for a broadcast scalar ``c`` -> the factor applied to
    ``sum(x)``; ``sum(-x)`` -> ``-sum(x)``, ``max(-x)`` -> ``-min(x)``: one operation per result
    instead of one per element (and ``-max(-x)`` is then ``min(x)``)."""
    op, var = node.op, node.inputs[0]
    out = node.outputs[0]
    name = op_name(var)
    algebra = ALGEBRA[op.scalar_op.name]
    # Floats only: in integers -x wraps (-INT_MIN is INT_MIN), so max(-x) is not -min(x).
    if name is None or out.dtype not in FLOAT or var.dtype != out.dtype or not single_client(fgraph, var):
        return None
    inputs = var.owner.inputs
    if name == "neg" and algebra.negated is not None and inputs[0].dtype == out.dtype:
        negated = op if algebra.negated == op.scalar_op.name else CAReduce(
            ALGEBRA_OPS[algebra.negated], op.axis, op.dtype, op.acc_dtype)
        return [retype(_math.neg(negated(inputs[0])), out)]
    if not algebra.scales or name not in ("mul", "true_div"):
        return None
    candidates = [1] if name == "true_div" else range(len(inputs))
    for k in candidates:
        factor, rest = inputs[k], inputs[:k] + inputs[k + 1:]
        if not all(factor.broadcastable) or len(rest) != 1 or rest[0].type != var.type:
            continue
        scalar = _drop(factor, tuple(range(factor.ndim)))
        fn = _math.true_div if name == "true_div" else _math.mul
        return [retype(fn(op(rest[0]), scalar), out)]
    return None


@node_rewriter([CAReduce])
def local_reduce_join(fgraph: FunctionGraph, node: Apply):
    """``reduce(join(k, a[None], b[None], ...), k)`` (each piece of length 1 along ``k``) ->
    ``a op b op ...`` elementwise, in the reduction's accumulator."""
    op, var = node.op, node.inputs[0]
    join = var.owner
    if join is None or not isinstance(join.op, Join) or len(op.axis) != 1 or not single_client(fgraph, var):
        return None
    k = static_value(join.inputs[0])
    pieces = join.inputs[1:]
    if k is None or int(k) % var.ndim != op.axis[0] or len(pieces) < 2:
        return None
    k = int(k) % var.ndim
    if not all(p.broadcastable[k] for p in pieces):
        return None
    out = node.outputs[0]
    acc = _accumulator(op, out)
    folded = functools.reduce(ALGEBRA[op.scalar_op.name].pairwise,
                              [_math.cast(_drop(p, (k,)), acc) for p in pieces])
    return [retype(_math.cast(folded, out.dtype), out)]


for _rewriter in (local_reduce_merge, local_reduce_broadcastable, local_reduce_alloc, local_reduce_scaled,
                  local_reduce_join):
    rewrites.register(_rewriter, "canonicalize", "fast_run")
