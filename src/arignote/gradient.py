"""Symbolic differentiation: ``grad``, ``Lop``, ``Rop``, ``jacobian``, ``hessian``, ``verify_grad``.

Reverse mode over the graph. The gradient of each Op class is a rule in
``GRAD_RULES`` (registered with ``@register_grad(OpClass)``, kept beside the
other rules of its family under ``tensor/grad/``), so ops stay free of
gradient code; an Op without a rule may still define ``grad(inputs,
output_grads)``. A rule returns one symbolic gradient per input, or None where
the input is not differentiable (integers, indices) or not connected.
Gradients accumulate by addition, and each has its variable's dtype.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence

import numpy as np

from arignote.compile.function import function
from arignote.graph.basic import Variable
from arignote.graph.traversal import ancestors, io_toposort
from arignote.scalar.dtypes import DISCRETE
from arignote.tensor import math as tm
from arignote.tensor.alloc import zeros_like
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant


GradRule = Callable[[Any, list, list, list], list]
GRAD_RULES: dict[type, GradRule] = {}


def register_grad(*op_types: type) -> Callable[[GradRule], GradRule]:
    """Register ``rule(op, inputs, outputs, output_grads) -> input_grads`` for Op classes."""
    def register(rule: GradRule) -> GradRule:
        for op_type in op_types:
            GRAD_RULES[op_type] = rule
        return rule
    return register


def input_grads(node: Any, output_grads: list) -> list:
    """The gradients of ``node``'s inputs given its outputs' gradients."""
    for cls in type(node.op).__mro__:
        rule = GRAD_RULES.get(cls)
        if rule is not None:
            return rule(node.op, list(node.inputs), list(node.outputs), output_grads)
    try:
        return node.op.grad(list(node.inputs), output_grads)
    except NotImplementedError:
        raise NotImplementedError(f"no gradient is defined for {node.op} (node {node}); "
                                  "register one with arignote.gradient.register_grad") from None


class DisconnectedInputError(ValueError):
    """A variable asked for in ``wrt`` does not influence the cost."""


class GradientError(AssertionError):
    """``verify_grad`` found the symbolic gradient and finite differences disagree."""


def grad(cost: Variable | None, wrt: Variable | Sequence[Variable],
         consider_constant: Sequence[Variable] | None = None,
         disconnected_inputs: str = "raise", known_grads: dict | None = None,
         return_disconnected: str = "zero") -> Any:
    """The gradient of the scalar ``cost`` with respect to ``wrt`` (one variable or a list).

    ``consider_constant`` variables are treated as constants (no gradient flows
    through them); ``known_grads`` seeds gradients of intermediate variables
    (then ``cost`` may be None); ``disconnected_inputs`` says what to do when a
    ``wrt`` does not influence the cost: 'raise', 'warn' or 'ignore' (then its
    gradient is zeros, or None with ``return_disconnected='none'``).
    """
    single = not isinstance(wrt, (list, tuple))
    wrt_list = [wrt] if single else list(wrt)
    seeds: dict[Variable, Variable] = {}
    if cost is not None:
        cost = as_tensor_variable(cost)
        if cost.ndim != 0:
            raise TypeError(f"grad: the cost {cost} has {cost.ndim} dimensions, but must be a scalar: "
                            "reduce it (cost.sum(), cost.mean()), or use jacobian() / Lop()")
        if cost.dtype in DISCRETE:
            raise TypeError(f"grad: the cost {cost} is {cost.dtype}, which has no gradient: "
                            "cast it to a float dtype")
        seeds[cost] = constant(np.ones((), dtype=cost.dtype))
    for var, g in (known_grads or {}).items():
        g = as_tensor_variable(g)
        if g.ndim != var.ndim:
            raise ValueError(f"grad: known_grads for {var} has {g.ndim} dimensions, expected {var.ndim}")
        seeds[var] = _cast_like(g, var)
    if not seeds:
        raise ValueError("grad: give a cost, or known_grads")
    for var in wrt_list:
        if not isinstance(var, Variable):
            raise TypeError(f"grad: wrt must hold symbolic variables, got {type(var).__name__} {var!r}")
        if var.type.dtype in DISCRETE:
            raise TypeError(f"grad: {var.describe()} is {var.type.dtype}: integer and boolean "
                            "variables are not differentiable; take the gradient with respect "
                            "to a float variable")
    grads = backpropagate(seeds, wrt_list, consider_constant or [])
    result = []
    for var in wrt_list:
        g = grads.get(var)
        if g is None:
            g = _disconnected(var, disconnected_inputs, return_disconnected)
        result.append(g)
    return result[0] if single else result


def _disconnected(var: Variable, policy: str, return_disconnected: str) -> Variable | None:
    message = (f"grad: the cost does not depend on {var.describe()}: remove it from wrt, or pass "
               "disconnected_inputs='ignore' (or 'warn') to get zeros")
    if policy == "raise":
        raise DisconnectedInputError(message)
    if policy == "warn":
        warnings.warn(message, stacklevel=3)
    elif policy != "ignore":
        raise ValueError(f"disconnected_inputs={policy!r}: use 'raise', 'warn' or 'ignore'")
    if return_disconnected == "none":
        return None
    return _zeros_like(var)


def backpropagate(seeds: dict[Variable, Variable], wrt: Sequence[Variable],
                  consider_constant: Sequence[Variable] = ()) -> dict[Variable, Variable]:
    """Gradients of every variable between ``wrt`` and the seeds, by reverse accumulation."""
    blocked = set(consider_constant)
    wrt_set = set(wrt)
    # Only nodes that lie on a path from some wrt to some seed need a gradient.
    nodes = io_toposort([], list(seeds))
    depends: set[Variable] = set(wrt_set)
    for node in nodes:
        if any(i in depends and i not in blocked for i in node.inputs):
            depends.update(node.outputs)
    needed = set(ancestors(list(seeds)))
    grads: dict[Variable, Variable] = {}
    for var, g in seeds.items():
        _accumulate(grads, var, g)
    for node in reversed(nodes):
        if not any(o in grads for o in node.outputs):
            continue
        if not any(i in depends and i not in blocked for i in node.inputs):
            continue
        output_grads = [grads.get(o) for o in node.outputs]
        output_grads = [g if g is not None else _zeros_like(o) for g, o in zip(output_grads, node.outputs)]
        in_grads = input_grads(node, output_grads)
        if len(in_grads) != len(node.inputs):
            raise ValueError(f"the gradient of {node.op} returned {len(in_grads)} gradients for "
                             f"{len(node.inputs)} inputs")
        for inp, g in zip(node.inputs, in_grads):
            if g is None or inp in blocked or inp not in depends or inp not in needed:
                continue
            if inp.type.dtype in DISCRETE:
                continue
            g = as_tensor_variable(g)
            if g.ndim != inp.ndim:
                raise ValueError(f"{node.op}.grad gave a {g.ndim}-d gradient for the "
                                 f"{inp.ndim}-d input {inp}")
            _accumulate(grads, inp, _cast_like(g, inp))
    return grads


def _accumulate(grads: dict, var: Variable, g: Variable) -> None:
    grads[var] = g if var not in grads else tm.add(grads[var], g)


def _cast_like(g: Variable, var: Variable) -> Variable:
    dtype = var.type.dtype
    return g if g.dtype == dtype else tm.cast(g, dtype)


def _zeros_like(var: Variable) -> Variable:
    return zeros_like(var)


# ------------------------------------------------------------ derived products
def Lop(f: Variable | Sequence[Variable], wrt: Variable | Sequence[Variable],
        eval_points: Variable | Sequence[Variable], consider_constant: Sequence[Variable] | None = None,
        disconnected_inputs: str = "raise") -> Any:
    """The vector-Jacobian product ``eval_points`` x d``f``/d``wrt``."""
    fs = f if isinstance(f, (list, tuple)) else [f]
    points = eval_points if isinstance(eval_points, (list, tuple)) else [eval_points]
    if len(fs) != len(points):
        raise ValueError(f"Lop: {len(fs)} expressions but {len(points)} eval_points")
    return grad(None, wrt, consider_constant=consider_constant, known_grads=dict(zip(fs, points)),
                disconnected_inputs=disconnected_inputs)


def Rop(f: Variable | Sequence[Variable], wrt: Variable | Sequence[Variable],
        eval_points: Variable | Sequence[Variable]) -> Any:
    """The Jacobian-vector product d``f``/d``wrt`` x ``eval_points``.

    Computed as the transpose of a Lop: with ``u`` a dummy of ``f``'s type,
    ``Lop(f, wrt, u)`` is linear in ``u``, so its gradient with respect to ``u``
    after a dot with ``eval_points`` is the Rop. This needs no per-op rule.
    """
    single_f = not isinstance(f, (list, tuple))
    fs = [f] if single_f else list(f)
    wrts = wrt if isinstance(wrt, (list, tuple)) else [wrt]
    points = eval_points if isinstance(eval_points, (list, tuple)) else [eval_points]
    if len(wrts) != len(points):
        raise ValueError(f"Rop: {len(wrts)} wrt variables but {len(points)} eval_points")
    dummies = [out.type() for out in fs]
    vjps = grad(None, wrts, known_grads=dict(zip(fs, dummies)), disconnected_inputs="ignore")
    inner = tm.add(*[(v * as_tensor_variable(p)).sum() for v, p in zip(vjps, points)]) \
        if len(vjps) > 1 else (vjps[0] * as_tensor_variable(points[0])).sum()
    results = grad(inner, dummies, disconnected_inputs="ignore")
    return results[0] if single_f else results


def verify_grad(fun: Callable[..., Variable], pt: Sequence[np.ndarray], n_tests: int = 2,
                rng: np.random.RandomState | np.random.Generator | None = None,
                eps: float | None = None, abs_tol: float | None = None, rel_tol: float | None = None,
                mode: Any = None) -> None:
    """Check ``grad`` of ``fun`` at the points ``pt`` against central finite differences.

    ``fun`` takes symbolic inputs (one per array in ``pt``) and returns a
    symbolic output of any shape; the output is projected on a random tensor
    to get a scalar. Raises GradientError naming the input and the largest
    difference when they disagree.
    """
    rng = rng if rng is not None else np.random.RandomState(42)
    pt = [np.array(p) for p in pt]
    for i, p in enumerate(pt):
        if p.dtype.kind not in "fc":
            raise TypeError(f"verify_grad: point {i} is {p.dtype}; pass float arrays")
    inputs = [TensorType(p.dtype.name, (False,) * p.ndim)(f"input_{i}") for i, p in enumerate(pt)]
    output = as_tensor_variable(fun(*inputs))
    low_precision = any(p.dtype in (np.float16, np.float32) for p in pt) or output.dtype in ("float16", "float32")
    eps = eps or (1e-2 if low_precision else 1e-6)
    abs_tol = abs_tol if abs_tol is not None else (1e-2 if low_precision else 1e-5)
    rel_tol = rel_tol if rel_tol is not None else (1e-2 if low_precision else 1e-5)
    f_out = function(inputs, output, mode=mode, on_unused_input="ignore")
    out_shape = np.shape(f_out(*pt))
    for _ in range(n_tests):
        draw = rng.random_sample if isinstance(rng, np.random.RandomState) else rng.random
        projection = np.asarray(draw(out_shape) + 0.5, dtype=output.dtype)
        proj_var = as_tensor_variable(projection)
        cost = (output * proj_var).sum() if output.ndim else output * proj_var
        symbolic = function(inputs, grad(cost, inputs, disconnected_inputs="ignore"),
                            mode=mode, on_unused_input="ignore")(*pt)
        cost_fn = function(inputs, cost, mode=mode, on_unused_input="ignore")
        for i, p in enumerate(pt):
            numeric = _finite_difference(cost_fn, pt, i, eps)
            analytic = np.asarray(symbolic[i], dtype=np.float64)
            err = np.abs(analytic - numeric)
            tol = abs_tol + rel_tol * np.abs(numeric)
            if np.any(err > tol) or not np.all(np.isfinite(analytic)) and np.all(np.isfinite(numeric)):
                worst = np.unravel_index(np.argmax(err - tol), err.shape) if err.ndim else ()
                raise GradientError(
                    f"verify_grad: the gradient with respect to input {i} (shape {p.shape}) disagrees "
                    f"with finite differences: at index {worst} symbolic {analytic[worst]!r} vs "
                    f"numeric {numeric[worst]!r} (abs_tol={abs_tol}, rel_tol={rel_tol}, eps={eps})")


def _finite_difference(cost_fn: Callable, pt: list[np.ndarray], i: int, eps: float) -> np.ndarray:
    point = [p.copy() for p in pt]
    x = point[i]
    flat = x.reshape(-1)
    result = np.zeros(x.size, dtype=np.float64)
    for k in range(x.size):
        original = flat[k]
        flat[k] = original + eps
        plus = float(cost_fn(*point))
        flat[k] = original - eps
        minus = float(cost_fn(*point))
        flat[k] = original
        result[k] = (plus - minus) / (2 * eps)
    return result.reshape(x.shape)
