"""Gradients of the reductions (CAReduce, Argmax, Argmin; ProdWithoutZeros has none).

mean, var, std and norm are graphs of these and elementwise ops, so their
gradients come from those graphs.
"""
from __future__ import annotations

import numpy as np

from arignote.gradient import grad_not_implemented, register_grad
from arignote.scalar.dtypes import DISCRETE
from arignote.tensor import math as tm
from arignote.tensor.alloc import second
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.reduction import BITWISE, Argmax, CAReduce, ProdWithoutZeros, prod
from arignote.tensor.reduction import sum as _sum
from arignote.tensor.variable import constant


@register_grad(ProdWithoutZeros)
def prod_without_zeros_grad(op, inputs, outputs, output_grads):
    return [grad_not_implemented(op, 0, inputs[0], "prod(x, no_zeros_in_input=True) has one when "
                                 "x has no zeros, and prod(x) in general")]


def restore_axes(var, axes):
    """``var`` (a reduction over ``axes``) with those axes put back as length 1."""
    order: list = list(range(var.ndim))
    for axis in sorted(axes):
        order.insert(axis, "x")
    return DimShuffle(var.broadcastable, order)(var)


@register_grad(CAReduce)
def careduce_grad(op, inputs, outputs, output_grads):
    x, out, gz = inputs[0], outputs[0], output_grads[0]
    name = op.scalar_op.name
    if x.dtype in DISCRETE or name in BITWISE:
        return [None]
    gz = restore_axes(gz, op.axis)
    if name == "add":
        return [second(x, gz)]
    if name == "mul":
        return [gz * _prod_partials(x, op.axis, out.dtype)]
    # max/min: the gradient goes to the elements equal to the extremum (to all of them on ties).
    return [gz * tm.eq(x, restore_axes(out, op.axis))]


def _prod_partials(x, axes, dtype):
    """d prod(x) / dx without dividing by zero.

    With no zero along the reduction, the partial is prod / x; with one zero,
    it is the product of the others at the zero and 0 elsewhere; with more, 0.
    """
    zero = constant(np.zeros((), dtype=x.dtype))
    one = constant(np.ones((), dtype=x.dtype))
    is_zero = tm.eq(x, zero)
    nonzero = tm.switch(is_zero, one, x)
    product = restore_axes(prod(nonzero, axes, dtype=dtype), axes)
    n_zeros = restore_axes(_sum(is_zero, axes), axes)
    no_zero = tm.eq(n_zeros, constant(0, dtype="int64"))
    lone_zero = tm.and_(is_zero, tm.eq(n_zeros, constant(1, dtype="int64")))
    fallback = tm.switch(lone_zero, product, constant(np.zeros((), dtype=dtype)))
    return tm.switch(no_zero, product / nonzero, fallback)


@register_grad(Argmax)  # Argmin is a subclass
def arg_grad(op, inputs, outputs, output_grads):
    return [None]
