"""Theano's compound nnet ops (``SoftmaxWithBias``, the one-hot cross-entropy ops and the
gradient ops, ``tensor.nnet.compound``) become their compositions of arignote's ops
(``compound.LOWERED``) in the canonicalize phase: the later phases then stabilize, fuse
and place them like any graph, and the backends run softmax and log_softmax with their
own kernels."""
from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.nnet.compound import LOWERED


@node_rewriter(list(LOWERED))
def local_lower_compound_nnet_op(fgraph: FunctionGraph, node: Apply):
    return LOWERED[type(node.op)](node)


rewrites.register(local_lower_compound_nnet_op, "canonicalize", "fast_run", "fast_compile")
