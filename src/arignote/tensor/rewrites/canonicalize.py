"""Canonicalization: algebraic identities, DimShuffle and Subtensor lifting, useless reshapes and casts.

These put a graph in a standard, smaller form that later phases match
against. Each replacement has exactly its original's type (see ``retype``);
identities that would change a shape (``x * ones(3)`` when ``x`` has length
1) are left alone. As in Theano, ``x - x``, ``x / x`` and ``x * 0`` become
constants even where ``x`` holds NaN or infinities, and (as shape inference
does) two non-broadcastable dimensions that meet are taken to have one length.
"""
from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar.dtypes import COMPLEX, FLOAT
from arignote.scalar.ops import Cast
from arignote.tensor import math as _math
from arignote.tensor.alloc import Alloc, alloc
from arignote.tensor.blas import Dot
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.gradient_ops import ViewGradOp
from arignote.tensor.join import Join
from arignote.tensor.rewrites.shape_feature import shape_feature
from arignote.tensor.rewrites.utils import (is_scalar_constant, op_name, retype, single_client,
                                            typed_constant)
from arignote.tensor.shape import Reshape, Shape_i, static_value, vector_entry, vector_length
from arignote.tensor.subtensor.read import Subtensor


def _filled(fgraph: FunctionGraph, value: float, out) -> object:
    """``value`` in the shape and type of ``out``, without computing ``out``."""
    lengths = [shape_feature(fgraph).entry(out, d) for d in range(out.ndim)]
    return retype(alloc(typed_constant(value, out.dtype), *lengths), out, same_shape=True)


# ------------------------------------------------------------- identities
@node_rewriter([ViewGradOp])
def local_remove_gradient_ops(fgraph: FunctionGraph, node: Apply):
    """``zero_grad(x)``, ``grad_clip(x, ...)``... -> ``x``: they only mattered to ``grad``."""
    return [node.inputs[0]]


@node_rewriter([Elemwise])
def local_useless_elemwise(fgraph: FunctionGraph, node: Apply):
    """``identity(x)`` (``tensor_copy``, and what a one-term ``add(x)`` or ``mul(x)`` builds)
    -> ``x``: where an output would then share the input's memory, the function's copy node
    (compile/output_copies.py) separates them."""
    if node.op.inplace_pattern or op_name(node.outputs[0]) != "identity":
        return None
    return [retype(node.inputs[0], node.outputs[0])]


@node_rewriter([Elemwise])
def local_mul_one(fgraph: FunctionGraph, node: Apply):
    """``x * 1`` and ``1 * x`` -> ``x``."""
    if op_name(node.outputs[0]) != "mul":
        return None
    a, b = node.inputs
    for keep, other in ((a, b), (b, a)):
        if is_scalar_constant(other, 1):
            return [retype(keep, node.outputs[0])]
    return None


@node_rewriter([Elemwise])
def local_pow_one(fgraph: FunctionGraph, node: Apply):
    """``x ** 1`` -> ``x`` (what the gradient of ``x ** 2`` holds), before later phases match
    the terms around it."""
    if op_name(node.outputs[0]) != "pow" or not is_scalar_constant(node.inputs[1], 1):
        return None
    return [retype(node.inputs[0], node.outputs[0])]


@node_rewriter([Elemwise])
def local_add_zero(fgraph: FunctionGraph, node: Apply):
    """``x + 0``, ``0 + x`` and ``x - 0`` -> ``x``; ``0 - x`` -> ``-x``."""
    name = op_name(node.outputs[0])
    if name not in ("add", "sub"):
        return None
    a, b = node.inputs
    out = node.outputs[0]
    if is_scalar_constant(b, 0):
        return [retype(a, out)]
    if is_scalar_constant(a, 0):
        if name == "add":
            return [retype(b, out)]
        if out.dtype != "bool":
            # Negate in the result's dtype: -uint8(3) would wrap to 253 before widening.
            return [retype(_math.neg(_math.cast(b, out.dtype)), out)]
    return None


@node_rewriter([Elemwise])
def local_sub_self(fgraph: FunctionGraph, node: Apply):
    """``x - x`` -> zeros of its shape."""
    if op_name(node.outputs[0]) != "sub" or node.inputs[0] is not node.inputs[1]:
        return None
    return [_filled(fgraph, 0, node.outputs[0])]


@node_rewriter([Elemwise])
def local_mul_zero(fgraph: FunctionGraph, node: Apply):
    """``x * 0`` -> zeros of the product's shape (``x`` is then not computed)."""
    if op_name(node.outputs[0]) != "mul" or node.outputs[0].dtype.startswith("complex"):
        return None
    if any(is_scalar_constant(i, 0) for i in node.inputs):
        return [_filled(fgraph, 0, node.outputs[0])]
    return None


@node_rewriter([Elemwise])
def local_double_neg(fgraph: FunctionGraph, node: Apply):
    """``--x`` -> ``x``."""
    if op_name(node.outputs[0]) != "neg" or op_name(node.inputs[0]) != "neg":
        return None
    return [retype(node.inputs[0].owner.inputs[0], node.outputs[0])]


@node_rewriter([Elemwise])
def local_neg_pairs(fgraph: FunctionGraph, node: Apply):
    """``(-a) * (-b)`` -> ``a * b``, ``(-a) / (-b)`` -> ``a / b``, ``a - (-b)`` -> ``a + b``,
    ``a + (-b)`` and ``(-b) + a`` -> ``a - b``."""
    name = op_name(node.outputs[0])
    out = node.outputs[0]
    if name not in ("mul", "true_div", "sub", "add"):
        return None
    # The identities hold in modular integer arithmetic only when every step is done
    # in one dtype (a negation in a narrower one wraps differently), so ask for that.
    same = all(i.dtype == out.dtype for i in node.inputs)
    a, b = node.inputs
    if name in ("mul", "true_div") and a is not b and op_name(a) == "neg" and op_name(b) == "neg":
        if (same and name == "mul") or (name == "true_div" and out.dtype in FLOAT + COMPLEX
                                        and a.dtype in FLOAT + COMPLEX and b.dtype in FLOAT + COMPLEX):
            fn = _math.mul if name == "mul" else _math.true_div
            return [retype(fn(a.owner.inputs[0], b.owner.inputs[0]), out)]
    if name == "sub" and same and op_name(b) == "neg":
        return [retype(_math.add(a, b.owner.inputs[0]), out)]
    if name == "add" and same:
        for keep, negated in ((a, b), (b, a)):
            if op_name(negated) == "neg" and op_name(keep) != "neg":
                return [retype(_math.sub(keep, negated.owner.inputs[0]), out)]
    return None


@node_rewriter([Elemwise])
def local_div_simplify(fgraph: FunctionGraph, node: Apply):
    """``x / 1`` -> ``x``; ``x / x`` -> ones; ``(a * b) / b`` and ``(b * a) / b`` -> ``a``;
    ``(a / b) * b`` -> ``a``."""
    name = op_name(node.outputs[0])
    out = node.outputs[0]
    if name == "true_div":
        num, den = node.inputs
        if is_scalar_constant(den, 1):
            return [retype(num, out)]
        if num is den:
            return [_filled(fgraph, 1, out)]
        if op_name(num) == "mul" and num.dtype in FLOAT:  # an integer product may have wrapped
            a, b = num.owner.inputs
            for keep, cancel in ((a, b), (b, a)):
                if cancel is den:
                    return [retype(keep, out)]
    if name == "mul":
        a, b = node.inputs
        for quotient, other in ((a, b), (b, a)):
            if op_name(quotient) == "true_div" and quotient.owner.inputs[1] is other:
                return [retype(quotient.owner.inputs[0], out)]
    return None


@node_rewriter([Elemwise])
def local_fill_to_alloc(fgraph: FunctionGraph, node: Apply):
    """``fill(model, value)`` -> ``value`` when it already has the result's type, else
    ``alloc(value, *shape)``: either way the model is no longer needed for its shape."""
    out = node.outputs[0]
    if op_name(out) != "second":
        return None
    value = node.inputs[1]
    if value.type == out.type:
        return [value]
    lengths = [shape_feature(fgraph).entry(out, d) for d in range(out.ndim)]
    return [retype(alloc(value, *lengths), out, same_shape=True)]


@node_rewriter([Elemwise])
def local_elemwise_alloc(fgraph: FunctionGraph, node: Apply):
    """An alloc of a broadcastable ``v`` read by an elementwise op is not filled just to be
    read once (the gradient of ``c * (w ** 2).sum()`` is ``alloc(c, *w.shape) * 2 * w``):

    - ``elemwise(alloc(v, *shape), y)`` -> ``elemwise(v, y)`` when ``y`` provably has every
      length the alloc gives (a length no other input vouches for keeps its alloc, and the
      check that comes with it);
    - ``elemwise(alloc(v, *shape), c)`` with only broadcastable ``c`` ->
      ``alloc(elemwise(v, c), *shape)``, so the alloc moves up to the op that fixes its shape.
    """
    feature = shape_feature(fgraph)
    inputs = list(node.inputs)
    for k, var in enumerate(node.inputs):
        if var.owner is None or not isinstance(var.owner.op, Alloc):
            continue
        value, *lengths = var.owner.inputs
        if not all(value.broadcastable) or any(o.ndim != var.ndim for o in inputs):
            continue
        pad = var.ndim - value.ndim
        if pad:
            value = DimShuffle(value.broadcastable, ["x"] * pad + list(range(value.ndim)))(value)
        others = inputs[:k] + inputs[k + 1:]
        if len(node.outputs) == 1 and all(all(o.broadcastable) for o in others):
            lifted = node.op.make_node(*inputs[:k], value, *inputs[k + 1:]).outputs[0]
            return [retype(alloc(lifted, *lengths), node.outputs[0])]
        if all(var.broadcastable[d] or any(not o.broadcastable[d] and same_length(feature, o, d, n)
                                           for o in others)
               for d, n in enumerate(lengths)):
            inputs[k] = value
    if inputs == list(node.inputs):
        return None
    return [retype(n, o) for n, o in zip(node.op.make_node(*inputs).outputs, node.outputs)]


def same_length(feature: object, other: Variable, d: int, length: Variable) -> bool:
    """Whether ``length`` is provably ``other``'s length ``d``."""
    entry = feature.shape(other)[d]
    if entry is length:
        return True
    if isinstance(entry, int):
        fixed = static_value(length)
        return fixed is not None and entry == int(fixed)
    node = length.owner  # another read of the same length: Shape_i(d) of other, or of its twin
    return (node is not None and isinstance(node.op, Shape_i) and node.op.i == d
            and (node.inputs[0] is other or feature.shape(node.inputs[0])[d] is entry))


# ------------------------------------------------------------- dimshuffles
@node_rewriter([DimShuffle])
def local_dimshuffle_merge(fgraph: FunctionGraph, node: Apply):
    """A chain of DimShuffles -> one, or none when together they keep every axis in place
    (a double transpose): in one step, so a walk that does not revisit new nodes ends clean."""
    x = node.inputs[0]
    if x.owner is None or not isinstance(x.owner.op, DimShuffle):
        return None
    order = list(node.op.new_order)
    while x.owner is not None and isinstance(x.owner.op, DimShuffle):
        first = x.owner.op.new_order
        order = ["x" if i == "x" else first[i] for i in order]
        x = x.owner.inputs[0]
    if order == list(range(x.ndim)):
        return [retype(x, node.outputs[0])]
    return [retype(DimShuffle(x.broadcastable, order)(x), node.outputs[0])]


@node_rewriter([DimShuffle])
def local_dimshuffle_identity(fgraph: FunctionGraph, node: Apply):
    """A DimShuffle that keeps every axis in place -> its input."""
    x = node.inputs[0]
    if node.op.new_order != tuple(range(x.ndim)):
        return None
    return [retype(x, node.outputs[0])]


@node_rewriter([DimShuffle])
def local_lift_transpose_through_dot(fgraph: FunctionGraph, node: Apply):
    """``dot(a, b).T`` -> ``dot(b.T, a.T)`` for matrices, the product used nowhere else: the
    transposes then meet those of the inputs (merging away), and the sum the product is
    added to sees a plain dot (gemm)."""
    x = node.inputs[0]
    if (tuple(node.op.new_order) != (1, 0) or x.owner is None or type(x.owner.op) is not Dot
            or any(i.ndim != 2 for i in x.owner.inputs) or not single_client(fgraph, x)):
        return None
    a, b = x.owner.inputs
    return [retype(Dot()(b.T, a.T), node.outputs[0])]


@node_rewriter([DimShuffle])
def local_dimshuffle_lift(fgraph: FunctionGraph, node: Apply):
    """``dimshuffle(f(a, b))`` -> ``f(dimshuffle(a), dimshuffle(b))`` for elementwise ``f``.

    Moving DimShuffles towards the inputs lets them merge with the ones
    broadcasting adds, and gives fusion longer chains of equal shape. Only
    through results the DimShuffle is the one use of, so nothing is computed
    twice. The DimShuffle goes up the whole chain in one step: a chain of
    thousands of elementwise ops costs one pass, not one pass per op.
    """
    if not _liftable(fgraph, node.inputs[0]):
        return None
    return [retype(_lifted(fgraph, node.op.new_order, node.inputs[0]), node.outputs[0])]


def _liftable(fgraph: FunctionGraph, var) -> bool:
    owner = var.owner
    return (owner is not None and isinstance(owner.op, Elemwise) and not owner.op.inplace_pattern
            and single_client(fgraph, var))


def _lifted(fgraph: FunctionGraph, order: tuple, root):
    """``dimshuffle(order)(root)`` rebuilt with the DimShuffle pushed above every liftable
    elementwise producer (an iterative walk: chains may be deeper than the recursion limit)."""
    done: dict = {}
    stack = [(root, False)]
    while stack:
        var, expanded = stack.pop()
        if var in done:
            continue
        if not _liftable(fgraph, var):
            owner = var.owner
            if owner is not None and isinstance(owner.op, DimShuffle):
                inner = owner.inputs[0]
                merged = ["x" if i == "x" else owner.op.new_order[i] for i in order]
                identity = merged == list(range(inner.ndim))  # transposes that cancel
                done[var] = inner if identity else DimShuffle(inner.broadcastable, merged)(inner)
            else:
                done[var] = DimShuffle(var.broadcastable, order)(var)
        elif not expanded:
            stack.append((var, True))
            stack.extend((i, False) for i in var.owner.inputs if i not in done)
        else:
            done[var] = var.owner.op(*[done[i] for i in var.owner.inputs])
    return done[root]


@node_rewriter([Subtensor])
def local_subtensor_of_elemwise(fgraph: FunctionGraph, node: Apply):
    """``f(x, y, s)[idx]`` -> ``f(x[idx], y[idx], s)`` for an elementwise ``f`` whose inputs have
    its result's broadcast pattern, or are broadcast scalars (kept as scalars).

    Only the part that is read gets computed: Theano-era code slices a cast of
    the whole label vector in its ``givens`` (``T.cast(y, 'int32')[i*n:(i+1)*n]``),
    which otherwise converts every label on every call; ``exp(x + b)[0]`` computes
    one row. Only through results the indexing is the one use of, so nothing is
    computed twice.
    """
    x = node.inputs[0]
    owner = x.owner
    if (owner is None or not isinstance(owner.op, Elemwise) or owner.op.inplace_pattern
            or len(owner.outputs) != 1 or not single_client(fgraph, x)):
        return None
    out = node.outputs[0]
    inputs = []
    for i in owner.inputs:
        if i.broadcastable == x.broadcastable:
            inputs.append(node.op(i, *node.inputs[1:]))
        elif all(i.broadcastable):
            scalar = DimShuffle(i.broadcastable, [])(i) if i.ndim else i
            inputs.append(DimShuffle((), ["x"] * out.ndim)(scalar) if out.ndim else scalar)
        else:
            return None  # a row or column broadcast along some axes: its index would differ
    return [retype(owner.op(*inputs), out)]


# ----------------------------------------------------- reshapes and casts
@node_rewriter([Reshape])
def local_useless_reshape(fgraph: FunctionGraph, node: Apply):
    """A reshape to the shape its input already has -> the input."""
    x, shp = node.inputs
    if vector_length(shp) != x.ndim:
        return None
    feature = shape_feature(fgraph)
    wildcards = 0
    for i, length in enumerate(feature.shape(x)):
        wanted = vector_entry(shp, i)
        if isinstance(wanted, int) and wanted == -1:
            wildcards += 1
        elif _length_key(feature, wanted) != _length_key(feature, length):
            return None
    if wildcards > 1:
        return None
    return [retype(x, node.outputs[0], same_shape=True)]


def _length_key(feature, length) -> object:
    """A stand-in for a length that compares equal for equal lengths the graph can prove:
    the int when fixed, else the computation producing it (op and inputs)."""
    if isinstance(length, Variable) and length.owner is not None and isinstance(length.owner.op, Shape_i):
        length = feature.shape(length.owner.inputs[0])[length.owner.op.i]
    if isinstance(length, int):
        return length
    value = static_value(length)
    if value is not None:
        return int(value)
    if length.owner is None:
        return length
    return (length.owner.op, tuple(length.owner.inputs), length.index)


@node_rewriter([Elemwise])
def local_useless_cast(fgraph: FunctionGraph, node: Apply):
    """A cast to the dtype its input already has -> the input."""
    op = node.op
    if op.inplace_pattern or not isinstance(op.scalar_op, Cast):
        return None
    if node.inputs[0].dtype != op.scalar_op.dtype:
        return None
    return [retype(node.inputs[0], node.outputs[0])]


@node_rewriter([Subtensor])
def local_useless_subtensor(fgraph: FunctionGraph, node: Apply):
    """``x[:]`` (a Subtensor with no index items: full slices only) -> ``x``. Built as a node so
    that ``set_subtensor(x[:], y)`` sees the indexing, as in Theano."""
    if node.op.idx_list:
        return None
    return [retype(node.inputs[0], node.outputs[0])]


@node_rewriter([Join])
def local_join_1(fgraph: FunctionGraph, node: Apply):
    """A join of one tensor (``Join()(axis, x)``, which ``join`` never builds) -> ``x``."""
    if len(node.inputs) != 2:
        return None
    return [retype(node.inputs[1], node.outputs[0], same_shape=True)]


for _rewriter in (local_remove_gradient_ops, local_useless_elemwise, local_mul_one, local_pow_one, local_add_zero, local_double_neg,
                  local_neg_pairs, local_dimshuffle_merge, local_dimshuffle_identity, local_useless_cast,
                  local_useless_subtensor, local_join_1):
    rewrites.register(_rewriter, "canonicalize", "fast_run", "fast_compile")
for _rewriter in (local_sub_self, local_mul_zero, local_div_simplify, local_fill_to_alloc,
                  local_elemwise_alloc, local_dimshuffle_lift, local_lift_transpose_through_dot,
                  local_subtensor_of_elemwise, local_useless_reshape):
    rewrites.register(_rewriter, "canonicalize", "fast_run")
