"""Specialization: faster forms of the same values.

Powers by small constants become ``sqr``, ``sqrt``, ``inv`` or a few
multiplications; ``sum(sqr(x))`` becomes one pass over ``x``; a matrix
product in a sum of scaled terms becomes one Gemm call (``Z * beta + alpha *
dot(X, Y)``; a matrix-vector product one Gemv), which the in-place phase may
let overwrite ``Z``.
"""
from __future__ import annotations

from collections.abc import Sequence

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar.dtypes import FLOAT
from arignote.tensor import math as _math
from arignote.tensor.blas import Dot
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.gemm import SumOfSquares, gemm, gemv
from arignote.tensor.reduction import CAReduce
from arignote.tensor.rewrites.utils import (op_name, retype, scalar_constant, scalar_of,
                                            single_client, typed_constant)

_FLOAT_DTYPES = ("float32", "float64")
_BLAS_DTYPES = (*_FLOAT_DTYPES, "complex64", "complex128")


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


def _dimshuffled_matrix(var: Variable, order: tuple) -> Variable | None:
    """The matrix ``var`` is ``matrix.dimshuffle(*order)`` of, else None."""
    node = var.owner
    if node is None or not isinstance(node.op, DimShuffle) or tuple(node.op.new_order) != order:
        return None
    return node.inputs[0] if node.inputs[0].ndim == 2 else None


@node_rewriter([CAReduce])
def local_sumsqr2dot(fgraph: FunctionGraph, node: Apply):
    """``sum(sqr(W[None, :, :] * G[:, None, :]), axis=(1, 2))`` -> ``dot(sqr(G), sum(sqr(W),
    axis=0))`` (the same sum, as ``sum_jk (W_jk G_ik)^2 = sum_k G_ik^2 sum_j W_jk^2``),
    without the 3-d temporary: a pass over ``W`` and one product."""
    op, squared = node.op, node.inputs[0]
    if op.scalar_op.name != "add" or tuple(sorted(op.axis or ())) != (1, 2) or op_name(squared) != "sqr":
        return None
    product = squared.owner.inputs[0]
    if (op_name(product) != "mul" or len(product.owner.inputs) != 2 or not single_client(fgraph, squared)
            or not single_client(fgraph, product)):
        return None
    out = node.outputs[0]
    for first, second in (product.owner.inputs, product.owner.inputs[::-1]):
        w, g = _dimshuffled_matrix(first, ("x", 0, 1)), _dimshuffled_matrix(second, (0, "x", 1))
        if w is None or g is None or not out.dtype == w.dtype == g.dtype or out.dtype not in _FLOAT_DTYPES:
            continue
        columns = CAReduce(op.scalar_op, (0,), out.dtype, op.acc_dtype)(_math.sqr(w))
        return [retype(Dot()(_math.sqr(g), columns), out)]
    return None


# A term's scale: a constant factor and 0-d variables, multiplied.
Scale = tuple[complex, tuple[Variable, ...]]


def _scaled_terms(fgraph: FunctionGraph, out: Variable, budget: int = 16
                  ) -> tuple[list[tuple[Scale, Variable]], set[Variable]]:
    """``out`` as a sum of scaled terms, through add, sub, neg and products with a scalar,
    and the results opened to find them; a node whose result is used elsewhere too is a term
    of its own, and so is what lies below the first ``budget`` nodes opened (a BLAS pattern
    is a few terms, a long chain is not)."""
    terms: list[tuple[Scale, Variable]] = []
    opened: set[Variable] = set()
    todo = [((1.0, ()), out)]
    while todo:
        scale, var = todo.pop()
        name = op_name(var)
        parts = None
        if budget > 0 and name in ("add", "sub", "neg", "mul") and (var is out or single_client(fgraph, var)):
            parts = _parts(name, var.owner.inputs)
        if parts is None:
            terms.append((scale, var))
            continue
        budget -= 1
        opened.add(var)
        todo.extend((_times(scale, factor), part) for factor, part in reversed(parts))
    return terms, opened


def _parts(name: str, inputs: Sequence[Variable]) -> list[tuple[tuple[float | Variable, ...], Variable]] | None:
    """The (factors, term) pairs one add, sub, neg or product with scalars is the sum of."""
    if name == "add":
        return [((), i) for i in inputs]
    if name == "sub":
        return [((), inputs[0]), ((-1.0,), inputs[1])]
    if name == "neg":
        return [((-1.0,), inputs[0])]
    factors, others = [], []
    for factor in inputs:
        scale = _as_scale(factor)
        (others if scale is None else factors).append(factor if scale is None else scale)
    if len(others) != 1 or not factors:
        return None
    return [(tuple(factors), others[0])]


def _as_scale(factor: Variable) -> float | Variable | None:
    """A product's factor as a number or a 0-d variable, when it is one broadcast."""
    scale = scalar_constant(factor)
    if scale is None:
        scale = scalar_of(factor)
    if scale is None and factor.ndim and all(factor.broadcastable):
        scale = factor.dimshuffle()  # a product of broadcast scalars (``a * b * dot(X, Y)``)
    return scale


def _times(scale: Scale, factors: tuple[complex | Variable, ...]) -> Scale:
    number, variables = scale
    for factor in factors:
        if isinstance(factor, Variable):
            variables = (*variables, factor)
        else:
            number *= factor
    return number, variables


def _scale_value(scale: Scale, dtype: str) -> Variable:
    """The scale as a 0-d variable of ``dtype`` (a constant when it is one)."""
    number, variables = scale
    if not variables:
        return typed_constant(number, dtype)
    value = _math.cast(variables[0], dtype)
    for v in variables[1:]:
        value = _math.mul(value, _math.cast(v, dtype))
    return value if number == 1 else _math.mul(value, typed_constant(number, dtype))


def _scales_value(scales: list[Scale], dtype: str) -> Variable:
    """The sum of ``scales`` as one 0-d variable (their constant parts folded)."""
    number = sum(n for n, variables in scales if not variables)
    total = typed_constant(number, dtype) if number or not any(v for _, v in scales) else None
    for scale in scales:
        if scale[1]:
            value = _scale_value(scale, dtype)
            total = value if total is None else _math.add(total, value)
    return total


def _transposed(var: Variable) -> Variable:
    """``var.T`` for a matrix: the matrix it transposes when it is a transpose."""
    node = var.owner
    if node is not None and isinstance(node.op, DimShuffle) and tuple(node.op.new_order) == (1, 0):
        return node.inputs[0]
    return var.T


def _used_only_in(fgraph: FunctionGraph, var: Variable, opened: set[Variable]) -> bool:
    clients = fgraph.clients.get(var, [])
    return bool(clients) and all(node != "output" and node.outputs[0] in opened for node, _ in clients)


def _blas_product(fgraph: FunctionGraph, var: Variable, out: Variable, opened: set[Variable]) -> tuple | None:
    """``(gemm or gemv, A, B)`` when ``var`` is a dot that one BLAS call can add to
    another array of ``out``'s type: matrix x matrix (or its transpose, ``dot(A, B).T =
    dot(B.T, A.T)``), matrix x vector or vector x matrix (as ``A.T x``), of ``out``'s dtype,
    used nowhere but in the sum being rewritten."""
    transposed = _is_transpose(var) and single_client(fgraph, var)
    if transposed:
        opened = opened | {var}  # the transpose, used in the sum, is the dot's one client
        var = var.owner.inputs[0]
    node = var.owner
    if (node is None or type(node.op) is not Dot or var.dtype != out.dtype
            or not _used_only_in(fgraph, var, opened)
            or any(i.dtype != out.dtype for i in node.inputs)):
        return None
    a, b = node.inputs
    if (a.ndim, b.ndim) == (2, 2):
        return (gemm, _transposed(b), _transposed(a)) if transposed else (gemm, a, b)
    if transposed:
        return None
    if (a.ndim, b.ndim) == (2, 1):
        return gemv, a, b
    if (a.ndim, b.ndim) == (1, 2):
        return gemv, _transposed(b), a
    return None


def _accumulator(terms: list[tuple[Scale, Variable]], out: Variable) -> tuple[Variable, Variable] | None:
    """``(Z, beta)`` with ``beta * Z`` the sum of ``terms``, Z of ``out``'s type, or None."""
    first = terms[0][1]
    if all(var is first for _, var in terms):
        beta = _scales_value([scale for scale, _ in terms], out.dtype)
        return (first, beta) if first.type == out.type else None
    total = None
    for scale, var in terms:
        part = var if scale == (1.0, ()) else _math.mul(_scale_value(scale, out.dtype), var)
        total = part if total is None else _math.add(total, part)
    return (total, typed_constant(1, out.dtype)) if total.type == out.type else None


@node_rewriter([Elemwise])
def local_gemm(fgraph: FunctionGraph, node: Apply):
    """A sum of scaled terms, one of them a matrix (or matrix-vector) product, -> one Gemm
    (Gemv) call: ``Z + alpha * dot(X, Y)``, ``Z - dot``, and the SGD step with an L2 term,
    ``W - lr * (c * W + dot(X, Y))`` -> ``gemm(W, -lr, X, Y, 1 - lr * c)``. A product added
    several times is added once, its scales summed; a sum of transposes is the transpose of a
    Gemm on the untransposed ``Z`` (which the in-place phase may then overwrite)."""
    out = node.outputs[0]
    if op_name(out) not in ("add", "sub") or out.ndim not in (1, 2) or out.dtype not in _BLAS_DTYPES:
        return None
    terms, opened = _scaled_terms(fgraph, out)
    for _, term in terms:
        product = _blas_product(fgraph, term, out, opened)
        rest = [(scale, var) for scale, var in terms if var is not term]
        if product is None or not rest:
            continue
        found = _accumulator(rest, out)
        if found is None:
            continue
        build, a, b = product
        z, beta = found
        alpha = _scales_value([scale for scale, var in terms if var is term], out.dtype)
        if build is gemm and _is_transpose(z):
            new = build(_transposed(z), alpha, _transposed(b), _transposed(a), beta).T
        else:
            new = build(z, alpha, a, b, beta)
        return [retype(new, out)]
    return None


def _is_transpose(var: Variable) -> bool:
    node = var.owner
    return node is not None and isinstance(node.op, DimShuffle) and tuple(node.op.new_order) == (1, 0)


for _rewriter in (local_pow_specialize, local_sum_of_squares, local_sumsqr2dot, local_gemm):
    rewrites.register(_rewriter, "specialize", "fast_run")
