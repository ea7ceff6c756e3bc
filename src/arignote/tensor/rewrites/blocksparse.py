"""The block-sparse products write into their ``o`` where the destroy check allows
(Theano's ``local_inplace_sparse_block_gemv`` and ``..._outer``): ``o`` is usually a fresh
buffer (the gathered bias, or zeros in a gradient), so no copy of it is needed."""
from __future__ import annotations

from arignote.graph.destroyhandler import can_destroy, replace_in_place
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.nnet.blocksparse import SparseBlockGemv, SparseBlockOuter


class InplaceSparseBlock(GraphRewriter):
    name = "local_inplace_sparse_block"

    def apply(self, fgraph: FunctionGraph) -> int:
        changes = 0
        for node in fgraph.toposort():
            op = node.op if node in fgraph.apply_nodes else None
            if isinstance(op, (SparseBlockGemv, SparseBlockOuter)) and not op.inplace \
                    and can_destroy(fgraph, node, 0) \
                    and replace_in_place(fgraph, node.outputs[0], type(op)(True)(*node.inputs), self.name):
                changes += 1
        return changes


rewrites.register(InplaceSparseBlock(), "inplace", "fast_run")
