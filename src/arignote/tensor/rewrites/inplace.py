"""In-place ops: an Elemwise writes its result into an input buffer, and a Gemm (Gemv, Ger)
updates its ``Z`` (``y``, ``A``) in place, wherever the destroy check proves nobody else needs
that buffer, saving an allocation."""
from __future__ import annotations

from arignote.graph.destroyhandler import can_destroy, replace_in_place
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.gemm import Gemm, Gemv, Ger, gemm_inplace, gemv_inplace, ger_destructive


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
                if inp.type == out.type and can_destroy(fgraph, node, i) and replace_in_place(
                        fgraph, out, Elemwise(node.op.scalar_op, {0: i})(*node.inputs), self.name):
                    changes += 1
                    break
        return changes


# A BLAS update op -> (whether a node of it still copies its first input, its in-place form).
_INPLACE_BLAS = {Gemm: (lambda op: not op.inplace, gemm_inplace), Gemv: (lambda op: not op.inplace, gemv_inplace),
                 Ger: (lambda op: not op.destructive, ger_destructive)}


class InplaceGemm(GraphRewriter):
    """Outputs first: a chain of updates (``gemm(gemm(Z, ...), ...)``) then all go in place,
    each overwriting the buffer of the one before it before that one is made to overwrite
    ``Z`` (a buffer that is already another op's overwritten input counts as a view)."""

    name = "inplace_gemm"

    def apply(self, fgraph: FunctionGraph) -> int:
        changes = 0
        for node in reversed(fgraph.toposort()):
            found = _INPLACE_BLAS.get(type(node.op)) if node in fgraph.apply_nodes else None
            if found is not None and found[0](node.op) and can_destroy(fgraph, node, 0) and replace_in_place(
                    fgraph, node.outputs[0], found[1](*node.inputs), self.name):
                changes += 1
        return changes


rewrites.register(InplaceGemm(), "inplace", "fast_run")
rewrites.register(InplaceElemwise(), "inplace", "fast_run")
