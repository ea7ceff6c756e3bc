"""Theano's compound nnet ops (``SoftmaxWithBias``, the one-hot cross-entropy ops and the
gradient ops, ``tensor.nnet.compound``) become their compositions of arignote's ops
(``compound.LOWERED``) in the canonicalize phase: the later phases then stabilize, fuse
and place them like any graph, and the backends run softmax and log_softmax with their
own kernels.

``local_argmax_pushdown`` (Theano's name): the position of the largest probability is the
position of the largest logit, so ``argmax(softmax(x))`` is ``argmax(x)`` along the softmax's
axis (and so for argmin, log_softmax, and every form ``nnet.softmax_logits`` reads: ``SoftmaxWithBias``
before it is lowered, the written-out ``exp(x) / sum(exp(x))``), and the argmax or argmin of a strictly increasing
map (``exp``, ``sigmoid``, ...) is that of its input along any axes. A function computing
only predictions then skips the softmax. Where the map saturates (``sigmoid(40) ==
sigmoid(41)`` in float32) the rounded values tie and the unrewritten graph picks the first;
the rewritten one gives the position of the largest input, the answer the rounding lost.
"""
from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.nnet.basic import Logits, LogSoftmax, softmax_logits
from arignote.tensor.nnet.compound import LOWERED
from arignote.tensor.reduction import Argmax, Argmin
from arignote.tensor.rewrites.utils import op_name

# Unary scalar ops that are strictly increasing on their whole domain (no NaN made from a number).
INCREASING = frozenset({"exp", "expm1", "sigmoid", "softplus", "tanh", "arcsinh", "erf"})


@node_rewriter(list(LOWERED))
def local_lower_compound_nnet_op(fgraph: FunctionGraph, node: Apply):
    return LOWERED[type(node.op)](node)


@node_rewriter([Argmax, Argmin])
def local_argmax_pushdown(fgraph: FunctionGraph, node: Apply):
    x = node.inputs[0]
    source = x.owner
    if source is None:
        return None
    logits = softmax_logits(x)
    if logits is None and isinstance(source.op, LogSoftmax):
        logits = Logits(source.inputs[0], source.op.axis, source.inputs)
    if logits is not None:
        # Increasing along its axis only: across rows the probabilities are not ordered as the logits.
        return [node.op(logits.z)] if node.op.axis == (logits.axis,) else None
    if op_name(x) not in INCREASING or len(source.inputs) != 1:
        return None
    return [node.op(source.inputs[0])]


rewrites.register(local_lower_compound_nnet_op, "canonicalize", "fast_run", "fast_compile")
rewrites.register(local_argmax_pushdown, "canonicalize", "fast_run")
