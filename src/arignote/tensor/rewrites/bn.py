"""Batch normalization's abstract ops become their graphs of reductions and elementwise
ops (``tensor.nnet.bn.LOWERED``) in the specialize phase: fusion then makes few passes
of them on the CPU, and placement moves them to a GPU with the ordinary kernels."""
from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.nnet.bn import LOWERED


@node_rewriter(list(LOWERED))
def local_abstract_batch_norm(fgraph: FunctionGraph, node: Apply):
    return LOWERED[type(node.op)](node)


rewrites.register(local_abstract_batch_norm, "specialize", "fast_run", "fast_compile")
