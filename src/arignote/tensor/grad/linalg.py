"""Gradients of the diagonal and linear-algebra ops (``tensor/diagonal.py``, ``nlinalg.py``,
``slinalg.py``), where Theano had them.

Ops that read one triangle of a symmetric matrix (``cholesky``, ``eigh``,
``eigvalsh``, triangular ``solve``) give that triangle the whole gradient: an
entry and its mirror are one number to them. ``eig``, ``svd`` and ``qr`` have
no gradient, as in Theano.
"""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.tensor import math as tm
from arignote.tensor.alloc import identity_like, tril, triu, zeros_like
from arignote.tensor.blas import dot, outer
from arignote.tensor.diagonal import AllocDiag, ExtractDiag
from arignote.tensor.nlinalg import Det, Eigh, EighGrad, MatrixInverse, MatrixPinv, matrix_inverse
from arignote.tensor.shape import shape_i
from arignote.tensor.slinalg import (Cholesky, Eigvalsh, EigvalshGrad, Expm, ExpmGrad, Solve,
                                     solve_upper_triangular)
from arignote.tensor.subtensor import set_subtensor
from arignote.tensor.variable import constant


@register_grad(ExtractDiag)
def extract_diag_grad(op, inputs, outputs, output_grads):
    """The output gradient put back on the diagonal, zeros elsewhere."""
    x, gz = inputs[0], output_grads[0]
    a1, a2 = op.axis1 % x.ndim, op.axis2 % x.ndim
    low, high = sorted((a1, a2))
    # AllocDiag counts the offset in increasing axis order.
    placed = AllocDiag(op.offset if a1 < a2 else -op.offset, low, high)(gz)
    # Its two axes have length len + |offset|, which may exceed x's or fall short of it.
    region = [slice(None)] * x.ndim
    for axis in (low, high):
        region[axis] = slice(None, shape_i(x, axis))
    value = placed[tuple(region)]
    target = [slice(None)] * x.ndim
    for axis in (low, high):
        target[axis] = slice(None, shape_i(value, axis))
    return [set_subtensor(zeros_like(x)[tuple(target)], value)]


@register_grad(AllocDiag)
def alloc_diag_grad(op, inputs, outputs, output_grads):
    low, high = sorted((op.axis1, op.axis2))
    return [ExtractDiag(op.offset, low, high)(output_grads[0])]


# ------------------------------------------------------------------ nlinalg
@register_grad(MatrixInverse)
def matrix_inverse_grad(op, inputs, outputs, output_grads):
    xi_t = outputs[0].T
    return [-dot(dot(xi_t, output_grads[0]), xi_t)]


@register_grad(MatrixPinv)
def pinv_grad(op, inputs, outputs, output_grads):
    """d pinv(X) = -Z dX Z + Z Z.T dX.T (I - X Z) + (I - Z X) dX.T Z.T Z, with Z = pinv(X)."""
    x, z, g = inputs[0], outputs[0], output_grads[0]
    xz, zx = dot(x, z), dot(z, x)
    return [-dot(dot(z.T, g), z.T)
            + dot(dot(identity_like(xz) - xz, g.T), dot(z, z.T))
            + dot(dot(z.T, z), dot(g.T, identity_like(zx) - zx))]


@register_grad(Det)
def det_grad(op, inputs, outputs, output_grads):
    return [output_grads[0] * outputs[0] * matrix_inverse(inputs[0]).T]


@register_grad(Eigh)
def eigh_grad(op, inputs, outputs, output_grads):
    w, v = outputs
    gw, gv = output_grads
    return [EighGrad(op.UPLO)(inputs[0], w, v, gw, gv)]


# ------------------------------------------------------------------ slinalg
def _lower_with_half_diagonal(m):
    return tril(m) - AllocDiag()(ExtractDiag()(m) * constant(0.5, dtype=m.dtype))


@register_grad(Cholesky)
def cholesky_grad(op, inputs, outputs, output_grads):
    """Murray (2016): with P the lower triangle of L.T dL (diagonal halved) and
    S = L^-T P L^-1, the read triangle gets S + S.T off the diagonal and S on it."""
    chol, g = outputs[0], output_grads[0]
    if op.on_error == "nan":
        ok = tm.invert(tm.isnan(chol).any())
        chol, g = tm.switch(ok, chol, 1), tm.switch(ok, g, 1)
    if not op.lower:
        chol, g = chol.T, g.T
    p = _lower_with_half_diagonal(dot(chol.T, g))
    s = solve_upper_triangular(chol.T, solve_upper_triangular(chol.T, p.T).T)
    keep = tril if op.lower else triu
    grad = keep(s + s.T) - AllocDiag()(ExtractDiag()(s))
    if op.on_error == "nan":
        grad = tm.switch(ok, grad, constant(float("nan"), dtype=grad.dtype))
    return [grad]


@register_grad(Solve)
def solve_grad(op, inputs, outputs, output_grads):
    """Giles (2008): b_bar = solve(A.T, c_bar), A_bar = -b_bar c.T (kept to the read triangle)."""
    a, _ = inputs
    c, c_bar = outputs[0], output_grads[0]
    flipped = {"lower_triangular": "upper_triangular", "upper_triangular": "lower_triangular"}
    b_bar = Solve(flipped.get(op.A_structure, op.A_structure), not op.lower)(a.T, c_bar)
    a_bar = -outer(b_bar, c) if c.ndim == 1 else -dot(b_bar, c.T)
    if op.A_structure == "lower_triangular":
        a_bar = tril(a_bar)
    elif op.A_structure == "upper_triangular":
        a_bar = triu(a_bar)
    return [a_bar, b_bar]


@register_grad(Eigvalsh)
def eigvalsh_grad(op, inputs, outputs, output_grads):
    grads = EigvalshGrad(op.lower)(*inputs, output_grads[0])
    return list(grads) if isinstance(grads, list) else [grads]


@register_grad(Expm)
def expm_grad(op, inputs, outputs, output_grads):
    return [ExpmGrad()(inputs[0], output_grads[0])]
