"""Elementwise fusion: chains of Elemwise nodes become one Composite node.

A producer is absorbed into its consumer when the consumer is its only client
and both have the same broadcastable pattern (so no value is recomputed per
tile). The fused node computes the whole chain in one pass over memory.
"""
from __future__ import annotations

from arignote.graph.basic import Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar.composite import Composite
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.fused_reduce import ElemwiseReduce
from arignote.tensor.reduction import Argmax, Argmin, CAReduce

MAX_INPUTS = 32  # beyond this, kernels with one argument per input get unwieldy on GPUs
MAX_STEPS = 256  # longer chains become several fused nodes


class FusionRewriter(GraphRewriter):
    name = "elemwise_fusion"

    def apply(self, fgraph: FunctionGraph) -> int:
        changes = 0
        for node in reversed(fgraph.toposort()):
            if node not in fgraph.apply_nodes or not _fusable(node):
                continue
            fused = None
            budget = MAX_STEPS
            while fused is None and budget >= 2:
                # Too many distinct inputs for one kernel: fuse a shorter stretch of the chain.
                fused, too_wide = _fuse(fgraph, node.outputs[0], budget)
                budget = budget // 2 if too_wide else 0
            if fused is not None:
                fgraph.replace(node.outputs[0], fused, reason=self.name)
                changes += 1
        return changes


def _fusable(node) -> bool:
    return isinstance(node.op, Elemwise) and not node.op.inplace_pattern and len(node.outputs) == 1


def _fuse(fgraph: FunctionGraph, out: Variable, max_steps: int) -> tuple[Variable | None, bool]:
    """(the fused node's output or None, whether it failed for having too many inputs)."""
    externals: list[Variable] = []
    steps: list[tuple] = []  # (scalar_op, refs); a ref is ("in", k) or ("step", j)
    pattern = out.broadcastable
    outputs = set(fgraph.outputs)

    def absorbable(var: Variable) -> bool:
        node = var.owner
        return (node is not None and _fusable(node) and var.broadcastable == pattern
                and var not in outputs and len(fgraph.clients.get(var, [])) == 1)

    def visit(root: Variable) -> tuple:
        # Iterative post-order walk, so long chains cannot hit the recursion limit.
        refs: dict[Variable, tuple] = {}
        stack = [(root, False)]
        while stack:
            var, expanded = stack.pop()
            if var in refs:
                continue
            absorb = var is root or (absorbable(var) and len(steps) + len(stack) < max_steps)
            if not absorb:
                if var not in externals:
                    externals.append(var)
                refs[var] = ("in", externals.index(var))
            elif not expanded:
                stack.append((var, True))
                stack.extend((i, False) for i in reversed(var.owner.inputs) if i not in refs)
            else:
                args = [refs[i] for i in var.owner.inputs]
                op = var.owner.op.scalar_op
                refs[var] = _inline(op, args, steps) if isinstance(op, Composite) else _step(op, args, steps)
        return refs[root]

    result = visit(out)
    if len(steps) < 2 or len(externals) > MAX_INPUTS:
        return None, len(externals) > MAX_INPUTS
    n = len(externals)

    def number(ref: tuple) -> int:
        return ref[1] if ref[0] == "in" else n + ref[1]

    composite = Composite(n, [v.dtype for v in externals],
                          [(op, tuple(number(r) for r in refs)) for op, refs in steps], number(result))
    fused = Elemwise(composite)(*externals)
    if fused.type != out.type:
        return None, False
    return fused, False


def _step(op, args: list[tuple], steps: list[tuple]) -> tuple:
    steps.append((op, args))
    return ("step", len(steps) - 1)


def _inline(composite: Composite, refs: list[tuple], steps: list[tuple]) -> tuple:
    """Copy an already-fused Composite's steps into the chain being built."""
    local: list[tuple] = list(refs)
    for op, args in composite.steps:
        steps.append((op, [local[a] for a in args]))
        local.append(("step", len(steps) - 1))
    return local[composite.output]


rewrites.register(FusionRewriter(), "fusion", "fast_run")


class ReduceFusion(GraphRewriter):
    """A reduction (CAReduce, Argmax, Argmin) of an Elemwise that has no other client
    becomes one ElemwiseReduce: the mapped array is never stored."""

    name = "reduce_fusion"

    def apply(self, fgraph: FunctionGraph) -> int:
        changes = 0
        outputs = set(fgraph.outputs)
        for node in fgraph.toposort():
            if node not in fgraph.apply_nodes or type(node.op) not in (CAReduce, Argmax, Argmin):
                continue
            mapped = node.inputs[0]
            producer = mapped.owner
            if (producer is None or not _fusable(producer) or mapped in outputs
                    or len(fgraph.clients.get(mapped, [])) != 1):
                continue
            fused = ElemwiseReduce(producer.op.scalar_op, node.op)(*producer.inputs)
            if fused.type == node.outputs[0].type:
                # explain() keeps saying why the reduction stayed on the CPU (placement's record).
                reasons = getattr(fgraph, "placement", None)
                if reasons is not None and node in reasons:
                    reasons[fused.owner] = reasons[node]
                fgraph.replace(node.outputs[0], fused, reason=self.name)
                changes += 1
        return changes


rewrites.register(ReduceFusion(), "late_fusion", "fast_run")
