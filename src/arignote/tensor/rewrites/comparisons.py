"""Comparisons and logic the graph decides: ``x < x``, ``and_(x, 0)``, ``x.shape[0] >= 0``.

Shape graphs are full of them (the lengths ``scan`` and ``Subtensor`` check are
compared with 0 and -1); a decided comparison becomes a constant, and the
``Assert`` condition or ``switch`` reading it goes with it. Self-comparisons that a NaN
would change (``x == x``, ``x <= x``) are only decided for integers.
"""
from __future__ import annotations

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar.dtypes import DISCRETE
from arignote.scalar.ops import Cast
from arignote.tensor.checks import Assert
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.join import MakeVector
from arignote.tensor.rewrites.canonicalize import _filled
from arignote.tensor.rewrites.known_values import UNKNOWN, filled_value
from arignote.tensor.rewrites.utils import op_name, retype, scalar_constant
from arignote.tensor.shape import Shape, Shape_i
from arignote.tensor.subtensor.read import Subtensor

# op(x, x): the result, and whether it holds for every dtype (else integers and bools only:
# NaN == NaN is False). "x" means the operand itself.
SELF = {"lt": (False, True), "gt": (False, True), "xor": (0, True),
        "le": (True, False), "ge": (True, False), "eq": (True, False), "neq": (False, False),
        "and_": ("x", True), "or_": ("x", True), "maximum": ("x", True), "minimum": ("x", True)}

# op(x, c) for a constant c: (op, c, dtypes it holds for) -> the result ("x": x itself).
WITH_CONSTANT = {("and_", 0): (0, "any"), ("and_", 1): ("x", "bool"), ("or_", 0): ("x", "any"),
                 ("or_", 1): (1, "bool"), ("xor", 0): ("x", "any")}

# Comparisons monotone in x: over x >= 0 the result is decided when it is the same at 0 and at +inf.
MONOTONE = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "neq": "neq"}
# Of nonnegative finite inputs, nonnegative (and never NaN: no 0 * inf, no 0 / 0).
_NONNEGATIVE_OPS = ("add", "mul", "sqr", "maximum", "minimum", "int_div")


def nonnegative(var: Variable, depth: int = 8) -> bool:
    """Whether every element of ``var`` is provably >= 0 (lengths, and sums and products of them)."""
    owner = var.owner
    if isinstance(var, Constant):
        data = np.asarray(var.data)
        return data.dtype.kind in "biuf" and bool(np.isfinite(data).all() and (data >= 0).all())
    if owner is None or depth == 0:
        return False
    if isinstance(owner.op, (Shape, Shape_i)):
        return True
    if isinstance(owner.op, (DimShuffle, Subtensor)) or (
            isinstance(owner.op, Elemwise) and isinstance(owner.op.scalar_op, Cast)):
        return nonnegative(owner.inputs[0], depth - 1)  # a view of, or a cast of, nonnegative values
    if isinstance(owner.op, MakeVector) or op_name(var) in _NONNEGATIVE_OPS:
        return all(nonnegative(i, depth - 1) for i in owner.inputs)
    return False


def _decided(fgraph: FunctionGraph, out: Variable, value: object, other: Variable) -> list | None:
    if value == "x":
        return [retype(other, out)]
    return [_filled(fgraph, value, out)]


@node_rewriter([Elemwise])
def local_useless_elemwise_comparison(fgraph: FunctionGraph, node: Apply):
    """``op(x, x)`` by ``SELF``, ``op(x, c)`` by ``WITH_CONSTANT``, and comparisons of provably
    nonnegative values with constants (``x.shape[0] < 0`` is False)."""
    out = node.outputs[0]
    name = op_name(out)
    if name is None or len(node.inputs) != 2:
        return None
    a, b = node.inputs
    if a is b and name in SELF:
        value, always = SELF[name]
        if value is not None and (always or a.dtype in DISCRETE):
            return _decided(fgraph, out, value, a)
        return None
    for x, c, op in ((a, b, name), (b, a, SWAPPED.get(name, name))):
        const = scalar_constant(c)
        if const is None or isinstance(const, complex):
            continue
        rule = WITH_CONSTANT.get((op, const))
        if rule is not None and x.dtype in DISCRETE and (rule[1] == "any" or x.dtype == rule[1]):
            return _decided(fgraph, out, rule[0], x)
        if not nonnegative(x):
            continue
        if op in MONOTONE and MONOTONE[op](0, const) == MONOTONE[op](np.inf, const):
            return _decided(fgraph, out, bool(MONOTONE[op](0, const)), x)
        if op in ("eq", "neq") and const < 0:
            return _decided(fgraph, out, op == "neq", x)
        if op == "maximum" and const <= 0 and x.dtype == out.dtype:
            return _decided(fgraph, out, "x", x)
    return None


@node_rewriter([Assert])
def local_remove_useless_assert(fgraph: FunctionGraph, node: Apply):
    """An Assert drops the conditions the graph decides are true (the value alone when none is
    left); one decided false stays, to fail when the function runs."""
    value, *conditions = node.inputs
    kept = [c for c in conditions if filled_value(c) is UNKNOWN or not filled_value(c)]
    if len(kept) == len(conditions):
        return None
    return [retype(node.op(value, *kept) if kept else value, node.outputs[0])]


@node_rewriter([Assert])
def local_remove_all_assert(fgraph: FunctionGraph, node: Apply):
    """Every Assert -> its value: opt-in only (Theano's ``unsafe`` rewrite, taken by name,
    ``mode.including('local_remove_all_assert')``), for graphs whose checks are known to hold."""
    return [node.inputs[0]]


for _rewriter in (local_useless_elemwise_comparison, local_remove_useless_assert):
    rewrites.register(_rewriter, "canonicalize", "fast_run")
rewrites.register(local_remove_all_assert, "canonicalize", "unsafe", opt_in=True)
