"""Products as sign-carrying trees, and the cancellation ``exp(a) * sigmoid(-a) = sigmoid(a)``
(Theano's ``nnet.sigm`` helpers, under their names).

A tree is ``[negated, inputs]``: ``inputs`` is a list of trees (a product of them) or one
variable (a leaf); ``negated`` says the whole is multiplied by -1. Negations in the graph
(``neg``) fold into the flags, so ``-x * y`` is ``[False, [[True, x], [False, y]]]``. A leaf
whose variable is None stands for 1: what a cancellation leaves behind, which
``simplify_mul`` removes.

``exp(a) / (1 + exp(a))`` is ``sigmoid(a)``, so ``exp(a) * sigmoid(-a)`` is ``sigmoid(a)``:
written out, ``exp(a)`` overflows to ``inf`` for ``a`` past ~709 (float64) and the product
is ``inf * 0 = nan``; the sigmoid stays in [0, 1].
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.tensor import math as _math
from arignote.tensor.rewrites.utils import op_name, scalar_constant
from arignote.tensor.shape import static_value

__all__ = ["parse_mul_tree", "compute_mul", "simplify_mul", "is_1pexp", "is_exp", "is_neg",
           "perform_sigm_times_exp"]


def parse_mul_tree(root: Variable) -> list:
    """The tree of ``root``: products (``mul``) become lists, negations flip the flag."""
    name = op_name(root)
    if name == "mul":
        return [False, [parse_mul_tree(i) for i in root.owner.inputs]]
    if name == "neg":
        negated, inputs = parse_mul_tree(root.owner.inputs[0])
        return [not negated, inputs]
    return [False, root]


def compute_mul(tree: list) -> Variable:
    """The graph of ``tree`` (a product of its inputs, negated where its flag says)."""
    negated, inputs = tree
    if inputs is None:
        raise ValueError("compute_mul: the tree is a leaf of 1 (None): call simplify_mul first")
    value = _math.mul(*[compute_mul(t) for t in inputs]) if isinstance(inputs, list) else inputs
    return _math.neg(value) if negated else value


def simplify_mul(tree: list) -> list:
    """``tree`` without its leaves of 1 (their signs kept) and without products of one input."""
    negated, inputs = tree
    if not isinstance(inputs, list):
        return tree
    kept = []
    for child in map(simplify_mul, inputs):
        if child[1] is None:
            negated ^= child[0]
        else:
            kept.append(child)
    if not kept:
        return [negated, None]
    if len(kept) == 1:
        return [kept[0][0] ^ negated, kept[0][1]]
    return [negated, kept]


def is_neg(var: Variable) -> Variable | None:
    """``v`` when ``var`` is ``-v`` (``neg(v)``, or ``mul`` of ``v`` and the constant -1), else None."""
    name = op_name(var)
    if name == "neg":
        return var.owner.inputs[0]
    if name == "mul" and len(var.owner.inputs) == 2:
        for minus_one, other in (var.owner.inputs, reversed(var.owner.inputs)):
            if _constant_value(minus_one, True) == -1:
                return other
    return None


def is_exp(var: Variable) -> tuple[bool, Variable] | None:
    """``(negated, a)`` when ``var`` is ``exp(a)`` or ``-exp(a)``, else None."""
    inner = is_neg(var)
    negated, var = (True, inner) if inner is not None else (False, var)
    return (negated, var.owner.inputs[0]) if op_name(var) == "exp" else None


def _constant_value(var: Variable, only_process_constants: bool) -> Any:
    """The value of a one-element constant ``var``; with ``only_process_constants`` False, also
    of one computed from constants alone (``static_value``); else None."""
    if only_process_constants:
        return scalar_constant(var)
    value = static_value(var)
    if value is None or np.size(value) != 1:
        return None
    return np.asarray(value).reshape(()).item()


def is_1pexp(t: Variable, only_process_constants: bool = True) -> tuple[bool, Variable] | None:
    """``(False, a)`` when ``t`` is ``1 + exp(a)`` (terms in any order, constants summing to 1),
    else None. ``only_process_constants``: count only constants as the 1 (else also values
    computed from constants)."""
    if op_name(t) != "add":
        return None
    constants, rest = [], []
    for term in t.owner.inputs:
        value = _constant_value(term, only_process_constants)
        (rest if value is None else constants).append(term if value is None else value)
    if len(rest) != 1 or op_name(rest[0]) != "exp" or not constants:
        return None
    return (False, rest[0].owner.inputs[0]) if np.allclose(sum(constants), 1) else None


def _opposite(a: Variable, b: Variable) -> bool:
    """Whether ``a`` is ``-b`` or ``b`` is ``-a`` in the graph."""
    return is_neg(a) is b or is_neg(b) is a


def perform_sigm_times_exp(tree: list) -> bool:
    """Cancel, in place, each ``exp(a)`` leaf of ``tree`` against a ``sigmoid(-a)`` leaf: the
    leaf met first (depth first, left to right) becomes ``sigmoid(a)`` carrying both signs, the
    other a leaf of 1 (None). A sigmoid so made may cancel against a later ``exp``. Returns
    whether anything changed; ``simplify_mul`` then drops the leaves of 1."""
    # Leaves still waiting for their partner, by op: exp(a) waits for sigmoid(-a) and back.
    pending: dict[str, list[list]] = {"exp": [], "sigmoid": []}
    partner = {"exp": "sigmoid", "sigmoid": "exp"}
    changed = False
    for leaf in _leaves(tree):
        kind = op_name(leaf[1])
        if kind not in pending:
            continue
        arg = leaf[1].owner.inputs[0]
        waiting = pending[partner[kind]]
        match = next((m for m in waiting if _opposite(m[1].owner.inputs[0], arg)), None)
        if match is None:
            pending[kind].append(leaf)
            continue
        waiting.remove(match)
        exp_arg = arg if kind == "exp" else match[1].owner.inputs[0]
        # exp(a) * sigmoid(-a) = sigmoid(a), kept in the earlier leaf
        match[:] = [match[0] ^ leaf[0], _math.sigmoid(exp_arg)]
        leaf[:] = [False, None]
        pending["sigmoid"].append(match)
        changed = True
    return changed


def _leaves(tree: list):
    """The leaves (``[negated, variable]`` lists, to edit in place), depth first."""
    if isinstance(tree[1], list):
        for child in tree[1]:
            yield from _leaves(child)
    elif tree[1] is not None:
        yield tree
