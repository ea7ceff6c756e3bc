"""Finite-difference checks of ``grad``: ``verify_grad`` and Theano's ``numeric_grad``.

Kept apart from the symbolic differentiation it checks; ``arignote.gradient``
re-exports both names, where Theano had them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.compile.function import function
from arignote.graph.basic import Variable
from arignote.gradient import GradientError, grad
from arignote.scalar.dtypes import DISCRETE, upcast
from arignote.tensor import math as tm
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["verify_grad", "numeric_grad"]


def verify_grad(fun: Callable[..., Variable], pt: Sequence[Any], n_tests: int = 2,
                rng: np.random.RandomState | np.random.Generator | None = None,
                eps: float | None = None, out_type: str | None = None, abs_tol: float | None = None,
                rel_tol: float | None = None, mode: Any = None, cast_to_output_type: bool = False,
                no_debug_ref: bool = True) -> None:
    """Check ``grad`` of ``fun`` at the point ``pt`` against central finite differences.

    The signature is Theano's; ``out_type`` and ``no_debug_ref`` are accepted
    and have no effect. As in Theano, the random projection is float64 unless
    ``cast_to_output_type`` is true and the output is float32, so a float32
    output's cost is summed in float64: summed in float32, its rounding over a
    few hundred elements divided by the step is as large as the tolerance.
    Failures raise ``verify_grad.E_grad`` (GradientError).

    ``fun`` takes one symbolic input per array in ``pt`` (float arrays) and
    returns a symbolic output of any shape (an integer one is projected as a float, so its
    zero gradient is checked, as in Theano); the output is projected on a random
    tensor to get a scalar, ``n_tests`` times. An element passes when
    ``|symbolic - numeric| <= abs_tol + rel_tol * |numeric|``; defaults depend
    on the precision (float64: eps 1e-6, tolerances 1e-5; float32/16: eps 1e-3,
    tolerances 1e-2). Raises GradientError naming the input and the worst element.
    As in Theano, ``fun`` may build in-place ops (``exp_inplace``): the functions are compiled
    with ``accept_inplace`` and every call gets its own copy of the point.
    """
    rng = rng if rng is not None else np.random.RandomState(42)
    pt = [np.array(p) for p in pt]
    for i, p in enumerate(pt):
        if p.dtype.kind != "f":
            raise TypeError(f"verify_grad: point {i} is {p.dtype}; only float points have a "
                            "gradient: pass float arrays")
    # As in Theano, a length-1 dimension of a point is broadcastable, so it broadcasts.
    inputs = [TensorType(p.dtype.name, tuple(n == 1 for n in p.shape))(f"input_{i}")
              for i, p in enumerate(pt)]
    output = as_tensor_variable(fun(*inputs))
    if output.dtype in DISCRETE:
        # As in Theano: an integer output is piecewise constant, so its gradient (zero where
        # it is defined) is checked against finite differences of its float projection.
        output = tm.cast(output, upcast(*[p.dtype.name for p in pt]))
    low = any(p.dtype.itemsize < 8 for p in pt) or output.dtype in ("float16", "float32")
    eps = eps or (1e-3 if low else 1e-6)
    abs_tol = abs_tol if abs_tol is not None else (1e-2 if low else 1e-5)
    rel_tol = rel_tol if rel_tol is not None else (1e-2 if low else 1e-5)
    projection_dtype = output.dtype if cast_to_output_type and output.dtype == "float32" else "float64"
    projection = TensorType(projection_dtype, (False,) * output.ndim)("projection")
    cost = _sum(tm.mul(output, projection))
    options = {"mode": mode, "on_unused_input": "ignore", "accept_inplace": True}
    cost_fn = _on_copies(function(inputs + [projection], cost, **options))
    grad_fn = _on_copies(function(inputs + [projection], grad(cost, inputs, disconnected_inputs="ignore"),
                                  **options))
    out_shape = np.shape(_on_copies(function(inputs, output, **options))(*pt))
    draw = rng.random_sample if isinstance(rng, np.random.RandomState) else rng.random
    for _ in range(n_tests):
        proj = np.asarray(draw(out_shape) + 0.5, dtype=projection_dtype)
        symbolic = grad_fn(*pt, proj)
        for i, p in enumerate(pt):
            numeric = _finite_difference(lambda *args, proj=proj: cost_fn(*args, proj), pt, i, eps)
            _compare(i, p, np.asarray(symbolic[i], dtype=np.float64), numeric,
                     abs_tol, rel_tol, eps)


verify_grad.E_grad = GradientError


def _on_copies(fn: Callable) -> Callable:
    """``fn`` called on copies of its arguments, which an in-place op of its graph may overwrite."""
    return lambda *args: fn(*[np.array(a) for a in args])


def _compare(i: int, p: np.ndarray, analytic: np.ndarray, numeric: np.ndarray,
             abs_tol: float, rel_tol: float, eps: float) -> None:
    with np.errstate(invalid="ignore"):
        err = np.abs(analytic - numeric)
        excess = np.where(np.isfinite(err), err - (abs_tol + rel_tol * np.abs(numeric)), np.inf)
    nonfinite = ~np.isfinite(analytic) & np.isfinite(numeric)
    if not (np.any(excess > 0) or np.any(nonfinite)):
        return
    worst = tuple(int(k) for k in np.unravel_index(int(np.argmax(excess)), excess.shape))
    raise GradientError(
        f"verify_grad: the gradient with respect to input {i} (shape {p.shape}) disagrees with "
        f"finite differences: at index {worst} symbolic {float(analytic[worst])!r} vs numeric "
        f"{float(numeric[worst])!r} (abs_tol={abs_tol}, rel_tol={rel_tol}, eps={eps})")


class numeric_grad:  # noqa: N801 - Theano's name
    """The finite-difference gradient of ``f``, a scalar function of the arrays ``pt``, as
    Theano's ``numeric_grad`` computed it: one-sided steps, ``(f(x + eps) - f(x)) / eps`` per
    element, each call on its own copy of the point. ``eps`` defaults to the largest
    ``type_eps`` of the points' dtypes. ``gf`` holds the gradients: one array when ``pt`` is
    one array, else a list. ``out_type`` is accepted for Theano's signature."""

    type_eps = {"float64": 1e-7, "float32": 3e-4, "float16": 1e-1}

    def __init__(self, f: Callable[..., Any], pt: Any, eps: float | None = None, out_type: Any = None):
        single = not isinstance(pt, (list, tuple))
        points = [np.array(p) for p in ([pt] if single else pt)]
        for i, p in enumerate(points):
            if p.dtype.name not in self.type_eps:
                raise TypeError(f"numeric_grad: point {i} is {p.dtype}; finite differences need "
                                f"float points ({', '.join(self.type_eps)}): pass float arrays")
        eps = eps if eps is not None else max(self.type_eps[p.dtype.name] for p in points)
        base = float(f(*[p.copy() for p in points]))
        grads = []
        for i, p in enumerate(points):
            g = np.zeros(p.size)
            for k in range(p.size):
                moved = [q.copy() for q in points]
                moved[i].reshape(-1)[k] += eps
                g[k] = (float(f(*moved)) - base) / eps
            grads.append(g.reshape(p.shape))
        self.gf = grads[0] if single else grads

    @staticmethod
    def abs_rel_err(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
        """``|a - b|`` and that over ``|a| + |b|`` (at least 1e-8), elementwise."""
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        abs_err = np.abs(a - b)
        return abs_err, abs_err / np.maximum(np.abs(a) + np.abs(b), 1e-8)

    def abs_rel_errors(self, g_pt: Any) -> list[tuple[np.ndarray, np.ndarray]]:
        """``abs_rel_err`` of each symbolic gradient in ``g_pt`` against ``gf``."""
        numeric = self.gf if isinstance(self.gf, list) else [self.gf]
        symbolic = g_pt if isinstance(g_pt, (list, tuple)) else [g_pt]
        if len(symbolic) != len(numeric):
            raise ValueError(f"numeric_grad: {len(symbolic)} gradients given for {len(numeric)} points")
        return [self.abs_rel_err(a, b) for a, b in zip(symbolic, numeric)]

    def max_err(self, g_pt: Any, abs_tol: float, rel_tol: float) -> tuple[int, int, float, float]:
        """The worst element, where an element's error is the smaller of its absolute error over
        ``abs_tol`` and its relative error over ``rel_tol`` (so a pass is an error of at most 1):
        ``(point index, flat position, its absolute error, its relative error)``."""
        worst = (-1.0, 0, 0, 0.0, 0.0)
        for i, (abs_err, rel_err) in enumerate(self.abs_rel_errors(g_pt)):
            if abs_err.size == 0:
                continue
            scaled = np.minimum(abs_err / abs_tol, rel_err / rel_tol).reshape(-1)
            k = int(np.argmax(scaled))
            if scaled[k] > worst[0]:
                worst = (float(scaled[k]), i, k, float(abs_err.reshape(-1)[k]), float(rel_err.reshape(-1)[k]))
        return worst[1:]


def _finite_difference(cost_fn: Callable, pt: list[np.ndarray], i: int, eps: float) -> np.ndarray:
    point = [p.copy() for p in pt]
    flat = point[i].reshape(-1)
    result = np.zeros(flat.size, dtype=np.float64)
    for k in range(flat.size):
        original = flat[k]
        flat[k] = original + eps
        plus = float(cost_fn(*point))
        flat[k] = original - eps
        minus = float(cost_fn(*point))
        flat[k] = original
        # The step actually taken, which float32 rounding may have changed.
        step = float(np.asarray(original + eps, flat.dtype)) - float(np.asarray(original - eps, flat.dtype))
        result[k] = (plus - minus) / step
    return result.reshape(pt[i].shape)
