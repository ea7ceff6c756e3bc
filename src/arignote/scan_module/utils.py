"""Graph tools for loops (Theano's ``scan_module.scan_utils``): comparing two computations,
and mapping a function over every variable of a graph, inner graphs included."""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Sequence

from arignote.compile.sharedvalue import SharedVariable
from arignote.graph.basic import Constant, Variable
from arignote.graph.traversal import clone_get_equiv, graph_inputs, io_toposort


def equal_computations(xs: Sequence[Variable], ys: Sequence[Variable], in_xs: Sequence[Variable] | None = None,
                       in_ys: Sequence[Variable] | None = None) -> bool:
    """Whether each ``xs[k]`` computes what ``ys[k]`` does: equal ops applied in the same way, down to
    constants of equal value, leaves that are the same variable, or ``in_xs[i]`` and ``in_ys[i]``
    (variables of equal types taken as the same input). A variable of one graph stands for one
    variable of the other throughout."""
    in_xs, in_ys = list(in_xs or ()), list(in_ys or ())
    if len(xs) != len(ys) or len(in_xs) != len(in_ys):
        return False
    forward: dict[Variable, Variable] = {}
    backward: dict[Variable, Variable] = {}

    def pair(x: Variable, y: Variable) -> bool:
        """Record x <-> y; False when either already stands for another."""
        if forward.get(x, y) is not y or backward.get(y, x) is not x:
            return False
        forward[x], backward[y] = y, x
        return True

    for x, y in zip(in_xs, in_ys):
        if x.type != y.type or not pair(x, y):
            return False
    inputs_x, inputs_y = set(in_xs), set(in_ys)
    stack = list(zip(xs, ys))
    while stack:
        x, y = stack.pop()
        if forward.get(x) is y:
            continue
        if x in inputs_x or y in inputs_y or x.type != y.type:
            return False  # an input stands for another variable than this one
        if isinstance(x, Constant) or isinstance(y, Constant):
            if not (isinstance(x, Constant) and isinstance(y, Constant) and x.signature() == y.signature()):
                return False
        elif x.owner is None or y.owner is None:
            if x is not y:
                return False
        else:
            a, b = x.owner, y.owner
            if (x.index != y.index or len(a.inputs) != len(b.inputs) or len(a.outputs) != len(b.outputs)
                    or a.op != b.op):
                return False
            stack.extend(zip(a.inputs, b.inputs))
        if not pair(x, y):
            return False
    return True


def map_variables(replacer: Callable[[Variable], Variable], graphs: Sequence[Variable],
                  additional_inputs: Sequence[Variable] | None = None) -> list[Variable]:
    """``graphs`` rebuilt with every variable ``v`` replaced by ``replacer(v)`` (called once its inputs
    are replaced), inside the inner graphs of Scan and OpFromGraph too.

    A replacement inside an inner graph may use outer variables: they become new
    non-sequences of the loop (new inputs of the OpFromGraph). One that uses a shared
    variable with an update raises NotImplementedError, since the update would then
    run once per use instead of once per call. ``additional_inputs`` are leaves the
    replacer is not called on.
    """
    return _map(replacer, list(graphs), set(additional_inputs or ()), inner_inputs=())


def _map(replacer: Callable, graphs: list[Variable], fixed: set, inner_inputs: Sequence[Variable]) -> list:
    """``graphs`` mapped; ``inner_inputs`` (the inputs of an inner graph) stay themselves."""
    done: dict[Variable, Variable] = {}
    keep = set(inner_inputs) | fixed
    for leaf in graph_inputs(graphs):
        done[leaf] = leaf if leaf in keep else replacer(leaf)
    for node in io_toposort(list(done), graphs):
        inputs = [done.get(v, v) for v in node.inputs]
        rebuild = _rebuilder(node.op)
        if rebuild is not None:
            new_outputs = rebuild(replacer, node, inputs)
        elif all(a is b for a, b in zip(inputs, node.inputs)):
            new_outputs = node.outputs
        else:
            new_outputs = node.clone_with_new_inputs(inputs, strict=False).outputs
        for old, new in zip(node.outputs, new_outputs):
            done[old] = replacer(new)
    return [done.get(g, g) for g in graphs]


def _foreign(inner_outputs: list[Variable], allowed: Sequence[Variable], where: str) -> list[Variable]:
    """The leaves a mapped inner graph reads besides its inputs and constants."""
    allowed = set(allowed)
    foreign = [v for v in graph_inputs(inner_outputs) if v not in allowed and not isinstance(v, Constant)]
    for var in foreign:
        if isinstance(var, SharedVariable) and (var.default_update is not None
                                                or getattr(var, "update", None) is not None):
            raise NotImplementedError(
                f"map_variables: a replacement inside {where} reads the shared variable {var.describe()}, "
                "which has an update: the update would run for each use rather than once per call; "
                "pass its value in as an input instead")
    return foreign


def _rebuild_scan(replacer: Callable, node: Any, inputs: list) -> list:
    from arignote.scan_module.op import Scan
    op = node.op
    inner_outputs = _map(replacer, list(op.inner_outputs), set(), op.inner_inputs)
    foreign = _foreign(inner_outputs, op.inner_inputs, str(op))
    proxies = [v.type(v.name) for v in foreign]
    if foreign:
        equiv = clone_get_equiv(list(op.inner_inputs) + foreign, inner_outputs, copy_inputs=False,
                                replace=dict(zip(foreign, proxies)))
        inner_outputs = [equiv[o] for o in inner_outputs]
    new_op = Scan(list(op.inner_inputs) + proxies, inner_outputs, op.seq_taps, op.state_taps, op.n_nit,
                  op.n_carry, op.n_nonseq + len(foreign), op.as_while, op.truncate_gradient, op.name,
                  op.mode, op.allow_gc, op.profile, op.kept_rows)
    return new_op.make_node(*inputs, *foreign).outputs


def _rebuild_op_from_graph(replacer: Callable, node: Any, inputs: list) -> list:
    from arignote.compile.builders import OpFromGraph
    op = node.op
    inner_outputs = _map(replacer, list(op.outputs), set(), op.inputs)
    foreign = _foreign(inner_outputs, list(op.inputs) + list(op.shared_inputs), str(op))
    extra = [v for v in foreign if not isinstance(v, SharedVariable)]  # OpFromGraph takes shared ones itself
    new_op = OpFromGraph(list(op.inputs) + extra, inner_outputs, inline=op.is_inline, name=op.name, **op.kwargs)
    return new_op.make_node(*inputs[:len(op.inputs)], *extra).outputs


def _rebuilder(op: Any) -> Callable[..., list] | None:
    """How to rebuild a node of ``op`` with its inner graph mapped (None: it has none). The
    imports wait: the Scan op itself imports this module."""
    from arignote.compile.builders import OpFromGraph
    from arignote.scan_module.op import Scan
    return _rebuild_scan if isinstance(op, Scan) else _rebuild_op_from_graph if isinstance(op, OpFromGraph) else None


__all__ = ["equal_computations", "map_variables"]
