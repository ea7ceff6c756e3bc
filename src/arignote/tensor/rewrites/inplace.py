"""In-place ops: an Elemwise writes its result into an input buffer, and a Gemm (Gemv)
updates its ``Z`` (``y``) in place, wherever the destroy check proves nobody else needs
that buffer, saving an allocation."""
from __future__ import annotations

from arignote.graph.destroyhandler import can_destroy
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.gemm import Gemm, Gemv, gemm_inplace, gemv_inplace


class InplaceElemwise(GraphRewriter):
    name = "inplace_elemwise"

    def apply(self, fgraph: FunctionGraph) -> int:
        changes = 0
        for node in fgraph.toposort():
            if (node not in fgraph.apply_nodes or not isinstance(node.op, Elemwise)
                    or node.op.inplace_pattern):
                continue
            out = node.outputs[0]
            for i, inp in enumerate(node.inputs):
                if inp.type == out.type and can_destroy(fgraph, node, i):
                    new = Elemwise(node.op.scalar_op, {0: i})(*node.inputs)
                    fgraph.replace(out, new, reason=self.name)
                    changes += 1
                    break
        return changes


class InplaceGemm(GraphRewriter):
    name = "inplace_gemm"

    def apply(self, fgraph: FunctionGraph) -> int:
        changes = 0
        for node in fgraph.toposort():
            op = node.op if node in fgraph.apply_nodes else None
            if isinstance(op, (Gemm, Gemv)) and not op.inplace and can_destroy(fgraph, node, 0):
                inplace = gemm_inplace if isinstance(op, Gemm) else gemv_inplace
                fgraph.replace(node.outputs[0], inplace(*node.inputs), reason=self.name)
                changes += 1
        return changes


rewrites.register(InplaceGemm(), "inplace", "fast_run")
rewrites.register(InplaceElemwise(), "inplace", "fast_run")
