"""The opt-in rewrites of Theano's nnet docs that trade accuracy for speed: every sigmoid
becomes ``ultra_fast_sigmoid`` (``local_ultra_fast_sigmoid``) or ``hard_sigmoid``
(``local_hard_sigmoid``). They carry only their own names, so a mode runs them only when
asked (``mode.including('local_hard_sigmoid')``), and they run in the specialize phase,
after the stabilize phase has put ``log(sigmoid(x))`` and the like in their stable forms.

``local_sigmoid_below_reshape`` (canonicalize) moves a sigmoid read only by a reshape after
it (``reshape(sigmoid(x))`` -> ``sigmoid(reshape(x))``, the same values and work): the
stabilize phase then finds ``log(1 - sigmoid(x))`` in ``log(1 - flatten(sigmoid(x)))`` and
makes it ``-softplus(x)``, which does not round to ``log(0)`` for large ``x``.

``local_sigm_times_exp`` (stabilize) cancels ``exp(a)`` against ``sigmoid(-a)`` anywhere in a
product (``mul_trees``): ``exp(a) * sigmoid(-a)`` is ``sigmoid(a)``, which does not overflow
to ``inf * 0 = nan`` for large ``a``.

``local_exp_over_1_plus_exp`` (stabilize, Theano's name) reads a quotient of products: each
factor ``1 + exp(t)`` of the denominator becomes ``sigmoid(t)`` when the numerator has a factor
``exp(t)`` (which it takes), else ``sigmoid(-t)``; the other factors and the signs stay. So
``c / (1 + exp(-z))`` is ``c * sigmoid(z)`` for any ``c`` and ``-exp(x) / ((1 + exp(x)) * (1 +
exp(-x)))`` is ``-(sigmoid(x) * sigmoid(x))``, where the written-out quotient is ``inf / inf``
(NaN) past ``x`` ~ 709."""
from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.nnet.basic import hard_sigmoid, ultra_fast_sigmoid
from arignote.tensor import math as _math
from arignote.tensor.nnet.mul_trees import (compute_mul, is_1pexp, is_neg, parse_mul_tree, perform_sigm_times_exp,
                                            simplify_mul)
from arignote.tensor.rewrites.utils import op_name, retype, scalar_constant, single_client, typed_constant
from arignote.tensor.shape import Reshape


def _sigmoid_to(approximation, name: str):
    @node_rewriter([Elemwise], name=name)
    def rewrite(fgraph: FunctionGraph, node: Apply):
        out = node.outputs[0]
        if op_name(out) != "sigmoid":
            return None
        new = retype(approximation(node.inputs[0]), out)
        return None if new is None else [new]
    rewrites.register(rewrite, "specialize", name=name, opt_in=True)
    return rewrite


local_ultra_fast_sigmoid = _sigmoid_to(ultra_fast_sigmoid, "local_ultra_fast_sigmoid")
local_hard_sigmoid = _sigmoid_to(hard_sigmoid, "local_hard_sigmoid")


@node_rewriter([Reshape])
def local_sigmoid_below_reshape(fgraph: FunctionGraph, node: Apply):
    s = node.inputs[0]
    if op_name(s) != "sigmoid" or not single_client(fgraph, s):
        return None
    moved = node.op.make_node(s.owner.inputs[0], *node.inputs[1:]).outputs[0]
    new = retype(s.owner.op(moved), node.outputs[0])
    return None if new is None else [new]


rewrites.register(local_sigmoid_below_reshape, "canonicalize", "fast_run")


@node_rewriter([Elemwise])
def local_sigm_times_exp(fgraph: FunctionGraph, node: Apply):
    out = node.outputs[0]
    if op_name(out) != "mul":
        return None
    tree = parse_mul_tree(out)
    if not perform_sigm_times_exp(tree):
        return None
    new = retype(compute_mul(simplify_mul(tree)), out)
    return None if new is None else [new]


rewrites.register(local_sigm_times_exp, "stabilize", "fast_run")


def _factors(var: Variable) -> tuple[bool, list[Variable]]:
    """``(negated, factors)`` of the product ``var``: its ``mul`` inputs, nested products
    flattened and negations (``neg``, a factor -1, a negative scalar constant) in the flag."""
    inner = is_neg(var)
    if inner is not None:
        negated, factors = _factors(inner)
        return not negated, factors
    if op_name(var) == "mul":
        negated, factors = False, []
        for i in var.owner.inputs:
            n, f = _factors(i)
            negated, factors = negated ^ n, factors + f
        return negated, factors
    value = scalar_constant(var) if all(var.broadcastable) else None
    if isinstance(value, (int, float)) and value < 0:
        return True, [typed_constant(-value, var.dtype)]
    return False, [var]


def _negated(t: Variable) -> Variable:
    inner = is_neg(t)
    return _math.neg(t) if inner is None else inner


def _product(factors: list[Variable], negated: bool) -> Variable:
    value = factors[0] if len(factors) == 1 else _math.mul(*factors)
    return _math.neg(value) if negated else value


@node_rewriter([Elemwise])
def local_exp_over_1_plus_exp(fgraph: FunctionGraph, node: Apply):
    out = node.outputs[0]
    if op_name(out) != "true_div":
        return None
    num_negated, numerator = _factors(node.inputs[0])
    den_negated, denominator = _factors(node.inputs[1])
    exps = [f for f in numerator if op_name(f) == "exp"]
    sigmoids, rest = [], []
    for factor in denominator:
        found = is_1pexp(factor)
        if found is None:
            rest.append(factor)
            continue
        t = found[1]
        match = next((e for e in exps if e.owner.inputs[0] is t), None)
        if match is not None:  # the numerator's exp(t) is taken (compared by identity)
            exps = [e for e in exps if e is not match]
            numerator = [f for f in numerator if f is not match]
        sigmoids.append(_math.sigmoid(t if match is not None else _negated(t)))
    if not sigmoids:
        return None
    kept = [f for f in numerator if scalar_constant(f) != 1 or not all(f.broadcastable)]
    new = _product(sigmoids + kept, num_negated ^ den_negated)
    if rest:
        new = _math.true_div(new, _product(rest, False))
    return None if (new := retype(new, out)) is None else [new]


rewrites.register(local_exp_over_1_plus_exp, "stabilize", "fast_run")