"""Symbolic differentiation: ``grad``, ``Lop``, ``Rop``, ``jacobian``, ``hessian``.

Reverse mode over the graph. The gradient of each Op class is a rule in
``GRAD_RULES`` (registered with ``@register_grad(OpClass)``, kept beside the
other rules of its family under ``tensor/grad/``), so ops stay free of
gradient code; an Op without a rule may still define ``grad(inputs,
output_grads)``. A rule returns one symbolic gradient per input, or None where
the input is not differentiable (integers, indices) or not connected.
Gradients accumulate by addition, and each has its variable's exact type.

A few compositions whose textbook gradient overflows (``log(sigmoid(x))``,
``log(1 - sigmoid(x))``, ``log(softmax(x))``...) are differentiated through a
stable equivalent instead: ``STABLE_FORMS`` holds the functions that
recognise them (see ``register_stable_form``).
"""
from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Callable, Sequence


from arignote.config import config
from arignote.graph.basic import Op, Variable
from arignote.graph.types import DisconnectedType, NullType, disconnected_type, null_type
from arignote.graph.traversal import ancestors, clone_get_equiv, graph_inputs, io_toposort
from arignote.scalar.dtypes import DISCRETE
from arignote.scalar.type import ScalarType
from arignote.tensor import math as tm
from arignote.tensor.alloc import ones_like, zeros_like
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.scalar_conversion import scalar_from_tensor
from arignote.tensor.shape import patternbroadcast
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["grad", "total_grad", "Lop", "Rop", "jacobian", "hessian", "verify_grad", "register_grad", "subgraph_grad",
           "zero_grad", "disconnected_grad", "consider_constant", "undefined_grad", "grad_clip",
           "grad_scale", "ViewGradOp", "ZeroGrad", "ConsiderConstant", "DisconnectedGrad", "UndefinedGrad",
           "GradClip", "GradScale", "zero_grad_", "consider_constant_", "disconnected_grad_",
           "undefined_grad_", "grad_undefined", "grad_not_implemented", "NullType", "DisconnectedType",
           "disconnected_type", "null_type", "register_stable_form", "backpropagate", "GradientError",
           "DisconnectedInputError", "NullTypeGradError", "GRAD_RULES", "STABLE_FORMS", "numeric_grad"]

GradRule = Callable[[Any, list, list, list], list]
GRAD_RULES: dict[type, GradRule] = {}
# A stable form maps a node to (equivalent output, its inputs) or None; see register_stable_form.
StableForm = Callable[[Any], "tuple[Variable, list[Variable]] | None"]
STABLE_FORMS: list[StableForm] = []


def register_grad(*op_types: type) -> Callable[[GradRule], GradRule]:
    """Register ``rule(op, inputs, outputs, output_grads) -> input_grads`` for Op classes."""
    def register(rule: GradRule) -> GradRule:
        for op_type in op_types:
            GRAD_RULES[op_type] = rule
        return rule
    return register


def register_stable_form(form: StableForm) -> StableForm:
    """Register ``form(node) -> (output, sources) | None``.

    When ``form`` recognises ``node`` (say ``log(sigmoid(z))``), it returns a
    fresh graph computing the same value stably from earlier variables of the
    graph (``-softplus(-z)``, sources ``[z]``); the gradient then flows from
    the node's output straight to those sources through the fresh graph,
    skipping the unstable intermediate.
    """
    STABLE_FORMS.append(form)
    return form


def input_grads(node: Any, output_grads: list) -> list:
    """The gradients of ``node``'s inputs given its outputs' gradients."""
    for cls in type(node.op).__mro__:
        rule = GRAD_RULES.get(cls)
        if rule is not None:
            return rule(node.op, list(node.inputs), list(node.outputs), output_grads)
    if type(node.op).grad is Op.grad:
        raise NotImplementedError(f"no gradient is defined for {node.op} (node {node}); "
                                  "register one with arignote.gradient.register_grad")
    return node.op.grad(list(node.inputs), output_grads)


class DisconnectedInputError(ValueError):
    """A variable asked for in ``wrt`` does not influence the cost."""


class GradientError(AssertionError):
    """``verify_grad`` found that the symbolic gradient and finite differences disagree."""


# ------------------------------------------------------------------------ grad
def grad(cost: Variable | None, wrt: Variable | Sequence[Variable],
         consider_constant: Sequence[Variable] | None = None,
         disconnected_inputs: str = "raise", add_names: bool = True, known_grads: dict | None = None,
         return_disconnected: str = "zero", null_gradients: str = "raise") -> Any:
    """The gradient of the scalar ``cost`` with respect to ``wrt`` (one variable, a list or
    a tuple; the result has the same form). Theano's signature and semantics.

    ``consider_constant`` variables still get their gradient, but pass none on
    to what computes them; ``known_grads`` seeds gradients of intermediate
    variables (then ``cost`` may be None); ``disconnected_inputs`` says what to
    do when a ``wrt`` does not influence the cost: 'raise', 'warn' or 'ignore',
    and ``return_disconnected`` what it gets then: 'zero' (zeros), 'None', or
    'Disconnected' (a ``DisconnectedType`` variable). A gradient that does not
    exist (``grad_undefined``, ``grad_not_implemented``) raises
    ``NullTypeGradError`` unless ``null_gradients='return'``. ``add_names``
    names each gradient ``(d<cost>/d<wrt>)`` when both have names.

    Integer variables are differentiated as Theano does: an op computing floats
    from them (``dot``, arithmetic, a cast to float) gives them the float
    gradient, an integer-valued result passes no gradient back (its terms are
    zero), and an integer ``wrt``'s gradient is a float.
    """
    return _grad(cost, wrt, consider_constant, disconnected_inputs, add_names, known_grads,
                 return_disconnected, null_gradients, known_fixed=True)


def total_grad(wrt: Variable | Sequence[Variable], output_grads: dict, **options: Any) -> Any:
    """The gradients of ``wrt`` given those of several outputs (``output_grads``: variable ->
    gradient), where an output computed from another adds to that one's gradient: the
    total derivative that an op of several outputs (OpFromGraph, scan's step) needs.

    ``grad``'s ``known_grads`` differs: a known gradient replaces what flows into its
    variable (Theano's rule). ``options`` are ``grad``'s keywords but ``cost``."""
    return _grad(None, wrt, known_grads=output_grads, known_fixed=False, **options)


def _grad(cost: Variable | None, wrt: Variable | Sequence[Variable],
          consider_constant: Sequence[Variable] | None = None, disconnected_inputs: str = "raise",
          add_names: bool = True, known_grads: dict | None = None, return_disconnected: str = "zero",
          null_gradients: str = "raise", known_fixed: bool = True) -> Any:
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"grad: disconnected_inputs={disconnected_inputs!r}; use 'raise', "
                         "'warn' or 'ignore'")
    if return_disconnected not in _RETURN_DISCONNECTED:
        raise ValueError(f"grad: return_disconnected={return_disconnected!r}; use 'zero', 'None' "
                         "or 'Disconnected'")
    if null_gradients not in ("raise", "return"):
        raise ValueError(f"grad: null_gradients={null_gradients!r}; use 'raise' or 'return'")
    if isinstance(wrt, (set, frozenset)):
        raise TypeError("grad: wrt is a set, whose order is undefined: pass a list, so the "
                        "gradients come back in a known order")
    as_tuple = isinstance(wrt, tuple)
    single = not isinstance(wrt, (list, tuple))
    wrt_list = [wrt] if single else list(wrt)
    seeds = _seeds(cost, known_grads)
    for var in wrt_list:
        # Tensors, arrays on a device (their type has a host twin) and sparse matrices.
        if not isinstance(var, Variable) or not (isinstance(var.type, (TensorType, ScalarType))
                                                 or is_sparse(var) or hasattr(var.type, "host_type")):
            raise TypeError(f"grad: wrt must hold symbolic tensor variables, got "
                            f"{type(var).__name__} {var!r}")
    blocked = list(consider_constant or [])
    for var in blocked:
        if not isinstance(var, Variable):
            raise TypeError(f"grad: consider_constant must hold symbolic variables, got {var!r}")
    live = {v: g for v, g in seeds.items() if not isinstance(g.type, DisconnectedType)}
    cut: set = set()
    # A known gradient replaces what the cost would send through its variable (Theano's rule).
    known = set(seeds) if known_fixed else set()
    grads = backpropagate(live, wrt_list, blocked, cut, known)
    connected = _connected(live, wrt_list, blocked, cut, known)
    name = cost.name if add_names and cost is not None else None
    result = []
    for var in wrt_list:
        g = grads.get(var)
        if g is not None and is_null(g):
            if null_gradients == "raise":
                raise NullTypeGradError(f"grad: the gradient with respect to {var.describe()} does "
                                        f"not exist: {g.type.why_null}")
        elif g is None and var in connected:
            g = var.zeros_like() if is_sparse(var) else _float_zeros_like(var)
        elif g is None:
            g = _disconnected(var, disconnected_inputs, return_disconnected)
        if isinstance(var.type, ScalarType) and isinstance(getattr(g, "type", None), TensorType):
            g = scalar_from_tensor(g)  # a scalar variable's gradient is a scalar
        if name and var.name and g is not None and var not in seeds:
            g.name = f"(d{name}/d{var.name})"
        result.append(g)
    return result[0] if single else tuple(result) if as_tuple else result


_RETURN_DISCONNECTED = ("zero", "None", "none", "Disconnected")


class NullTypeGradError(TypeError):
    """``grad`` met a gradient that does not exist (``grad_undefined``, ``grad_not_implemented``)."""


def grad_undefined(op: Any, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of input ``x_pos`` (``x``) of ``op``, which is mathematically undefined: a
    ``NullType`` variable; ``grad`` raises if it reaches a ``wrt``, ``function`` refuses it."""
    return NullType(f"the gradient of input {x_pos} ({x}) of {op} is mathematically undefined. "
                    f"{comment}".strip())()


def grad_not_implemented(op: Any, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """Like ``grad_undefined``, for a gradient that exists but is not implemented."""
    return NullType(f"the gradient of input {x_pos} ({x}) of {op} is not implemented. "
                    f"{comment}".strip())()


def is_null(var: Any) -> bool:
    return isinstance(getattr(var, "type", None), NullType)


def subgraph_grad(wrt: list[Variable], end: list[Variable], start: dict | None = None,
                  cost: Variable | None = None, details: bool = False) -> tuple:
    """Gradients of ``cost`` and/or the ``start`` gradients (a dict variable -> gradient) with
    respect to ``wrt`` and ``end``, stopping at ``end`` (held constant): backpropagation one
    piece of a graph at a time. Returns ``(wrt_grads, end_grads)``, and with ``details`` also
    the gradients from ``start`` and from ``cost`` (Theano's ``subgraph_grad``)."""
    if cost is None and start is None:
        raise ValueError("subgraph_grad: give a cost, or start gradients")
    if not isinstance(wrt, list) or not isinstance(end, list):
        raise TypeError("subgraph_grad: wrt and end must be lists of variables")
    params = list(dict.fromkeys(wrt + end))
    start_grads = cost_grads = None
    if start is not None:
        start_grads = list(grad(None, params, known_grads=start, consider_constant=end,
                                disconnected_inputs="ignore"))
    if cost is not None:
        cost_grads = list(grad(cost, params, consider_constant=end, disconnected_inputs="ignore"))
    total = start_grads if cost_grads is None else cost_grads if start_grads is None else [
        tm.add(a, b) for a, b in zip(start_grads, cost_grads)]
    by_param = dict(zip(params, total))
    wrt_grads, end_grads = [by_param[v] for v in wrt], [by_param[v] for v in end]
    if details:
        return wrt_grads, end_grads, start_grads, cost_grads
    return wrt_grads, end_grads


def _float_zeros_like(var: Variable) -> Variable:
    """Zeros of ``var``'s shape, in a float dtype (a gradient is never an integer)."""
    return zeros_like(var, None if var.type.dtype not in DISCRETE else config.floatX)


def _seeds(cost: Any, known_grads: dict | None) -> dict[Variable, Variable]:
    seeds: dict[Variable, Variable] = {}
    if cost is not None:
        if is_null(cost):
            raise ValueError(f"grad: the cost is a NullType variable, which has no value: "
                             f"{cost.type.why_null}")
        cost = as_tensor_variable(cost)
        if cost.ndim != 0:
            raise TypeError(f"grad: the cost {cost.describe()} has {cost.ndim} dimensions, but "
                            "must be a scalar: reduce it (cost.sum(), cost.mean()), or use "
                            "jacobian() / Lop() for the gradient of each element")
        # ones_like keeps the cost's inputs in the gradient's graph (Theano's seed; rewriting
        # folds it to the constant 1).
        seeds[cost] = ones_like(cost, cost.dtype if cost.dtype not in DISCRETE else config.floatX)
    for var, g in (known_grads or {}).items():
        if not isinstance(var, Variable):
            raise TypeError(f"grad: known_grads keys must be symbolic variables, got {var!r}")
        if isinstance(getattr(g, "type", None), (NullType, DisconnectedType)):
            seeds[var] = g
            continue
        g = as_tensor_variable(g)
        if g.dtype in DISCRETE:
            raise TypeError(f"grad: the known gradient of {var.describe()} is {g.dtype}: a "
                            "gradient is a float (or a NullType/DisconnectedType variable)")
        if g.ndim != var.ndim and g.ndim != 0:
            raise ValueError(f"grad: the known gradient of {var.describe()} has {g.ndim} "
                             f"dimensions, but {var.describe()} has {var.ndim}")
        g = g if g.ndim != var.ndim else fit_to(g, var)
        seeds[var] = g  # for the cost too: its known gradient replaces the ones
    if not seeds:
        raise ValueError("grad: give a cost, or known_grads")
    return seeds


def connection_rows(node: Any) -> list[list[bool]]:
    """The op's ``connection_pattern(node)`` (one list per input of one bool per output), or
    every input connected to every output."""
    pattern = getattr(node.op, "connection_pattern", None)
    if pattern is None:
        return [[True] * len(node.outputs) for _ in node.inputs]
    rows = pattern(node)
    if not isinstance(rows, list) or len(rows) != len(node.inputs) or not all(
            isinstance(r, list) and len(r) == len(node.outputs) for r in rows):
        raise TypeError(f"{node.op}.connection_pattern must return one list of {len(node.outputs)} "
                        f"bools per input ({len(node.inputs)}), got {rows!r}")
    return rows


def connected_outputs(node: Any, reached: set) -> list[Variable]:
    """The outputs of ``node`` that depend on the inputs in ``reached`` (``connection_rows``)."""
    rows = connection_rows(node)
    return [out for j, out in enumerate(node.outputs)
            if any(rows[i][j] for i, inp in enumerate(node.inputs) if inp in reached)]


def _connected(seeds: dict, wrt: list[Variable], blocked: list[Variable],
               cut: set = frozenset(), known: set = frozenset()) -> set[Variable]:
    """The ``wrt`` variables on some path to a seed (whatever the dtypes on the way); a
    ``blocked`` variable is connected to nothing it is computed from, no path goes
    through a ``cut`` (node, input position), where a rule said DisconnectedType, nor
    into a ``known`` variable from its clients (its gradient is given)."""
    stop = set(blocked)
    reach = set(wrt)
    for node in io_toposort([], list(seeds)):
        reach.update(v for v in connected_outputs(node, reach) if v not in stop)
    if not any(s in reach for s in seeds):
        return set()
    # Walk back from the seeds through reached variables only.
    live: set[Variable] = {s for s in seeds if s in reach}
    stack = list(live)
    while stack:
        var = stack.pop()
        if var.owner is None or var in stop:
            continue
        for i, inp in enumerate(var.owner.inputs):
            if (var.owner, i) in cut:
                continue
            if (inp in reach and inp not in live and inp not in known
                    and var in connected_outputs(var.owner, {inp})):
                live.add(inp)
                stack.append(inp)
    return live & set(wrt)


def _disconnected(var: Variable, policy: str, return_disconnected: str) -> Variable | None:
    message = (f"grad: the cost does not depend on {var.describe()}: remove it from wrt, or pass "
               "disconnected_inputs='ignore' (or 'warn') to get zeros")
    zeros = var.zeros_like if is_sparse(var) else lambda: _float_zeros_like(var)
    return _apply_policy(message, policy, return_disconnected, zeros)


def _apply_policy(message: str, policy: str, return_disconnected: str,
                  zeros: Callable[[], Variable]) -> Variable | None:
    """What grad and Rop give for a disconnected variable: raise, warn or ignore
    (``policy``), then ``return_disconnected``'s None, DisconnectedType or ``zeros()``."""
    if policy == "raise":
        raise DisconnectedInputError(message)
    if policy == "warn":
        warnings.warn(message, stacklevel=4)
    if return_disconnected in ("None", "none"):
        return None
    return disconnected_type() if return_disconnected == "Disconnected" else zeros()


def backpropagate(seeds: dict[Variable, Variable], wrt: Sequence[Variable],
                  consider_constant: Sequence[Variable] = (), cut: set | None = None,
                  known: set = frozenset()) -> dict[Variable, Variable]:
    """Gradients of every variable between ``wrt`` and the seeds, by reverse accumulation.

    A ``consider_constant`` variable gets its gradient but passes none to its
    node. An integer-valued output passes none back (Theano's rule: its terms
    are zeros); a node none of whose inputs depends on ``wrt`` is not
    differentiated. A NullType gradient (one that does not exist) propagates:
    every input connected to such an output gets it. Where a rule returns a
    DisconnectedType, the (node, input position) is added to ``cut``. A ``known``
    variable (``grad``'s known_grads) keeps its seed: its clients add nothing to it.
    """
    blocked = set(consider_constant)
    wrt_set = set(wrt)
    nodes = io_toposort([], list(seeds))
    depends: set[Variable] = set(wrt)
    for node in nodes:
        depends.update(v for v in connected_outputs(node, depends) if v not in blocked)
    grads: dict[Variable, Variable] = {}
    for var, g in seeds.items():
        _accumulate(grads, var, g)
    undefined_above = _undefined_above(nodes, depends)
    for node in reversed(nodes):
        flowing = [o in grads and o not in blocked for o in node.outputs]
        if not any(flowing) or not any(i in depends for i in node.inputs):
            continue
        rows = connection_rows(node)
        nulls = [flowing[j] and is_null(grads[o]) for j, o in enumerate(node.outputs)]
        usable = [flowing[j] and not nulls[j] and _is_float(o) for j, o in enumerate(node.outputs)]
        pairs: Any = []
        if any(usable):
            output_grads = [grads[o] if usable[j] else _no_gradient(o) for j, o in enumerate(node.outputs)]
            pairs = _stable_pairs(node, output_grads, depends, blocked, wrt_set | known)
            if pairs is None:
                in_grads = input_grads(node, output_grads)
                if in_grads is None:
                    raise TypeError(f"the gradient of {node.op} returned None instead of a list "
                                    "of one gradient per input")
                in_grads = list(in_grads)
                if len(in_grads) != len(node.inputs):
                    raise ValueError(f"the gradient of {node.op} returned {len(in_grads)} "
                                     f"gradients for {len(node.inputs)} inputs")
                pairs = list(zip(node.inputs, in_grads))
                if cut is not None:
                    cut.update((node, i) for i, (_, g) in enumerate(pairs)
                               if isinstance(getattr(g, "type", None), DisconnectedType))
        elif any(flowing) and not any(nulls) and undefined_above:
            # Integer outputs pass no gradient back (their terms are zeros), but a gradient
            # that is undefined stays undefined through zeros: the probabilities of a
            # discrete draw, cast(u < undefined_grad(p)) (Theano's rule).
            pairs = [(above, grad_undefined(above.owner.op, 0, above.owner.inputs[0],
                                            "(undefined_grad: such as a discrete draw's probabilities)"))
                     for i, inp in enumerate(node.inputs)
                     if any(rows[i][j] and flowing[j] for j in range(len(node.outputs)))
                     for above in undefined_above.get(inp, ())]
        terms = dict(_pairs_list(pairs))
        for i, inp in enumerate(node.inputs):
            null = next((grads[o] for j, o in enumerate(node.outputs) if nulls[j] and rows[i][j]), None)
            if null is not None:
                terms[inp] = null
        # An input the op connects to no output that has a gradient gets no term (a stable
        # form's sources are earlier variables, connected through the form).
        unreached = set(node.inputs) - {inp for i, inp in enumerate(node.inputs)
                                        if any(rows[i][j] and flowing[j] for j in range(len(node.outputs)))}
        for inp, g in terms.items():
            if (g is None or inp not in depends or inp in unreached or inp in known
                    or isinstance(getattr(g, "type", None), DisconnectedType)):
                continue
            if not is_null(g):
                g = g if is_sparse(g) else as_tensor_variable(g)
                if g.ndim != inp.ndim:
                    raise ValueError(f"the gradient rule of {node.op} gave a {g.ndim}-d gradient "
                                     f"for the {inp.ndim}-d input {inp.describe()}")
                if not (is_sparse(g) or is_sparse(inp)):  # a sparse gradient keeps its rule's type
                    g = fit_to(g, inp)
            _accumulate(grads, inp, g)
    return grads


def _undefined_above(nodes: list, depends: set) -> dict[Variable, frozenset]:
    """For each variable between ``wrt`` and the seeds, the undefined_grad outputs it is
    computed from (itself included); empty (and nothing walked) when there are none."""
    if not any(isinstance(node.op, UndefinedGrad) for node in nodes):
        return {}
    above: dict[Variable, frozenset] = {}
    for node in nodes:
        found = frozenset().union(*(above.get(i, ()) for i in node.inputs if i in depends))
        if isinstance(node.op, UndefinedGrad):
            found = found | {node.outputs[0]}
        if found:
            above.update((o, found) for o in node.outputs)
    return above


def _no_gradient(var: Variable) -> Variable:
    """What a rule gets for an output with no gradient: zeros, or (an output that is not an
    array, such as a random generator's state) a DisconnectedType variable."""
    return zeros_like(var) if isinstance(var.type, TensorType) or hasattr(var.type, "host_type") \
        else disconnected_type()


def is_sparse(var: Any) -> bool:
    """Whether ``var`` is a sparse matrix variable (arignote.sparse): its gradients are
    added by the sparse ops, and a dense variable's gradient may be sparse (sparse_grad)."""
    return getattr(getattr(var, "type", None), "sparse", False)


def add_grads(a: Variable, b: Variable) -> Variable:
    """a + b for two gradient terms, either of which may be sparse."""
    if is_sparse(b):
        return b.__radd__(a)
    return a.__add__(b) if is_sparse(a) else tm.add(a, b)


def _pairs_list(pairs: Any) -> list:
    # A variable given to a node twice (x * x) gets the sum of its terms.
    out: dict = {}
    for inp, g in pairs:
        if g is None or isinstance(getattr(g, "type", None), DisconnectedType):
            continue
        if inp in out and not is_null(out[inp]):
            out[inp] = g if is_null(g) else add_grads(out[inp], g)
        elif inp not in out:
            out[inp] = g
    return list(out.items())


def _is_float(var: Variable) -> bool:
    """Whether gradients flow back through ``var`` (not integer-valued; any non-tensor type,
    such as a GPU array, is judged by its dtype)."""
    return getattr(var.type, "dtype", None) not in DISCRETE and hasattr(var.type, "dtype")


def _stable_pairs(node: Any, output_grads: list, depends: set, blocked: set,
                  wrt: set) -> list | None:
    """(source, gradient) pairs through a stable form of ``node``, or None if none applies.

    A form is not used when a variable it would skip is in ``wrt`` (asked for, or
    given a known gradient) or held constant: it must see (or stop) its gradient.
    """
    if len(node.outputs) != 1:
        return None
    for form in STABLE_FORMS:
        found = form(node)
        if found is None:
            continue
        output, sources = found
        skipped = set(ancestors(node.inputs, blockers=sources)) - set(sources)
        if skipped & (blocked | wrt):
            return None
        sources = [s for s in sources if s in depends and s not in blocked]
        inner = backpropagate({output: fit_to(output_grads[0], output)}, sources, consider_constant=sources)
        return [(s, inner[s]) for s in sources if s in inner]
    return None


def _accumulate(grads: dict, var: Variable, g: Variable) -> None:
    if var not in grads or is_null(g):
        grads[var] = g
    elif not is_null(grads[var]):
        grads[var] = add_grads(grads[var], g)


def fit_to(g: Variable, var: Variable) -> Variable:
    """``g`` (of ``var``'s number of dimensions) given exactly ``var``'s type (a float
    dtype for an integer ``var``).

    Dimensions ``var`` broadcasts along are summed (keeping them, so they stay
    length 1); the broadcastable pattern and dtype are then made ``var``'s.
    """
    summed = [d for d in range(var.ndim) if var.broadcastable[d] and not g.broadcastable[d]]
    if summed:
        g = _sum(g, summed, keepdims=True)
    if g.broadcastable != var.broadcastable:
        g = patternbroadcast(g, var.broadcastable)
    if var.type.dtype in DISCRETE:  # an integer's gradient is a float (Theano's)
        return g if g.dtype not in DISCRETE else tm.cast(g, config.floatX)
    return g if g.dtype == var.type.dtype else tm.cast(g, var.type.dtype)


# ------------------------------------------------------------ derived products
def Lop(f: Variable | Sequence[Variable], wrt: Variable | Sequence[Variable],
        eval_points: Variable | Sequence[Variable], consider_constant: Sequence[Variable] | None = None,
        disconnected_inputs: str = "raise") -> Any:
    """The vector-Jacobian product ``eval_points`` x d``f``/d``wrt`` (reverse mode).

    ``eval_points`` has ``f``'s shape (one per expression when ``f`` is a
    list); the result has ``wrt``'s shape (a list when ``wrt`` is a list).
    """
    fs = list(f) if isinstance(f, (list, tuple)) else [f]
    points = list(eval_points) if isinstance(eval_points, (list, tuple)) else [eval_points]
    if len(fs) != len(points):
        raise ValueError(f"Lop: {len(fs)} expressions but {len(points)} eval_points; give one "
                         "point of each expression's shape")
    return grad(None, wrt, consider_constant=consider_constant,
                known_grads=dict(zip(fs, points)), disconnected_inputs=disconnected_inputs)


def Rop(f: Variable | Sequence[Variable], wrt: Variable | Sequence[Variable],
        eval_points: Variable | Sequence[Variable], disconnected_outputs: str = "raise",
        return_disconnected: str = "zero") -> Any:
    """The Jacobian-vector product d``f``/d``wrt`` x ``eval_points`` (forward mode), with
    Theano's signature; a list or tuple ``f`` gives a list or tuple.

    Computed as the transpose of a Lop: with ``u`` a dummy of ``f``'s type,
    ``Lop(f, wrt, u)`` is linear in ``u``, so the gradient with respect to
    ``u`` of its dot with ``eval_points`` is the Rop. This needs no per-op rule;
    the result does not depend on ``u``'s value, so ``u`` is replaced by zeros.
    A graph holding an op that defines Theano's ``R_op(inputs, eval_points)`` (a
    user's op) is pushed forward node by node instead: each node by its ``R_op``,
    or by the same transpose on that node alone.

    An output that no ``wrt`` reaches through differentiable ops (not connected,
    integer-valued, or behind an undefined gradient) is Theano's disconnected
    output: ``disconnected_outputs`` 'raise' (DisconnectedInputError, a
    ValueError), 'warn' or 'ignore', and it gets ``return_disconnected``: 'zero'
    (zeros), 'None' or 'Disconnected' (a ``DisconnectedType`` variable).
    """
    if disconnected_outputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"Rop: disconnected_outputs={disconnected_outputs!r}; use 'raise', "
                         "'warn' or 'ignore'")
    if return_disconnected not in _RETURN_DISCONNECTED:
        raise ValueError(f"Rop: return_disconnected={return_disconnected!r}; use 'zero', 'None' "
                         "or 'Disconnected'")
    fs = [as_tensor_variable(out) for out in (f if isinstance(f, (list, tuple)) else [f])]
    wrts = list(wrt) if isinstance(wrt, (list, tuple)) else [wrt]
    points = list(eval_points) if isinstance(eval_points, (list, tuple)) else [eval_points]
    if len(wrts) != len(points):
        raise ValueError(f"Rop: {len(wrts)} wrt variables but {len(points)} eval_points; give "
                         "one point of each wrt's shape")
    points = [as_tensor_variable(p) for p in points]
    for k, (w, p) in enumerate(zip(wrts, points)):
        if w.type.ndim != p.type.ndim:
            raise ValueError(f"Rop: wrt {k} ({w.describe()}) is {w.type.ndim}-d but its eval point "
                             f"{p.describe()} is {p.type.ndim}-d: give a point of wrt's shape")
    nodes = io_toposort(graph_inputs(fs), fs)
    push = _pushed_forward if any(hasattr(n.op, "R_op") for n in nodes) else _transposed_lop
    products = [points[wrts.index(out)] if out in wrts else None for out in fs]
    todo = [k for k, out in enumerate(fs) if products[k] is None]
    for k, product in zip(todo, push([fs[k] for k in todo], wrts, points, nodes)):
        products[k] = product
    for k, out in enumerate(fs):
        if products[k] is None:
            products[k] = _disconnected_output(out, disconnected_outputs, return_disconnected)
    if isinstance(f, (list, tuple)):
        return type(f)(products)
    return products[0]


def _transposed_lop(fs: list[Variable], wrts: list[Variable], points: list[Variable],
                    nodes: Any = None) -> list[Variable | None]:
    """Each of ``fs``' Rop by the transpose of a Lop; None for an integer output, one no wrt
    reaches, and the outputs an undefined gradient on the way may reach."""
    live = [out for out in fs if out.dtype not in DISCRETE]
    if not live:
        return [None] * len(fs)
    dummies = {out: out.type(f"rop_dummy_{k}") for k, out in enumerate(live)}
    vjps = total_grad(wrts, dict(dummies), disconnected_inputs="ignore", return_disconnected="None",
                      null_gradients="return")
    if any(is_null(v) for v in vjps):
        if len(live) == 1:
            return [None] * len(fs)
        one_each = {out: _transposed_lop([out], wrts, points)[0] for out in live}
        return [one_each.get(out) for out in fs]
    terms = [_sum(tm.mul(v, p)) for v, p in zip(vjps, points) if v is not None]
    if not terms:
        return [None] * len(fs)
    inner = terms[0] if len(terms) == 1 else tm.add(*terms)
    results = grad(inner, list(dummies.values()), disconnected_inputs="ignore", return_disconnected="None")
    reached = [r for r in results if r is not None]
    left = set(graph_inputs(reached)) & set(dummies.values())
    if left:
        equiv = clone_get_equiv([], reached, copy_inputs=False,
                                replace={d: zeros_like(out) for out, d in dummies.items() if d in left})
        results = [None if r is None else equiv[r] for r in results]
    # A float output computed from a wrt along no differentiable path (through its shape, say)
    # has a zero Rop, as Theano's ops' R_op give; one a wrt does not reach is disconnected.
    wanted = set(wrts)
    by_output = {out: r if r is not None or not wanted & set(ancestors([out])) else zeros_like(out)
                 for out, r in zip(live, results)}
    return [by_output.get(out) for out in fs]


def _pushed_forward(fs: list[Variable], wrts: list[Variable], points: list[Variable],
                    nodes: list) -> list[Variable | None]:
    """Theano's forward sweep, for graphs with an op's own ``R_op``: a tangent per variable
    that depends on a wrt (None where it is not differentiable), node by node in order."""
    tangent: dict[Variable, Variable | None] = dict(zip(wrts, points))
    for node in nodes:
        inputs = list(node.inputs)
        if not any(x in tangent for x in inputs):
            continue
        if hasattr(node.op, "R_op"):
            local = [tangent[x] if x in tangent else zeros_like(x) if isinstance(x.type, TensorType)
                     else None for x in inputs]
            outs = list(node.op.R_op(inputs, local))
        elif any(tangent[x] is None for x in inputs if x in tangent):
            outs = [None] * len(node.outputs)
        else:
            moved = [x for x in inputs if x in tangent]
            outs = _transposed_lop(list(node.outputs), moved, [tangent[x] for x in moved])
        tangent.update(zip(node.outputs, outs))
    return [tangent.get(out) for out in fs]


def _disconnected_output(out: Variable, policy: str, return_disconnected: str) -> Variable | None:
    message = (f"Rop: {out.describe()} does not depend on wrt through differentiable ops (it is "
               "not connected, integer-valued or behind an undefined gradient): pass "
               "disconnected_outputs='ignore' (or 'warn') to get zeros")
    return _apply_policy(message, policy, return_disconnected, lambda: zeros_like(out))


# The rules and jacobian/hessian import this module's names, so they come last.
from arignote.tensor import grad as _rules  # noqa: E402,F401  (registers every rule)
from arignote.tensor.grad.jacobian import hessian, jacobian  # noqa: E402
from arignote.gradient_check import numeric_grad, verify_grad  # noqa: E402
from arignote.tensor.gradient_ops import (ConsiderConstant, DisconnectedGrad, GradClip,  # noqa: E402
                                          GradScale, UndefinedGrad, ViewGradOp, ZeroGrad,
                                          consider_constant, consider_constant_, disconnected_grad,
                                          disconnected_grad_, grad_clip, grad_scale, undefined_grad,
                                          undefined_grad_, zero_grad, zero_grad_)
