"""Gradients of pooling (Theano's rules): max pooling into MaxPoolGrad, sum and averages
into AveragePoolGrad; MaxPoolGrad and DownsampleFactorMaxGradGrad into each other, and
AveragePoolGrad back into Pool, so the gradient of a pooling gradient (and Rop through
max pooling) exists. Window, stride and pad are ints: no gradient."""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.tensor.alloc import zeros_like
from arignote.tensor.signal.pool import (AveragePoolGrad, DownsampleFactorMaxGradGrad, MaxPoolGrad,
                                         Pool)


@register_grad(Pool)
def pool_grad(op, inputs, outputs, output_grads):
    x, *params = inputs
    gz = output_grads[0]
    if op.mode == "max":
        gx = MaxPoolGrad(op.ignore_border, op.ndim)(x, outputs[0], gz, *params)
    else:
        gx = AveragePoolGrad(op.ignore_border, op.mode, op.ndim)(x, gz, *params)
    return [gx, None, None, None]


@register_grad(MaxPoolGrad)
def max_pool_grad_grad(op, inputs, outputs, output_grads):
    x, maxout, _, *params = inputs
    ggz = DownsampleFactorMaxGradGrad(op.ignore_border, "max", op.ndim)(x, maxout, output_grads[0], *params)
    return [zeros_like(x), zeros_like(maxout), ggz, None, None, None]


@register_grad(AveragePoolGrad)
def average_pool_grad_grad(op, inputs, outputs, output_grads):
    x, _, *params = inputs
    return [zeros_like(x), Pool(op.ignore_border, op.mode, op.ndim)(output_grads[0], *params),
            None, None, None]


@register_grad(DownsampleFactorMaxGradGrad)
def max_pool_grad_grad_grad(op, inputs, outputs, output_grads):
    x, maxout, _, *params = inputs
    gz = MaxPoolGrad(op.ignore_border, op.ndim)(x, maxout, output_grads[0], *params)
    return [zeros_like(x), zeros_like(maxout), gz, None, None, None]
