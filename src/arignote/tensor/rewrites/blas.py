"""The late BLAS forms: each product the CPU still computes with Dot becomes the BLAS call
Theano's programs expect (Dot22, Gemv, Ger, Dot22Scalar).

They run after GPU placement (phase ``late_fusion``), so only nodes that stay on the CPU
change, and after fusion, so a scaling they absorb was left alone by it. Values are
unchanged: ``dot(A, x)`` is Gemv on a fresh output with ``beta = 0`` (whose old contents
Gemv ignores), ``outer(x, y)`` is Ger on zeros, ``dot22(X, Y) * a`` is one Dot22Scalar call,
and a Gemm whose operands are a column and a row, with ``beta`` 0 or 1, is Ger. The in-place
phase may then let Gemv and Ger write into that fresh output.
"""
from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import in_to_out, node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar.dtypes import upcast
from arignote.tensor import math as _math
from arignote.tensor.alloc import AllocEmpty, alloc
from arignote.tensor.blas import Dot
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.gemm import Dot22, Gemm, dot22, dot22scalar, gemv, ger
from arignote.tensor.rewrites.utils import (op_name, retype, scalar_constant, scalar_of, single_client,
                                            typed_constant)
from arignote.tensor.shape import shape_i

_BLAS_DTYPES = ("float32", "float64", "complex64", "complex128")


def _blas_operands(node: Apply) -> bool:
    """Whether a Dot's inputs and output share one dtype BLAS computes."""
    dtype = node.outputs[0].dtype
    return dtype in _BLAS_DTYPES and all(i.dtype == dtype for i in node.inputs)


def _gemv_of_fresh(a: Variable, x: Variable, like: Variable) -> Variable:
    """``dot(a, x)`` for a matrix ``a`` and a vector ``x``, as Gemv into a new vector."""
    y = AllocEmpty(like.dtype)(shape_i(a, 0))
    return gemv(y, typed_constant(1, like.dtype), a, x, typed_constant(0, like.dtype))


def _dropped_axis(var: Variable, keep: int) -> Variable:
    """The vector a column (``keep=0``) or row (``keep=1``) matrix holds: the vector it was
    made from by a DimShuffle when it was, else the matrix without its length-1 axis."""
    node = var.owner
    if node is not None and isinstance(node.op, DimShuffle) and node.inputs[0].ndim == 1:
        if tuple(node.op.new_order) == ((0, "x") if keep == 0 else ("x", 0)):
            return node.inputs[0]
    return var.dimshuffle(keep)


@node_rewriter([Dot])
def local_dot_to_dot22(fgraph: FunctionGraph | None, node: Apply):
    """A Dot of matrices and vectors of one float (complex) dtype -> its BLAS call: matrix x
    matrix -> Dot22, matrix x vector -> Gemv, vector x matrix -> Gemv of the transpose,
    vector x vector -> Gemv of a one-row matrix."""
    if type(node.op) is not Dot or not _blas_operands(node):
        return None
    (a, b), out = node.inputs, node.outputs[0]
    shapes = (a.ndim, b.ndim)
    if shapes == (2, 2):
        new = dot22(a, b)
    elif shapes == (2, 1):
        new = _gemv_of_fresh(a, b, out)
    elif shapes == (1, 2):
        new = _gemv_of_fresh(b.T, a, out)
    elif shapes == (1, 1):
        new = _gemv_of_fresh(a.dimshuffle("x", 0), b, out).dimshuffle()
    else:
        return None
    return [retype(new, out, same_shape=True)]


@node_rewriter([Dot22])
def local_dot22_to_ger_or_gemv(fgraph: FunctionGraph | None, node: Apply):
    """Dot22 of a column and a row (an outer product) -> Ger on zeros. (The Gemv half of
    Theano's rule is local_dot_to_dot22's: a matrix-vector Dot becomes Gemv directly.)"""
    x, y = node.inputs
    out = node.outputs[0]
    if not (x.broadcastable[1] and y.broadcastable[0]):
        return None
    x, y = _dropped_axis(x, 0), _dropped_axis(y, 1)
    zeros = alloc(typed_constant(0, out.dtype), shape_i(x, 0), shape_i(y, 0))
    new = ger(zeros, typed_constant(1, out.dtype), x, y)
    return [retype(new, out, same_shape=True)]


def _fitting_scalar(var: Variable, dtype: str) -> Variable | None:
    """The 0-d ``var`` broadcasts, in ``dtype``, when multiplying by it keeps ``dtype``."""
    scalar = scalar_of(var) if all(var.broadcastable) else None
    if scalar is None or upcast(scalar.dtype, dtype) != dtype:
        return None
    return scalar if scalar.dtype == dtype else _math.cast(scalar, dtype)


def _factors(fgraph: FunctionGraph | None, var: Variable, top: bool = True) -> list[Variable]:
    """The leaves of the product tree ``var`` is (muls used only inside it), in order."""
    if op_name(var) != "mul" or not (top or fgraph is None or single_client(fgraph, var)):
        return [var]
    return [leaf for factor in var.owner.inputs for leaf in _factors(fgraph, factor, False)]


@node_rewriter([Elemwise])
def local_dot22_to_dot22scalar(fgraph: FunctionGraph | None, node: Apply):
    """A product of ``dot22(X, Y)``, a 0-d ``a`` and other factors -> ``mul(others...,
    dot22scalar(X, Y, a))``: the scaling done in the BLAS call."""
    out = node.outputs[0]
    if op_name(out) != "mul" or out.dtype not in _BLAS_DTYPES:
        return None
    factors = _factors(fgraph, out)
    products = [k for k, f in enumerate(factors) if f.owner is not None and type(f.owner.op) is Dot22
                and f.dtype == out.dtype and (fgraph is None or single_client(fgraph, f))]
    if not products:
        return None
    p = products[0]
    scalars = [(k, s) for k, s in ((k, _fitting_scalar(f, out.dtype)) for k, f in enumerate(factors))
               if s is not None and k != p]
    if not scalars:
        return None
    product, (k, scalar) = factors[p], scalars[0]
    new = dot22scalar(*product.owner.inputs, scalar)
    rest = [f for j, f in enumerate(factors) if j not in (p, k)]
    if rest:
        new = _math.mul(*rest, new)
    return [retype(new, out, same_shape=True)]


@node_rewriter([Gemm])
def local_gemm_to_ger(fgraph: FunctionGraph | None, node: Apply):
    """Gemm of a column and a row with ``beta`` 1 (or 0) -> Ger on ``Z`` (on zeros)."""
    if node.op.inplace:
        return None
    z, alpha, x, y, beta = node.inputs
    if not (x.broadcastable[1] and y.broadcastable[0]):
        return None
    b = scalar_constant(beta)
    if b not in (0, 1):
        return None
    out = node.outputs[0]
    if b == 0:
        z = alloc(typed_constant(0, out.dtype), shape_i(z, 0), shape_i(z, 1))
    return [retype(ger(z, alpha, _dropped_axis(x, 0), _dropped_axis(y, 1)), out, same_shape=True)]


BLAS_REWRITES = (local_dot_to_dot22, local_dot22_to_ger_or_gemv, local_dot22_to_dot22scalar, local_gemm_to_ger)
for _rewriter in BLAS_REWRITES:
    rewrites.register(in_to_out(_rewriter, name=_rewriter.name), "late_fusion", "fast_run",
                      name=_rewriter.name)
