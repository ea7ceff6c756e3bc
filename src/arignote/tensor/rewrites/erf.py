"""Stabilization of the error function's forms.

``1 - erf(x)`` is 0 from ``x = 6`` on (``erf(x)`` rounds to 1) while ``erfc(x)``
keeps ``2e-17`` there and ``2e-45`` at 10; ``1 - erfc(x)`` loses half its digits
near 0, which ``erf(x)`` keeps. ``log(erfc(x))`` is ``-inf`` from ``x = 27``
(``erfc`` underflows) and its gradient ``-2/sqrt(pi) exp(-x^2) / erfc(x)`` is NaN
(0/0) from ``x = 27``; both have exact forms through ``erfcx(x) = exp(x^2) erfc(x)``,
which neither underflows nor overflows for ``x >= 0``.
"""
from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar.dtypes import FLOAT
from arignote.tensor import math as _math
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.rewrites.utils import op_name, retype, scalar_constant, typed_constant

# ``c + s * f(x)`` with ``c``, ``s`` in {1, -1} -> ``(-1 if negate_out) * g((-1 if negate_in) * x)``:
# (c, s, f) -> (g, negate_in, negate_out). The other sums (``1 + erfc(x)``...) gain nothing.
COMPLEMENTS = {
    (1, 1, "erf"): ("erfc", True, False),     # 1 + erf(x) = erfc(-x)
    (1, -1, "erf"): ("erfc", False, False),   # 1 - erf(x) = erfc(x)
    (-1, 1, "erf"): ("erfc", False, True),    # erf(x) - 1 = -erfc(x)
    (-1, -1, "erf"): ("erfc", True, True),    # -1 - erf(x) = -erfc(-x)
    (1, -1, "erfc"): ("erf", False, False),   # 1 - erfc(x) = erf(x)
    (-1, 1, "erfc"): ("erf", True, False),    # erfc(x) - 1 = erf(-x)
}
_FUNCTIONS = {"erf": _math.erf, "erfc": _math.erfc}


def _signed_terms(var: Variable, most: int = 2) -> list[tuple[int, Variable]] | None:
    """The terms of an addition with their signs (``a - (-b)`` is ``[(1, a), (1, b)]``), or
    None past ``most`` of them: the rule needs two, so a long sum is not walked (nor
    recursed into: a chain of thousands of additions compiles)."""
    terms: list[tuple[int, Variable]] = []
    todo = [(1, var)]
    while todo:
        sign, v = todo.pop()
        name = op_name(v)
        if name == "add":
            todo += [(sign, i) for i in v.owner.inputs]
        elif name == "sub":
            todo += [(sign, v.owner.inputs[0]), (-sign, v.owner.inputs[1])]
        elif name == "neg":
            todo.append((-sign, v.owner.inputs[0]))
        else:
            terms.append((sign, v))
            if len(terms) > most:
                return None
    return terms


def _negate(x: Variable) -> Variable:
    return x.owner.inputs[0] if op_name(x) == "neg" else _math.neg(x)


@node_rewriter([Elemwise])
def local_erf_complement(fgraph: FunctionGraph, node: Apply):
    """``1 - erf(x)`` -> ``erfc(x)`` and the other sums of ``COMPLEMENTS``."""
    out = node.outputs[0]
    if op_name(out) not in ("add", "sub") or out.dtype not in FLOAT:
        return None
    terms = _signed_terms(out)
    if terms is None or len(terms) != 2:
        return None
    for (c_sign, c), (s, term) in (terms, terms[::-1]):
        value = scalar_constant(c)
        name = op_name(term)
        if value not in (1, -1) or isinstance(value, bool) or name not in _FUNCTIONS:
            continue
        rule = COMPLEMENTS.get((int(value) * c_sign, s, name))
        if rule is None:
            continue
        g, negate_in, negate_out = rule
        x = term.owner.inputs[0]
        result = _FUNCTIONS[g](_negate(x) if negate_in else x)
        return [retype(_math.neg(result) if negate_out else result, out)]
    return None


def _factors(var: Variable) -> tuple[int, list[Variable], list[Variable]]:
    """A product as ``(sign, numerator factors, denominator factors)``, through mul, true_div
    and neg: ``-(a * b) / c`` is ``(-1, [a, b], [c])`` (a walk with a stack, as above)."""
    sign, num, den = 1, [], []
    todo = [(var, False)]
    while todo:
        v, below = todo.pop()
        name = op_name(v)
        if name == "neg":
            sign = -sign
            todo.append((v.owner.inputs[0], below))
        elif name == "mul":
            todo.extend((i, below) for i in reversed(v.owner.inputs))
        elif name == "true_div":
            todo.extend([(v.owner.inputs[1], not below), (v.owner.inputs[0], below)])
        elif name == "sqr" or (name == "pow" and scalar_constant(v.owner.inputs[1]) == 2):
            (den if below else num).extend([v.owner.inputs[0]] * 2)
        else:
            (den if below else num).append(v)
    return sign, num, den


def _gaussian_argument(var: Variable) -> Variable | None:
    """``x`` when ``var`` is ``exp(-x^2)`` (written with neg, sqr, pow or mul), else None."""
    if op_name(var) != "exp":
        return None
    sign, num, den = _factors(var.owner.inputs[0])
    if sign == -1 and not den and len(num) == 2 and num[0] is num[1]:
        return num[0]
    return None


def _product(sign: int, num: list[Variable], den: list[Variable], dtype: str) -> Variable:
    top = num[0] if num else typed_constant(1, dtype)
    for f in num[1:]:
        top = _math.mul(top, f)
    for f in den:
        top = _math.true_div(top, f)
    return _math.neg(top) if sign < 0 else top


@node_rewriter([Elemwise])
def local_gaussian_over_erfc(fgraph: FunctionGraph, node: Apply):
    """``... * exp(-x^2) / erfc(x)`` (the gradient of ``log(erfc(x))``) -> ``... / erfcx(x)``."""
    out = node.outputs[0]
    if op_name(out) not in ("mul", "true_div") or out.dtype not in FLOAT:
        return None
    sign, num, den = _factors(out)
    for i, f in enumerate(num):
        x = _gaussian_argument(f)
        if x is None:
            continue
        for j, d in enumerate(den):
            if op_name(d) == "erfc" and d.owner.inputs[0] is x:
                rest_num = num[:i] + num[i + 1:]
                rest_den = den[:j] + den[j + 1:] + [_math.erfcx(x)]
                return [retype(_product(sign, rest_num, rest_den, out.dtype), out)]
    return None


@node_rewriter([Elemwise])
def local_log_erfc(fgraph: FunctionGraph, node: Apply):
    """``log(erfc(x))`` -> ``log(erfcx(x)) - x^2`` where ``x >= 0`` (``erfc`` would underflow),
    ``log1p(erf(-x))`` elsewhere (``erfc(x) = 1 + erf(-x)`` is in [1, 2] there, and ``erfcx``
    would overflow)."""
    out = node.outputs[0]
    if op_name(out) != "log" or op_name(node.inputs[0]) != "erfc" or out.dtype not in FLOAT:
        return None
    x = node.inputs[0].owner.inputs[0]
    zero = typed_constant(0, x.dtype)
    # Each branch reads x clipped to its side, so the branch not taken computes nothing infinite.
    below, above = _math.minimum(x, zero), _math.maximum(x, zero)
    stable = _math.sub(_math.log(_math.erfcx(above)), _math.sqr(above))
    return [retype(_math.switch(_math.lt(x, zero), _math.log1p(_math.erf(_math.neg(below))), stable), out)]


for _rewriter in (local_erf_complement, local_gaussian_over_erfc, local_log_erfc):
    rewrites.register(_rewriter, "stabilize", "fast_run")
