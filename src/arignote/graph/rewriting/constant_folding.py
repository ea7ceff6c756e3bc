"""Constant folding: a node whose inputs are all constants is computed at compile time."""
from __future__ import annotations

import numpy as np

from arignote.graph.basic import Apply, Constant, perform_of
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter


@node_rewriter(name="constant_folding")
def constant_folding(fgraph: FunctionGraph, node: Apply):
    """Ops that must run at call time (random draws, large allocations) set ``foldable = False``."""
    if not node.inputs or not all(isinstance(i, Constant) for i in node.inputs):
        return None
    if not getattr(node.op, "foldable", True):
        return None
    storage = [[None] for _ in node.outputs]
    with np.errstate(all="ignore"):  # log(0) folds to -inf silently, as in a call (compile/fperrors.py)
        perform_of(node)(node, [i.data for i in node.inputs], storage)
    return [out.type.make_constant(cell[0]) for out, cell in zip(node.outputs, storage)]
