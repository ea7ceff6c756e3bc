"""Gradients of images2neibs: the rows scattered back into the image (Images2NeibsGrad,
for every mode and step), whose own gradient gathers the patches again."""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.tensor.nnet.neighbours import Images2Neibs, Images2NeibsGrad


@register_grad(Images2Neibs)
def images2neibs_grad(op, inputs, outputs, output_grads):
    x, neib_shape, neib_step = inputs
    return [Images2NeibsGrad(op.mode)(x, output_grads[0], neib_shape, neib_step), None, None]


@register_grad(Images2NeibsGrad)
def images2neibs_grad_grad(op, inputs, outputs, output_grads):
    _, _, neib_shape, neib_step = inputs
    return [None, Images2Neibs(op.mode)(output_grads[0], neib_shape, neib_step), None, None]
