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
to ``inf * 0 = nan`` for large ``a``."""
from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.nnet.basic import hard_sigmoid, ultra_fast_sigmoid
from arignote.tensor.nnet.mul_trees import compute_mul, parse_mul_tree, perform_sigm_times_exp, simplify_mul
from arignote.tensor.rewrites.utils import op_name, retype, single_client
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
