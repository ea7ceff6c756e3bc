"""Gradient rules for Elemwise: the scalar table's rules, keyed by scalar op name.

Each rule takes the Elemwise node's inputs, its output and the output
gradient (all tensors, broadcast as in the forward pass) and returns one
gradient per input, or None where the input has none. As in Theano, an
integer input of an op with a float result gets the float gradient (a
division of two integers, a step function, gets none), and an op with an
integer result passes none back. The Elemwise rule
registered below looks the scalar op up here (casts and fused Composites
have rules of their own) and sums each result back over the dimensions the
input was broadcast along.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arignote.gradient import backpropagate, grad_not_implemented, register_grad
from arignote.graph.types import NullType
from arignote.scalar.composite import Composite
from arignote.scalar.dtypes import COMPLEX, DISCRETE
from arignote.scalar.ops import Cast, ScalarOp
from arignote.tensor import math as tm
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.scalar_conversion import elemwise_grads_from_scalar_rule
from arignote.tensor.variable import constant

Rule = Callable[[list, object, object], list]
RULES: dict[str, Rule] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = fn
        return fn
    return register


def c(value: float, like) -> object:
    """A constant of ``like``'s dtype, so rules never upcast float32 graphs."""
    return constant(np.asarray(value, dtype=like.dtype))


def _zero(x) -> object:
    return tm.mul(x, c(0, x))


# Piecewise-constant or boolean-valued functions: zero gradient where defined.
@rule("lt", "gt", "le", "ge", "eq", "neq", "and_", "or_", "xor", "invert", "isnan", "isinf",
      "sgn", "floor", "ceil", "trunc", "round_half_to_even", "round_half_away_from_zero",
      "int_div", "in_range")
def _flat(inputs, out, gz):
    return [_zero(x) for x in inputs]


@rule("add")
def _add(inputs, out, gz):
    return [gz, gz]


@rule("sub")
def _sub(inputs, out, gz):
    return [gz, -gz]


@rule("mul")
def _mul(inputs, out, gz):
    x, y = inputs
    return [gz * y, gz * x]


@rule("true_div")
def _true_div(inputs, out, gz):
    x, y = inputs
    if x.dtype in DISCRETE and y.dtype in DISCRETE:
        return [None, None]
    return [gz / y, -gz * out / y]


@rule("mod")
def _mod(inputs, out, gz):
    x, y = inputs
    return [gz, -gz * tm.floor(x / y)]


def _real_only(name, out, *xs):
    """Theano's rule for ops with no complex gradient here (erf, pow): NotImplementedError."""
    if any(v.dtype in COMPLEX for v in (out, *xs)):
        raise NotImplementedError(f"the gradient of {name} of complex numbers ({out.describe()}) "
                                  "is not defined: differentiate its real and imaginary parts")


@rule("pow")
def _pow(inputs, out, gz):
    x, y = inputs
    _real_only("pow", out, x, y)
    # d/dy is undefined for x <= 0 (log); it is zero wherever the gradient is zero.
    return [gz * y * x ** (y - c(1, y)), gz * out * tm.log(tm.switch(tm.gt(x, c(0, x)), x, c(1, x)))]


@rule("maximum", "minimum")
def _extremum(inputs, out, gz):
    x, y = inputs
    pick_x = tm.eq(out, x)
    return [gz * pick_x, gz * (c(1, gz) - pick_x)]


@rule("arctan2")
def _arctan2(inputs, out, gz):
    y, x = inputs
    r2 = x * x + y * y
    return [gz * x / r2, -gz * y / r2]


@rule("neg")
def _neg(inputs, out, gz):
    return [-gz]


@rule("abs")
def _abs(inputs, out, gz):
    x = inputs[0]
    if x.dtype in COMPLEX:  # d|z|/d(re) + i d|z|/d(im), Theano's form of a complex gradient
        return [gz * x / tm.abs(x)]
    return [gz * tm.sgn(x)]


@rule("identity")
def _identity(inputs, out, gz):
    return [gz]


@rule("sqr")
def _sqr(inputs, out, gz):
    return [gz * c(2, gz) * inputs[0]]


@rule("sqrt")
def _sqrt(inputs, out, gz):
    return [gz * c(0.5, gz) / out]


@rule("inv")
def _inv(inputs, out, gz):
    return [-gz * out * out]


@rule("exp")
def _exp(inputs, out, gz):
    return [gz * out]


@rule("exp2")
def _exp2(inputs, out, gz):
    return [gz * out * c(np.log(2.0), gz)]


@rule("expm1")
def _expm1(inputs, out, gz):
    return [gz * (out + c(1, out))]


@rule("log")
def _log(inputs, out, gz):
    return [gz / inputs[0]]


@rule("log2")
def _log2(inputs, out, gz):
    return [gz / (inputs[0] * c(np.log(2.0), gz))]


@rule("log10")
def _log10(inputs, out, gz):
    return [gz / (inputs[0] * c(np.log(10.0), gz))]


@rule("log1p")
def _log1p(inputs, out, gz):
    return [gz / (c(1, gz) + inputs[0])]


@rule("sin")
def _sin(inputs, out, gz):
    return [gz * tm.cos(inputs[0])]


@rule("cos")
def _cos(inputs, out, gz):
    return [-gz * tm.sin(inputs[0])]


@rule("tan")
def _tan(inputs, out, gz):
    return [gz * (c(1, out) + out * out)]


@rule("arcsin")
def _arcsin(inputs, out, gz):
    x = inputs[0]
    return [gz / tm.sqrt(c(1, gz) - x * x)]


@rule("arccos")
def _arccos(inputs, out, gz):
    x = inputs[0]
    return [-gz / tm.sqrt(c(1, gz) - x * x)]


@rule("arctan")
def _arctan(inputs, out, gz):
    x = inputs[0]
    return [gz / (c(1, gz) + x * x)]


@rule("sinh")
def _sinh(inputs, out, gz):
    return [gz * tm.cosh(inputs[0])]


@rule("cosh")
def _cosh(inputs, out, gz):
    return [gz * tm.sinh(inputs[0])]


@rule("tanh")
def _tanh(inputs, out, gz):
    return [gz * (c(1, out) - out * out)]


@rule("arcsinh")
def _arcsinh(inputs, out, gz):
    x = inputs[0]
    return [gz / tm.sqrt(x * x + c(1, gz))]


@rule("arccosh")
def _arccosh(inputs, out, gz):
    x = inputs[0]
    return [gz / tm.sqrt(x * x - c(1, gz))]


@rule("arctanh")
def _arctanh(inputs, out, gz):
    x = inputs[0]
    return [gz / (c(1, gz) - x * x)]


@rule("deg2rad")
def _deg2rad(inputs, out, gz):
    return [gz * c(np.pi / 180, gz)]


@rule("rad2deg")
def _rad2deg(inputs, out, gz):
    return [gz * c(180 / np.pi, gz)]


# Complex numbers: a gradient holds dC/d(real part) + i dC/d(imaginary part), Theano's convention.
def _real_like(g, x):
    return g if x.dtype in DISCRETE else tm.cast(g, x.dtype)


@rule("real")
def _real(inputs, out, gz):
    x = inputs[0]
    return [tm.complex(gz, _zero(gz)) if x.dtype.startswith("complex") else gz]


@rule("imag")
def _imag(inputs, out, gz):
    x = inputs[0]
    return [tm.complex(_zero(gz), gz) if x.dtype.startswith("complex") else _zero(gz)]


@rule("conj")
def _conj(inputs, out, gz):
    return [tm.conj(gz) if inputs[0].dtype.startswith("complex") else gz]


@rule("angle")
def _angle(inputs, out, gz):
    z = inputs[0]
    if not z.dtype.startswith("complex"):
        return [_zero(z) if z.dtype not in DISCRETE else None]
    re, im = tm.real(z), tm.imag(z)
    scale = gz / (re * re + im * im)
    return [tm.complex(-im * scale, re * scale)]


@rule("complex")
def _complex(inputs, out, gz):
    re, im = inputs
    return [_real_like(tm.real(gz), re), _real_like(tm.imag(gz), im)]


@rule("complex_from_polar")
def _complex_from_polar(inputs, out, gz):
    magnitude, angle = inputs
    gr, gi = tm.real(gz), tm.imag(gz)
    cos, sin = tm.cos(angle), tm.sin(angle)
    return [_real_like(gr * cos + gi * sin, magnitude),
            _real_like(magnitude * (gi * cos - gr * sin), angle)]


@rule("sigmoid")
def _sigmoid(inputs, out, gz):
    return [gz * out * (c(1, out) - out)]


@rule("softplus")
def _softplus(inputs, out, gz):
    return [gz * tm.sigmoid(inputs[0])]


@rule("erf")
def _erf(inputs, out, gz):
    x = inputs[0]
    _real_only("erf", out, x)
    return [gz * c(2 / np.sqrt(np.pi), gz) * tm.exp(-x * x)]


@rule("erfc")
def _erfc(inputs, out, gz):
    x = inputs[0]
    return [-gz * c(2 / np.sqrt(np.pi), gz) * tm.exp(-x * x)]


@rule("erfinv")
def _erfinv(inputs, out, gz):
    return [gz * c(np.sqrt(np.pi) / 2, gz) * tm.exp(out * out)]


@rule("erfcinv")
def _erfcinv(inputs, out, gz):
    return [-gz * c(np.sqrt(np.pi) / 2, gz) * tm.exp(out * out)]


@rule("erfcx")
def _erfcx(inputs, out, gz):
    x = inputs[0]
    return [gz * (c(2, out) * x * out - c(2 / np.sqrt(np.pi), out))]


@rule("j0")
def _j0(inputs, out, gz):
    return [-gz * tm.j1(inputs[0])]


@rule("j1")
def _j1(inputs, out, gz):
    x = inputs[0]
    return [gz * (tm.j0(x) - tm.jv(c(2, out), x)) / c(2, out)]


@rule("i0")
def _i0(inputs, out, gz):
    return [gz * tm.i1(inputs[0])]


@rule("i1")
def _i1(inputs, out, gz):
    x = inputs[0]
    return [gz * (tm.i0(x) + tm.iv(c(2, out), x)) / c(2, out)]


@rule("jv")
def _jv(inputs, out, gz):
    v, x = inputs
    return [grad_not_implemented("jv", 0, v, "(the order)"),
            gz * (tm.jv(v - c(1, out), x) - tm.jv(v + c(1, out), x)) / c(2, out)]


@rule("iv")
def _iv(inputs, out, gz):
    v, x = inputs
    return [grad_not_implemented("iv", 0, v, "(the order)"),
            gz * (tm.iv(v - c(1, out), x) + tm.iv(v + c(1, out), x)) / c(2, out)]


@rule("gammaln")
def _gammaln(inputs, out, gz):
    return [gz * tm.psi(inputs[0])]


@rule("gamma")
def _gamma(inputs, out, gz):
    return [gz * out * tm.psi(inputs[0])]


@rule("chi2sf")
def _chi2sf(inputs, out, gz):
    """d/dx is minus the chi-squared density; the degrees of freedom have no rule."""
    x, k = inputs
    half_k = k / c(2, k)
    log_pdf = (half_k - c(1, k)) * tm.log(x) - x / c(2, x) - half_k * tm.log(c(2, k)) - tm.gammaln(half_k)
    density = tm.switch(tm.gt(x, c(0, x)), tm.exp(log_pdf), c(0, out))
    return [-gz * density, grad_not_implemented("chi2sf", 1, k, "(the degrees of freedom)")]


@rule("psi")
def _psi(inputs, out, gz):
    return [gz * tm.tri_gamma(inputs[0])]


@rule("tri_gamma")
def _tri_gamma(inputs, out, gz):
    raise NotImplementedError(f"the gradient of tri_gamma ({out.describe()}) would need "
                              "polygamma(2, x), which the scalar table does not have yet: "
                              "differentiate psi at most once")


@rule("second")
def _second(inputs, out, gz):
    # fill(model, value): only the model's shape is read, so it gets no gradient.
    return [None, gz]


@rule("switch")
def _switch(inputs, out, gz):
    cond, a, b = inputs
    zero = c(0, gz)
    return [None, tm.switch(cond, gz, zero), tm.switch(cond, zero, gz)]


@rule("clip")
def _clip(inputs, out, gz):
    x, lo, hi = inputs
    inside = tm.and_(tm.ge(x, lo), tm.le(x, hi))
    zero = c(0, gz)
    return [tm.switch(inside, gz, zero), tm.switch(tm.lt(x, lo), gz, zero),
            tm.switch(tm.gt(x, hi), gz, zero)]


# ------------------------------------------------------------ the Elemwise rule
@register_grad(Elemwise)
def elemwise_grad(op, inputs, outputs, output_grads):
    scalar, out, gz = op.scalar_op, outputs[0], output_grads[0]
    if isinstance(scalar, Cast):
        grads = _cast(inputs, out, gz)
    elif isinstance(scalar, Composite):
        grads = _composite(scalar, inputs, out, gz)
    elif scalar.name in RULES:
        grads = RULES[scalar.name](inputs, out, gz)
    elif type(scalar).grad is not ScalarOp.grad:  # a user op's rule, written on scalar variables
        grads = elemwise_grads_from_scalar_rule(scalar, inputs, gz)
    else:
        raise NotImplementedError(f"no gradient is defined for the elementwise op {scalar.name} "
                                  f"(computing {out.describe()}); add a rule to "
                                  "arignote.tensor.grad.elemwise.RULES")
    if out.dtype in DISCRETE:
        return [None] * len(inputs)
    return [g if g is None or isinstance(g.type, NullType) else sum_broadcast(g, x)
            for g, x in zip(grads, inputs)]


def sum_broadcast(g, x):
    """``g`` summed over the dimensions ``x`` was broadcast along (kept, as length 1)."""
    axes = [d for d in range(x.ndim) if x.broadcastable[d] and not g.broadcastable[d]]
    return _sum(g, axes, keepdims=True) if axes else g


def _cast(inputs, out, gz):
    x = inputs[0]
    if out.dtype in DISCRETE:
        return [None]  # an integer result is flat: it passes no gradient back
    return [gz if x.dtype in DISCRETE else tm.cast(gz, x.dtype)]


def _composite(scalar, inputs, out, gz):
    """Rebuild the fused chain as separate Elemwise nodes and differentiate those, the
    inputs as leaves (one may be computed from another: its gradient stops there)."""
    values = list(inputs)
    for step, args in scalar.steps:
        values.append(Elemwise(step)(*[values[a] for a in args]))
    grads = backpropagate({values[scalar.output]: gz}, inputs, consider_constant=inputs)
    return [grads.get(x) for x in inputs]
