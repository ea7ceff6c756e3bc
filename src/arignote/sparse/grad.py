"""Gradients of the sparse ops, registered in ``arignote.gradient.GRAD_RULES``.

The gradient with respect to a sparse input is a sparse matrix of the input's
format and dtype (``fit``), or for the regular ``dot`` a dense matrix, as in
Theano. "Structured" gradients (of ``structured_dot``, ``dense_from_sparse``,
``sp_sum(sparse_grad=True)``, the scaling ops) live only on the input's
stored positions.
"""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.graph.types import DisconnectedType, disconnected_type
from arignote.gradient import grad_not_implemented
from arignote.sparse import convert as cv
from arignote.sparse import diagonal as sdiag
from arignote.sparse import products as sd
from arignote.sparse import join as sj
from arignote.sparse import ops as so
from arignote.sparse import subtensor as st
from arignote.sparse.type import continuous_dtypes
from arignote.sparse.variable import is_sparse_variable
from arignote.tensor import math as tm
from arignote.tensor.alloc import ones_like
from arignote.tensor.blas import dot as dense_dot, outer


def fit(g, var):
    """``g`` given ``var``'s exact type where both are sparse (format and dtype)."""
    if g is None or not (is_sparse_variable(g) and is_sparse_variable(var)):
        return g
    g = so.as_format(g, var.format)
    return g if g.dtype == var.dtype else cv.cast(g, var.dtype)


def _structured(x, dense):
    """``dense`` (broadcasting to x's shape) kept only where the sparse ``x`` stores values."""
    return so.mul_s_d(cv.sp_ones_like(x), dense)


def _matrix_product(a, b):
    """a . b for any mix of sparse and dense operands (the regular product)."""
    if is_sparse_variable(a) or is_sparse_variable(b):
        return sd.dot(a, b)
    return dense_dot(a, b)


@register_grad(cv.CSMProperties)
def csm_properties_grad(op, inputs, outputs, output_grads):
    (x,) = inputs
    g_data = output_grads[0]
    if isinstance(g_data.type, DisconnectedType):
        return [cv.sp_zeros_like(x)]
    _, indices, indptr, shape = cv.csm_properties(x)
    return [cv.CSM(x.format)(g_data, indices, indptr, shape)]


@register_grad(cv.CSM)
def csm_grad(op, inputs, outputs, output_grads):
    data, indices, indptr, shape = inputs
    g_data = cv.CSMGrad(op.format)(data, indices, indptr, shape, output_grads[0])
    return [g_data] + [disconnected_type() for _ in range(3)]


@register_grad(cv.DenseFromSparse)
def dense_from_sparse_grad(op, inputs, outputs, output_grads):
    (x,), (gz,) = inputs, output_grads
    return [fit(_structured(x, gz) if op.sparse_grad else cv.SparseFromDense(x.format)(gz), x)]


@register_grad(cv.SparseFromDense)
def sparse_from_dense_grad(op, inputs, outputs, output_grads):
    (gz,) = output_grads
    return [cv.dense_from_sparse(gz) if is_sparse_variable(gz) else gz]


@register_grad(cv.Cast)
def cast_grad(op, inputs, outputs, output_grads):
    (x,), (gz,) = inputs, output_grads
    return [fit(gz, x) if x.dtype in continuous_dtypes else None]


@register_grad(cv.Remove0, cv.EnsureSortedIndices, so.AsFormat)
def same_values_grad(op, inputs, outputs, output_grads):
    return [fit(output_grads[0], inputs[0])]


@register_grad(so.Transpose)
def transpose_grad(op, inputs, outputs, output_grads):
    (x,), (gz,) = inputs, output_grads
    return [fit(so.transpose(gz) if is_sparse_variable(gz) else gz.T, x)]


@register_grad(so.Neg)
def neg_grad(op, inputs, outputs, output_grads):
    return [fit(-output_grads[0], inputs[0])]


@register_grad(so.AddSS, so.AddSSData)
def add_s_s_grad(op, inputs, outputs, output_grads):
    (gz,) = output_grads
    return [fit(gz, inputs[0]), fit(gz, inputs[1])]


@register_grad(so.AddSD)
def add_s_d_grad(op, inputs, outputs, output_grads):
    (x, _), (gz,) = inputs, output_grads
    return [fit(_structured(x, gz), x), gz]


@register_grad(so.StructuredAddSV)
def structured_add_s_v_grad(op, inputs, outputs, output_grads):
    (x, _), (gz,) = inputs, output_grads
    return [fit(gz, x), so.sp_sum(gz, axis=0, sparse_grad=True)]


@register_grad(so.ColScaleCSC, so.RowScaleCSC)
def scale_csc_grad(op, inputs, outputs, output_grads):
    """Structured: x's gradient is gz on x's positions scaled alike; s's is x * gz summed
    over the axis s does not index."""
    (x, s), (gz,) = inputs, output_grads
    gz = so.as_format(so.mul_s_s(cv.sp_ones_like(x), gz) if is_sparse_variable(gz) else _structured(x, gz),
                      "csc")
    summed = so.sp_sum(so.mul_s_s(gz, x), axis=1 - op.axis, sparse_grad=True)
    return [fit(type(op)()(gz, s), x), summed if summed.dtype == s.dtype else tm.cast(summed, s.dtype)]


@register_grad(so.MulSS)
def mul_s_s_grad(op, inputs, outputs, output_grads):
    (x, y), (gz,) = inputs, output_grads
    return [fit(so.mul_s_s(gz, y), x), fit(so.mul_s_s(gz, x), y)]


@register_grad(so.MulSD)
def mul_s_d_grad(op, inputs, outputs, output_grads):
    (x, y), (gz,) = inputs, output_grads
    gx = fit(so.mul_s_d(gz, y), x)
    # y's gradient: x * gz (on x's stored positions) summed along what y broadcasts.
    product = so.mul_s_s(x, gz)
    pattern = (True,) * (2 - y.ndim) + tuple(y.broadcastable)
    if pattern == (True, True):
        gy = so.sp_sum(product, sparse_grad=True)
        gy = gy if y.ndim == 0 else gy.dimshuffle(*(["x"] * y.ndim))
    elif pattern[0] and not pattern[1]:
        gy = so.sp_sum(product, axis=0, sparse_grad=True)
        gy = gy if y.ndim == 1 else gy.dimshuffle("x", 0)
    elif pattern[1] and not pattern[0]:
        gy = so.sp_sum(product, axis=1, sparse_grad=True).dimshuffle(0, "x")
    else:
        gy = cv.dense_from_sparse(product)
    return [gx, gy]


@register_grad(so.SpSum)
def sp_sum_grad(op, inputs, outputs, output_grads):
    (x,), (gz,) = inputs, output_grads
    if x.dtype not in continuous_dtypes:
        return [None]
    spread = gz if op.axis is None else gz.dimshuffle("x", 0) if op.axis == 0 else gz.dimshuffle(0, "x")
    if op.sparse_grad:
        return [fit(_structured(x, spread), x)]
    full = tm.mul(ones_like(cv.dense_from_sparse(x)), spread)
    return [fit(cv.SparseFromDense(x.format)(full), x)]


@register_grad(sd.StructuredDot)
def structured_dot_grad(op, inputs, outputs, output_grads):
    (a, b), (gz,) = inputs, output_grads
    if is_sparse_variable(b):
        ga = _structured(a, sd.dot(gz, so.transpose(b)))
        gb = sd.true_dot(so.transpose(a), gz)
        return [fit(ga, a), fit(gb, b)]
    return [fit(sd.structured_dot_grad(a, b, gz), a), sd.structured_dot(so.transpose(a), gz)]


@register_grad(sd.Dot)
def dot_grad(op, inputs, outputs, output_grads):
    (x, y), (gz,) = inputs, output_grads
    if y.ndim == 1:
        gx = outer(gz, y) if not is_sparse_variable(y) else _matrix_product(gz.dimshuffle(0, "x"), y.T)
        return [gx, _matrix_product(x.T, gz)]
    if x.ndim == 1:
        return [_matrix_product(gz, y.T), outer(x, gz)]
    return [_matrix_product(gz, y.T), _matrix_product(x.T, gz)]


@register_grad(sd.TrueDot)
def true_dot_grad(op, inputs, outputs, output_grads):
    (x, y), (gz,) = inputs, output_grads
    gx = sd.true_dot(gz, y.T if not is_sparse_variable(y) else so.transpose(y))
    gy = sd.true_dot(so.transpose(x), gz)
    if not is_sparse_variable(y) and op.grad_preserves_dense:
        gy = cv.dense_from_sparse(gy)
    return [fit(gx, x), fit(gy, y)]


@register_grad(sj.HStack, sj.VStack)
def stack_grad(op, inputs, outputs, output_grads):
    (gz,) = output_grads
    grads, start = [], 0
    for block in inputs:
        stop = start + block.shape[op.axis]
        part = gz[:, start:stop] if op.axis == 1 else gz[start:stop, :]
        grads.append(fit(part, block) if is_sparse_variable(part) else part)
        start = stop
    return grads


@register_grad(st.SparseGradSubtensor1)
def sparse_grad_subtensor1_grad(op, inputs, outputs, output_grads):
    (w, rows), (gz,) = inputs, output_grads
    return [st.construct_sparse_from_list(w, gz, rows), None]



@register_grad(st.GetItemList)
def get_item_list_grad(op, inputs, outputs, output_grads):
    (x, rows), (gz,) = inputs, output_grads
    return [st.ScatterSparse(False)(x, gz, rows), None]


@register_grad(st.GetItem2Lists)
def get_item_2lists_grad(op, inputs, outputs, output_grads):
    (x, rows, cols), (gz,) = inputs, output_grads
    return [st.ScatterSparse(True)(x, gz, rows, cols), None, None]


@register_grad(sd.SamplingDot)
def sampling_dot_grad(op, inputs, outputs, output_grads):
    (x, y, p), (gz,) = inputs, output_grads
    weighted = so.mul_s_s(p, gz)
    return [sd.structured_dot(weighted, y), sd.structured_dot(so.transpose(weighted), x),
            grad_not_implemented(op, 2, p, "the sampling pattern p has no gradient")]


@register_grad(sdiag.Diag)
def diag_grad(op, inputs, outputs, output_grads):
    return [fit(sdiag.square_diagonal(output_grads[0]), inputs[0])]


@register_grad(sdiag.SquareDiagonal)
def square_diagonal_grad(op, inputs, outputs, output_grads):
    return [sdiag.diag(output_grads[0])]
