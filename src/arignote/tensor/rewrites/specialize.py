"""Specialization: faster forms of the same values.

Powers by small constants become ``sqr``, ``sqrt``, ``inv`` or a few
multiplications; ``sum(sqr(x))`` becomes one pass over ``x``; a matrix
product added to a matrix becomes one Gemm call (``Z * beta + alpha *
dot(X, Y)``), which the in-place phase may let overwrite ``Z``.
"""
from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar.dtypes import FLOAT
from arignote.tensor import math as _math
from arignote.tensor.blas import Dot
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.gemm import SumOfSquares, gemm
from arignote.tensor.reduction import CAReduce
from arignote.tensor.rewrites.utils import (op_name, retype, scalar_constant, scalar_of,
                                            single_client, typed_constant)

_FLOAT_DTYPES = ("float32", "float64")


def _power(x: Variable, exponent: float) -> Variable | None:
    """``x ** exponent`` by cheaper ops, or None for exponents without a shortcut."""
    if exponent == 1:
        return x
    if exponent == 2:
        return _math.sqr(x)
    if exponent == 3:
        return _math.mul(_math.sqr(x), x)
    if exponent == 4:
        return _math.sqr(_math.sqr(x))
    if exponent == 0.5:
        return _math.sqrt(x)
    if exponent < 0 and x.dtype in FLOAT:
        positive = _power(x, -exponent)
        return None if positive is None else _math.inv(positive)
    return None


@node_rewriter([Elemwise])
def local_pow_specialize(fgraph: FunctionGraph, node: Apply):
    """``x ** 2`` -> ``sqr(x)``, ``x ** 0.5`` -> ``sqrt(x)``, ``x ** -1`` -> ``inv(x)``,
    ``x ** 3`` and ``x ** 4`` by multiplication, ``x ** 1`` -> ``x``."""
    out = node.outputs[0]
    if op_name(out) != "pow":
        return None
    base, exponent = node.inputs
    value = scalar_constant(exponent)
    if value is None or isinstance(value, (bool, complex)):
        return None
    if out.dtype not in FLOAT and (value < 0 or value != int(value)):
        return None
    new = _power(_math.cast(base, out.dtype), float(value))
    return [retype(new, out)]


@node_rewriter([CAReduce])
def local_sum_of_squares(fgraph: FunctionGraph, node: Apply):
    """``sum(sqr(x), axis)`` -> one pass over ``x`` (no squared temporary), in the sum's
    accumulator (float64 for a float32 ``x``, Theano's). Not when ``x`` is itself an
    elementwise result used only here: the late fusion then makes the whole of
    ``sum(sqr(f(a, b)))`` one pass over ``a`` and ``b`` on the CPU (``((X - Y) ** 2).sum(1)``
    of 1000x1000 float32: 7x faster than SumOfSquares of a stored ``X - Y``), and a device
    stores one temporary either way."""
    op = node.op
    squared = node.inputs[0]
    if op.scalar_op.name != "add" or op_name(squared) != "sqr" or not single_client(fgraph, squared):
        return None
    x = squared.owner.inputs[0]
    if x.owner is not None and isinstance(x.owner.op, Elemwise) and single_client(fgraph, x):
        return None
    out = node.outputs[0]
    acc = op.acc_dtype or out.dtype
    if x.dtype not in _FLOAT_DTYPES or out.dtype != x.dtype or acc not in _FLOAT_DTYPES:
        return None
    return [retype(SumOfSquares(op.axis, None if acc == x.dtype else acc)(x), out)]


def _scaled_dot(fgraph: FunctionGraph, var: Variable) -> tuple[Variable, Variable] | None:
    """``(alpha, dot)`` when ``var`` is ``dot(X, Y)`` or ``alpha * dot(X, Y)`` of matrices,
    used nowhere else."""
    alpha: Variable | float = 1.0
    if op_name(var) == "mul" and single_client(fgraph, var):
        a, b = var.owner.inputs
        for scale, product in ((a, b), (b, a)):
            if _is_matrix_dot(product) and scalar_of(scale) is not None:
                alpha, var = scalar_of(scale), product
                break
    if not _is_matrix_dot(var) or not single_client(fgraph, var):
        return None
    return alpha, var


def _is_matrix_dot(var: Variable) -> bool:
    node = var.owner
    return (node is not None and isinstance(node.op, Dot)
            and node.inputs[0].ndim == 2 and node.inputs[1].ndim == 2)


def _as_scalar(value: Variable | float, dtype: str, negate: bool = False) -> Variable:
    """``value`` (or ``-value``) as a 0-d variable of ``dtype``; constants stay constants."""
    if isinstance(value, Variable) and scalar_constant(value) is not None:
        value = scalar_constant(value)
    if not isinstance(value, Variable):
        return typed_constant(-value if negate else value, dtype)
    value = _math.cast(value, dtype)
    return _math.neg(value) if negate else value


@node_rewriter([Elemwise])
def local_gemm(fgraph: FunctionGraph, node: Apply):
    """``Z + alpha * dot(X, Y)`` (also ``dot + Z`` and ``Z - dot``) -> ``gemm(Z, alpha, X, Y, 1)``."""
    out = node.outputs[0]
    name = op_name(out)
    if name not in ("add", "sub") or out.ndim != 2 or out.dtype not in _FLOAT_DTYPES:
        return None
    a, b = node.inputs
    pairs = ((a, b, False), (b, a, False)) if name == "add" else ((b, a, True),)
    for product, z, negate in pairs:
        found = _scaled_dot(fgraph, product)
        if found is None or z.type != out.type:
            continue
        alpha, dot = found
        x, y = dot.owner.inputs
        if dot.type != out.type or x.dtype != out.dtype or y.dtype != out.dtype:
            continue
        if isinstance(alpha, Variable) and alpha.dtype not in FLOAT:
            continue
        result = gemm(z, _as_scalar(alpha, out.dtype, negate), x, y, typed_constant(1, out.dtype))
        return [retype(result, out)]
    return None


for _rewriter in (local_pow_specialize, local_sum_of_squares, local_gemm):
    rewrites.register(_rewriter, "specialize", "fast_run")
