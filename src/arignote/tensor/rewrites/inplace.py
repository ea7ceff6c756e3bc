"""In-place ops: an Elemwise writes its result into an input buffer, a Gemm (Gemv, Ger)
updates its ``Z`` (``y``, ``A``) and a set/inc_subtensor its indexed tensor in place,
wherever the destroy check proves nobody else needs that buffer, saving an allocation."""
from __future__ import annotations

from typing import Any
from collections.abc import Callable

from arignote.graph.destroyhandler import can_destroy, replace_in_place
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.gemm import Gemm, Gemv, Ger, gemm_inplace, gemv_inplace, ger_destructive
from arignote.tensor.subtensor import (AdvancedBooleanIncSubtensor, AdvancedIncSubtensor, AdvancedIncSubtensor1,
                                       IncSubtensor)


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


class InplaceUpdates(GraphRewriter):
    """Outputs first: a chain of updates (``gemm(gemm(Z, ...), ...)``,
    ``set_subtensor(set_subtensor(z[0], a)[1], b)``) then all go in place, each overwriting
    the buffer of the one before it before that one is made to overwrite ``Z`` (a buffer that
    is already another op's overwritten input counts as a view). ``table`` maps an op class
    to its in-place form of a node's op, None when the node already is in place."""

    table: dict[type, Callable[[Any], Any]] = {}

    def apply(self, fgraph: FunctionGraph) -> int:
        changes = 0
        for node in reversed(fgraph.toposort()):
            make = self.table.get(type(node.op)) if node in fgraph.apply_nodes else None
            op = make(node.op) if make is not None else None
            if op is not None and can_destroy(fgraph, node, 0) and replace_in_place(
                    fgraph, node.outputs[0], op(*node.inputs), self.name):
                changes += 1
        return changes


class InplaceGemm(InplaceUpdates):
    """Gemm (Gemv, Ger) updating its ``Z`` (``y``, ``A``)."""

    name = "inplace_gemm"
    table = {Gemm: lambda op: None if op.inplace else gemm_inplace,
             Gemv: lambda op: None if op.inplace else gemv_inplace,
             Ger: lambda op: None if op.destructive else ger_destructive}


class InplaceSetSubtensor(InplaceUpdates):
    """``set_subtensor``/``inc_subtensor`` writing into the indexed tensor (Theano's
    ``local_inplace_setsubtensor`` and ``local_inplace_incsubtensor1``)."""

    name = "inplace_setsubtensor"
    table = dict.fromkeys((IncSubtensor, AdvancedIncSubtensor, AdvancedBooleanIncSubtensor, AdvancedIncSubtensor1),
                          lambda op: None if op.inplace else op.inplace_version())


rewrites.register(InplaceGemm(), "inplace", "fast_run")
rewrites.register(InplaceSetSubtensor(), "inplace", "fast_run")
rewrites.register(InplaceElemwise(), "inplace", "fast_run")
