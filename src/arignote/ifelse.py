"""``ifelse``: Theano's lazy conditional. Only the branch the scalar condition picks runs.

``ifelse(cond, then_branch, else_branch)`` takes one variable or a list per
branch (the same number, pairwise of one dtype and rank) and returns the
``then`` values when ``cond`` is true, else the ``else`` values. Unlike
``switch`` (elementwise, both sides computed), the nodes that only the
branch not taken needs are not run at all: the executor schedules them
under the condition (compile/lazy.py). A constant condition is resolved when
the function is compiled.
"""
from __future__ import annotations

from typing import Any

from arignote.gradient import register_grad
from arignote.graph.basic import Apply, Op, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.alloc import zeros_like
from arignote.tensor.shape import patternbroadcast
from arignote.tensor.type import TensorType
from arignote.tensor.variable import TensorConstant, as_tensor_variable

__all__ = ["IfElse", "ifelse"]


class IfElse(Op):
    """``n_outs`` outputs: inputs ``1..n_outs`` when input 0 (a scalar) is true, else the next ``n_outs``.

    Each output is a view of the input it passes on, whatever ``as_view`` says (it is
    kept for Theano's signature); the executor copies where the aliasing rules require.
    """

    __props__ = ("n_outs", "name")
    stays_on_cpu = "ifelse picks its branch on the host; the values of the branch it takes pass through"

    def __init__(self, n_outs: int, as_view: bool = False, gpu: bool = False, name: str | None = None):
        self.n_outs = int(n_outs)
        self.as_view, self.gpu = bool(as_view), bool(gpu)
        self.name = name
        self.view_map = {k: [1 + k, 1 + self.n_outs + k] for k in range(self.n_outs)}

    def __str__(self) -> str:
        return f"if{{{self.name}}}" if self.name else "if{}"

    def branch_inputs(self, node: Apply) -> tuple[range, range]:
        """The input positions of the then branch and of the else branch (compile/lazy.py)."""
        return range(1, 1 + self.n_outs), range(1 + self.n_outs, 1 + 2 * self.n_outs)

    def make_node(self, cond: Any, *branches: Any) -> Apply:
        if len(branches) != 2 * self.n_outs:
            raise TypeError(f"{self} takes a condition and {2 * self.n_outs} branch values, got "
                            f"{len(branches)}")
        cond = as_tensor_variable(cond)
        if cond.ndim != 0:
            raise TypeError(f"ifelse: the condition {cond.describe()} must be a scalar (0 is false, "
                            f"anything else true), got {cond.type.describe()}: reduce it, e.g. with .any()")
        then, orelse = branches[:self.n_outs], branches[self.n_outs:]
        pairs = [_same_type(t, e, k) for k, (t, e) in enumerate(zip(then, orelse))]
        inputs = [cond] + [t for t, _ in pairs] + [e for _, e in pairs]
        return Apply(self, inputs, [t.type() for t, _ in pairs])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        first = 1 if inputs[0] else 1 + self.n_outs
        for k, cell in enumerate(output_storage):
            cell[0] = inputs[first + k]

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        from arignote.tensor import math as tm
        cond = node.inputs[0]
        return [tuple(tm.switch(cond, a, b) for a, b in zip(then, orelse))
                for then, orelse in zip(input_shapes[1:1 + self.n_outs], input_shapes[1 + self.n_outs:])]


def _same_type(then: Any, orelse: Any, k: int) -> tuple[Variable, Variable]:
    """The two values of output ``k``, given one type (tensors: the less broadcastable pattern)."""
    then = then if isinstance(then, Variable) else as_tensor_variable(then)
    orelse = orelse if isinstance(orelse, Variable) else as_tensor_variable(orelse)
    if then.type == orelse.type:
        return then, orelse
    tensors = isinstance(then.type, TensorType) and isinstance(orelse.type, TensorType)
    if tensors and then.dtype == orelse.dtype and then.ndim == orelse.ndim:
        pattern = tuple(a and b for a, b in zip(then.broadcastable, orelse.broadcastable))
        return patternbroadcast(then, pattern), patternbroadcast(orelse, pattern)
    raise TypeError(f"ifelse: the two branches of output {k} must have the same dtype and number of "
                    f"dimensions, got {_text(then)} (then) and {_text(orelse)} (else): cast one of "
                    "them, e.g. with tensor.cast(value, dtype)")


def _text(var: Variable) -> str:
    describe = getattr(var.type, "describe", None)
    return f"{var.describe()} ({describe() if describe else var.type})"


def ifelse(condition: Any, then_branch: Any, else_branch: Any, name: str | None = None) -> Any:
    """``then_branch`` if the scalar ``condition`` is true, else ``else_branch``; only the branch
    taken is computed. Each branch is one variable or a list (then the result is a list)."""
    single = not isinstance(then_branch, (list, tuple))
    then = [then_branch] if single else list(then_branch)
    orelse = [else_branch] if not isinstance(else_branch, (list, tuple)) else list(else_branch)
    if len(then) != len(orelse):
        raise ValueError(f"ifelse: the then branch has {len(then)} values and the else branch "
                         f"{len(orelse)}: give both the same number")
    outputs = IfElse(len(then), name=name).build(condition, *then, *orelse).outputs
    return outputs[0] if single else list(outputs)


@register_grad(IfElse)
def ifelse_grad(op: IfElse, inputs: list, outputs: list, output_grads: list) -> list:
    """The gradient goes to the branch that was taken (zeros to the other); the condition,
    a step, gets none."""
    cond, n = inputs[0], op.n_outs
    then, orelse = inputs[1:1 + n], inputs[1 + n:]
    zeros_then = [zeros_like(t, dtype=g.dtype) for t, g in zip(then, output_grads)]
    zeros_else = [zeros_like(e, dtype=g.dtype) for e, g in zip(orelse, output_grads)]
    g_then = IfElse(n).build(cond, *output_grads, *zeros_then).outputs
    g_else = IfElse(n).build(cond, *zeros_else, *output_grads).outputs
    return [None, *g_then, *g_else]


@node_rewriter([IfElse])
def local_ifelse_constant_condition(fgraph: FunctionGraph, node: Apply):
    """An ``ifelse`` whose condition is a constant is the branch it names."""
    cond = node.inputs[0]
    if not isinstance(cond, TensorConstant):
        return None
    n = node.op.n_outs
    first = 1 if cond.data else 1 + n
    return [patternbroadcast(v, o.broadcastable) if isinstance(o.type, TensorType) else v
            for v, o in zip(node.inputs[first:first + n], node.outputs)]


rewrites.register(local_ifelse_constant_condition, "canonicalize", "fast_run", "fast_compile")
