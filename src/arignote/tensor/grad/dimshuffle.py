"""The gradient of DimShuffle: the inverse shuffle of the output gradient."""
from __future__ import annotations

from arignote.gradient import register_grad
from arignote.scalar.dtypes import DISCRETE
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.reduction import sum as _sum


@register_grad(DimShuffle)
def dimshuffle_grad(op, inputs, outputs, output_grads):
    x, gz = inputs[0], output_grads[0]
    if x.dtype in DISCRETE:
        return [None]  # Theano's rule: a dimshuffled integer gets no gradient
    added = [k for k, item in enumerate(op.new_order) if item == "x"]
    # The added axes have length 1; the gradient may not know it yet.
    unknown = [k for k in added if not gz.broadcastable[k]]
    if unknown:
        gz = _sum(gz, unknown, keepdims=True)
    kept = [item for item in op.new_order if item != "x"]
    squeezed = DimShuffle(gz.broadcastable, [k for k in range(gz.ndim) if k not in added])(gz)
    # squeezed's axis j is x's axis kept[j]; dropped axes of x come back as 'x'.
    order = ["x" if axis in op.drop else kept.index(axis) for axis in range(x.ndim)]
    return [DimShuffle(squeezed.broadcastable, order)(squeezed)]
