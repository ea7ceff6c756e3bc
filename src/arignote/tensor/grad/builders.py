"""The gradient of ``OpFromGraph`` (compile/builders.py): another OpFromGraph, built once per op.

It computes, from the op's inputs (shared ones included) and its output
gradients, one gradient per input: the inner graph's own (``grad`` with
known output gradients), or what ``grad_overrides``/``lop_overrides`` say.
A NullType or DisconnectedType gradient is not computed: zeros stand in for it
inside, and the rule hands back a variable of that type.
"""
from __future__ import annotations

from typing import Any

from arignote.compile.builders import OpFromGraph
from arignote.gradient import register_grad, total_grad
from arignote.graph.basic import Variable
from arignote.graph.types import DisconnectedType, NullType
from arignote.tensor.alloc import zeros_like


@register_grad(OpFromGraph)
def op_from_graph_grad(op: OpFromGraph, inputs: list, outputs: list, output_grads: list) -> list:
    grad_op, kinds = op.cached_gradient(lambda: _build(op))
    values = grad_op(*inputs, *output_grads)
    values = values if isinstance(values, list) else [values]
    return [kind() if kind is not None else v for v, kind in zip(values, kinds)]


def _build(op: OpFromGraph) -> tuple[OpFromGraph, list]:
    if isinstance(op.override, OpFromGraph):
        return op.override, [None] * len(op.local_inputs)
    g_outs = [t() for t in op.output_types]
    values, kinds = [], []
    for g, inp in zip(_gradients(op, g_outs), op.local_inputs):
        special = isinstance(getattr(g, "type", None), (NullType, DisconnectedType))
        values.append(zeros_like(inp) if special or g is None else g)
        kinds.append(g.type if special else DisconnectedType() if g is None else None)
    grad_op = OpFromGraph(op.local_inputs + g_outs, values, inline=op.is_inline,
                          name=None if op.name is None else f"{op.name}_grad", on_unused_input="ignore")
    return grad_op, kinds


def _gradients(op: OpFromGraph, g_outs: list) -> list:
    """One gradient (or NullType/DisconnectedType variable, or None) per local input."""
    def default(wrt: list) -> list:
        return total_grad(wrt, dict(zip(op.local_outputs, g_outs)), disconnected_inputs="ignore",
                          return_disconnected="Disconnected", null_gradients="return") if wrt else []

    args = (op.local_inputs, g_outs) if op.lop_type == "grad" else (op.local_inputs, op.local_outputs, g_outs)
    override, n = op.override, len(op.local_inputs)
    if isinstance(override, str) and override == "default":
        return default(op.local_inputs)
    if isinstance(override, Variable):
        return [_special(override)] * n
    if isinstance(override, list):
        if len(override) != len(op.inputs):
            raise ValueError(f"{op}: the gradient overrides have {len(override)} entries for "
                             f"{len(op.inputs)} inputs")
        override = override + ["default"] * (n - len(override))  # the shared inputs'
        wanted = [v for v, o in zip(op.local_inputs, override) if _is_default(o)]
        defaults = iter(default(wanted))
        return [next(defaults) if _is_default(o) else _special(o) if isinstance(o, Variable)
                else _call(op, o, args) for o in override]
    result = _call(op, override, args)
    if not isinstance(result, list) or len(result) not in (len(op.inputs), n):
        raise TypeError(f"{op}: the gradient override must return a list of {len(op.inputs)} "
                        f"gradients, got {result!r}")
    return result + default(op.local_inputs[len(result):])


def _is_default(o: Any) -> bool:
    return isinstance(o, str) and o == "default"


def _call(op: OpFromGraph, fn: Any, args: tuple) -> Any:
    if not callable(fn):
        raise TypeError(f"{op}: a gradient override is 'default', a callable, an OpFromGraph or a "
                        f"NullType/DisconnectedType variable (or a list of these), got {fn!r}")
    return fn(*args)


def _special(var: Variable) -> Variable:
    if not isinstance(var.type, (NullType, DisconnectedType)):
        raise ValueError(f"a gradient override given as a variable must be of NullType or "
                         f"DisconnectedType, got {var.type}")
    return var
