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
from arignote.config import config
from arignote.gradient import register_grad, total_grad
from arignote.graph.basic import Variable
from arignote.graph.types import DisconnectedType, NullType
from arignote.tensor.alloc import zeros_like


@register_grad(OpFromGraph)
def op_from_graph_grad(op: OpFromGraph, inputs: list, outputs: list, output_grads: list) -> list:
    grad_op, kinds = op.cached_gradient(lambda: _build(op))
    if isinstance(op.override, OpFromGraph):
        values = grad_op(*_override_args(op, inputs, outputs, output_grads))
    else:
        values = grad_op(*inputs, *output_grads)
    values = values if isinstance(values, list) else [values]
    values += [None] * (len(inputs) - len(values))  # shared inputs an override op leaves out
    return [kind() if kind is not None else v for v, kind in zip(values, kinds)]


def _override_args(op: OpFromGraph, inputs: list, outputs: list, output_grads: list) -> list:
    """A user's override op takes the inputs (only the explicit ones where it has no room
    for the shared ones behind them), then for ``lop_overrides`` the outputs, then the
    output gradients (Theano's forms)."""
    rest = [*outputs, *output_grads] if op.lop_type == "lop" else list(output_grads)
    if len(op.override.inputs) < len(inputs) + len(rest):
        inputs = inputs[:len(op.inputs)]
    return [*inputs, *rest]


def _build(op: OpFromGraph) -> tuple[OpFromGraph, list]:
    if isinstance(op.override, OpFromGraph):
        return op.override, [None] * len(op.local_inputs)
    g_outs = [t() for t in op.output_types]
    values, kinds = [], []
    # The inner graph's placeholders have no test values; the node that applies the
    # gradient op gets its test value from its arguments'.
    with config.change_flags(compute_test_value="off"):
        gradients = _gradients(op, g_outs)
    for g, inp in zip(gradients, op.local_inputs):
        special = isinstance(getattr(g, "type", None), (NullType, DisconnectedType))
        values.append(zeros_like(inp) if special or g is None else g)
        kinds.append(g.type if special else DisconnectedType() if g is None else None)
    rop = {} if _is_default(op.rop_overrides) else {
        "grad_overrides": ["default"] * len(op.local_inputs) + _rop_entries(op)}
    grad_op = OpFromGraph(op.local_inputs + g_outs, values, inline=op.is_inline,
                          name=None if op.name is None else f"{op.name}_grad", on_unused_input="ignore",
                          **rop)
    return grad_op, kinds


def _rop_entries(op: OpFromGraph) -> list:
    """``rop_overrides`` as the gradient op's overrides for its output-gradient inputs:
    ``Rop`` is the transpose of a Lop (gradient.Rop), and the gradient of ``J.T @ g`` with
    respect to ``g``, for output gradients ``w``, is ``J @ w``: the R-op at eval points ``w``."""
    override, n_out, n_in = op.rop_overrides, len(op.outputs), len(op.local_inputs)

    def entry(fn: Any, k: int | None) -> Any:
        if not (callable(fn) or isinstance(fn, OpFromGraph)):
            raise TypeError(f"{op}: an R-op override is 'default', a callable, an OpFromGraph or a "
                            f"NullType/DisconnectedType variable (or a list of these), got {fn!r}")

        def rop(inputs: list, eval_points: list) -> Any:
            inputs = inputs[:n_in]
            result = fn(*inputs, *eval_points) if isinstance(fn, OpFromGraph) else fn(inputs, eval_points)
            if k is None:
                return result
            result = result if isinstance(result, (list, tuple)) else [result]
            if len(result) != n_out:
                raise TypeError(f"{op}: the R-op override must return {n_out} variables, got {result!r}")
            return result[k]
        return rop

    if isinstance(override, Variable):
        return [_special(override)] * n_out
    if isinstance(override, list):
        if len(override) != n_out:
            raise ValueError(f"{op}: the R-op overrides have {len(override)} entries for {n_out} outputs")
        return [o if _is_default(o) else _special(o) if isinstance(o, Variable) else entry(o, None)
                for o in override]
    return [entry(override, k) for k in range(n_out)]


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
