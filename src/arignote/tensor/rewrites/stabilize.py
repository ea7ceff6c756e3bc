"""Stabilization: replace forms that lose precision or overflow by equal, safe ones.

``log(1 + x)`` rounds ``1 + 1e-20`` to 1 and returns 0; ``log1p(x)`` keeps
it. ``1 / (1 + exp(-z))`` (and the other written-out sigmoids) become
``sigmoid(z)``, so the forms below apply to them too: written out, ``log(1 -
p)`` at ``z = 30`` is -30.001 and at ``z = 1000`` NaN. ``log(sigmoid(x))`` is
``log(0) = -inf`` once the sigmoid saturates;
``-softplus(-x)`` is exact there. ``log(softmax(x))`` (also indexed: ``log(softmax(x)[rows,
labels])``), ``log(sum(exp(x)))`` and the written-out softmax ``exp(x) / sum(exp(x))``
overflow for large logits; ``log_softmax``, the max-shifted sum and the softmax op do not.

These fix the values of graphs written by hand. Gradients are built before
rewrites run, so ``nnet.categorical_crossentropy`` and
``nnet.binary_crossentropy`` build the stable form themselves when given a
softmax or sigmoid output: then the gradient graph is stable too.
"""
from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar.dtypes import FLOAT
from arignote.tensor import math as _math
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.nnet import Softmax
from arignote.tensor.nnet.basic import exp_ratio_logits, softmax_logits, stable_log
from arignote.tensor.reduction import CAReduce
from arignote.tensor.reduction import max as _max
from arignote.tensor.subtensor import AdvancedSubtensor, AdvancedSubtensor1, Subtensor
from arignote.tensor.rewrites.utils import (is_scalar_constant, op_name, retype, sigmoid_argument,
                                            typed_constant)


def _inner(var):
    return var.owner.inputs[0]


@node_rewriter([Elemwise])
def local_log1p(fgraph: FunctionGraph, node: Apply):
    """``log(1 + x)`` and ``log(x + 1)`` -> ``log1p(x)`` for float ``x``."""
    out = node.outputs[0]
    if op_name(out) != "log" or op_name(node.inputs[0]) != "add":
        return None
    a, b = node.inputs[0].owner.inputs
    for other, one in ((a, b), (b, a)):
        if is_scalar_constant(one, 1) and other.dtype in FLOAT:
            return [retype(_math.log1p(other), out)]
    return None


@node_rewriter([Elemwise])
def local_expm1(fgraph: FunctionGraph, node: Apply):
    """``exp(x) - 1`` and ``exp(x) + (-1)`` -> ``expm1(x)``."""
    out = node.outputs[0]
    name = op_name(out)
    if name not in ("sub", "add"):
        return None
    a, b = node.inputs
    minus_one = -1 if name == "add" else 1
    if op_name(a) == "exp" and is_scalar_constant(b, minus_one):
        return [retype(_math.expm1(_inner(a)), out)]
    if name == "add" and op_name(b) == "exp" and is_scalar_constant(a, -1):
        return [retype(_math.expm1(_inner(b)), out)]
    return None


@node_rewriter([Elemwise])
def local_sigmoid(fgraph: FunctionGraph, node: Apply):
    """``1 / (1 + exp(-z))``, ``exp(z) / (1 + exp(z))``, ``inv(1 + exp(-z))``... -> ``sigmoid(z)``."""
    out = node.outputs[0]
    found = sigmoid_argument(out) if op_name(out) != "sigmoid" else None
    if found is None:
        return None
    w, negate = found
    return [retype(_math.sigmoid(_math.neg(w) if negate else w), out)]


@node_rewriter([Elemwise])
def local_log_sigmoid(fgraph: FunctionGraph, node: Apply):
    """``log(sigmoid(x))`` -> ``-softplus(-x)``; ``log(1 - sigmoid(x))`` and
    ``log1p(-sigmoid(x))`` -> ``-softplus(x)``; ``log1p(exp(x))`` -> ``softplus(x)``."""
    out = node.outputs[0]
    name = op_name(out)
    arg = node.inputs[0]
    if name == "log":
        if op_name(arg) == "sigmoid":
            return [retype(_math.neg(_math.softplus(_math.neg(_inner(arg)))), out)]
        if op_name(arg) == "sub" and is_scalar_constant(arg.owner.inputs[0], 1):
            s = arg.owner.inputs[1]
            if op_name(s) == "sigmoid":
                return [retype(_math.neg(_math.softplus(_inner(s))), out)]
    if name == "log1p":
        if op_name(arg) == "neg" and op_name(_inner(arg)) == "sigmoid":
            return [retype(_math.neg(_math.softplus(_inner(_inner(arg)))), out)]
        if op_name(arg) == "exp":
            return [retype(_math.softplus(_inner(arg)), out)]
    return None


@node_rewriter([Elemwise])
def local_log_softmax(fgraph: FunctionGraph, node: Apply):
    """``log(p)`` -> ``log_softmax(z)`` when ``p`` is a softmax of ``z`` in any form
    (``nnet.softmax_logits``), and so for an indexed softmax (``log(softmax(x)[rows, labels])``,
    a hand-written negative log-likelihood)."""
    out = node.outputs[0]
    arg = node.inputs[0]
    if op_name(out) != "log" or arg.owner is None:
        return None
    if softmax_logits(arg) is not None:
        return [retype(stable_log(arg), out)]
    index = arg.owner
    if not isinstance(index.op, (Subtensor, AdvancedSubtensor, AdvancedSubtensor1)):
        return None
    if softmax_logits(index.inputs[0]) is None:
        return None
    return [retype(index.op(stable_log(index.inputs[0]), *index.inputs[1:]), out)]


@node_rewriter([Elemwise])
def local_logsumexp(fgraph: FunctionGraph, node: Apply):
    """``log(sum(exp(x), axis))`` -> ``log(sum(exp(x - m), axis)) + m``, ``m = max(x, axis)``.

    ``m`` is replaced by 0 where it is infinite, so rows of ``-inf`` still give
    ``-inf`` and rows holding ``+inf`` give ``+inf``, as the plain form does.
    Summing over an empty axis now fails (the max of nothing) where the plain
    form gave ``-inf``.
    """
    out = node.outputs[0]
    total = node.inputs[0]
    if op_name(out) != "log" or total.owner is None or not isinstance(total.owner.op, CAReduce):
        return None
    reduce_op = total.owner.op
    e = _inner(total)
    if reduce_op.scalar_op.name != "add" or not reduce_op.axis or op_name(e) != "exp":
        return None
    x = _inner(e)
    if x.dtype not in FLOAT or x.dtype != e.dtype or _shifted_by_its_max(x):
        return None
    axis = list(reduce_op.axis)
    zero = typed_constant(0, x.dtype)
    peak = _max(x, axis=axis, keepdims=True)
    peak = _math.switch(_math.isinf(peak), zero, peak)
    dropped = peak.dimshuffle([i for i in range(x.ndim) if i not in reduce_op.axis])
    shifted = reduce_op(_math.exp(_math.sub(x, peak)))
    return [retype(_math.add(_math.log(shifted), dropped), out)]


def _shifted_by_its_max(x) -> bool:
    """``x`` is ``y - m`` where ``m`` is made of a max of ``y`` in a few elementwise or
    broadcasting steps: this rewrite's own output (shifting it again would only grow the
    graph, pass after pass, to the phase's growth bound) or a user's stable form."""
    if op_name(x) != "sub":
        return False
    y, m = x.owner.inputs
    frontier = [m]
    for _ in range(4):  # switch(isinf(dimshuffle(max(y))), 0, ...) is three steps deep
        nodes = [v.owner for v in frontier if v.owner is not None]
        if any(isinstance(n.op, CAReduce) and n.op.scalar_op.name == "maximum" and n.inputs[0] is y
               for n in nodes):
            return True
        frontier = [i for n in nodes if isinstance(n.op, (Elemwise, DimShuffle)) for i in n.inputs]
    return False


@node_rewriter([Elemwise])
def local_log_add_exp(fgraph: FunctionGraph, node: Apply):
    """``log(exp(a) + exp(b) + ...)`` -> ``logaddexp`` folded over the terms, each step
    ``max(a, b) + log1p(exp(min(a, b) - max(a, b)))`` (``log(exp(1000) + exp(1000))`` is ``inf`` written out);
    where the maximum is infinite, the step is the maximum, as the plain form gives."""
    out = node.outputs[0]
    total = node.inputs[0]
    if op_name(out) != "log" or op_name(total) != "add" or out.dtype not in FLOAT:
        return None
    terms, todo = [], [total]
    while todo:  # the terms of nested additions, in order: (e^a + e^b) + e^c
        t = todo.pop()
        if op_name(t) == "add":
            todo.extend(reversed(t.owner.inputs))
        else:
            terms.append(t)
    if any(op_name(t) != "exp" for t in terms):
        return None
    result = _inner(terms[0])
    for t in terms[1:]:
        a, b = result, _inner(t)
        peak, low = _math.maximum(a, b), _math.minimum(a, b)
        infinite = _math.isinf(peak)
        finite_peak = _math.switch(infinite, typed_constant(0, peak.dtype), peak)  # no inf - inf
        step = _math.add(peak, _math.log1p(_math.exp(_math.sub(low, finite_peak))))
        result = _math.switch(infinite, peak, step)
    return [retype(result, out)]


@node_rewriter([Elemwise])
def local_softmax_of_exp_ratio(fgraph: FunctionGraph, node: Apply):
    """``exp(x) / sum(exp(x), axis)`` (the sum's axis kept or put back) -> ``softmax(x, axis)``:
    the written-out softmax (Theano's ``softmax_graph``) overflows to NaN for large logits."""
    logits = exp_ratio_logits(node.outputs[0])
    if logits is None:
        return None
    return [retype(Softmax(logits.axis)(logits.z), node.outputs[0])]


for _rewriter in (local_log1p, local_expm1, local_sigmoid, local_log_sigmoid, local_softmax_of_exp_ratio,
                  local_log_softmax, local_logsumexp, local_log_add_exp):
    rewrites.register(_rewriter, "stabilize", "fast_run")
