"""``tensor.fourier``: ``fft(a, n, axis)``, numpy's complex FFT along one axis, as an op.

``n`` crops or zero-pads the transformed axis (default: its length); ``axis``
defaults to the last and may be an int scalar variable. The result is
complex128. Theano had no gradient for it (complex gradients were never
enabled); neither does this op.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.gradient import grad_not_implemented
from arignote.graph.basic import Apply, Constant, Op, Variable
from arignote.scalar.dtypes import INTEGER
from arignote.tensor import math as tm
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Fourier", "fft"]


def _int_scalar(value: Any, what: str, op: str) -> Variable:
    var = as_tensor_variable(value)
    if var.ndim != 0 or var.dtype not in INTEGER:
        raise TypeError(f"{op}: {what} must be an integer scalar, got {var.describe()} ({var.type.describe()})")
    return var


class Fourier(Op):
    """The finite Fourier transform of ``a`` along ``axis``, to length ``n``."""

    __props__ = ()

    def make_node(self, a: Any, n: Any = None, axis: Any = None) -> Apply:
        a = as_tensor_variable(a)
        if a.ndim < 1:
            raise TypeError(f"fft: the input must have at least one dimension, got {a.describe()}")
        if axis is None:
            axis = a.ndim - 1
        axis = _int_scalar(axis, "the axis", "fft")
        if isinstance(axis, Constant):
            index = int(axis.data)
            if not -a.ndim <= index < a.ndim:
                raise TypeError(f"fft: axis {index} is out of range for {a.describe()}, which has "
                                f"{a.ndim} dimensions")
            axis = as_tensor_variable(np.int64(index % a.ndim))
        n = _int_scalar(a.shape[axis] if n is None else n, "the length n", "fft")
        if isinstance(n, Constant) and int(n.data) < 1:
            raise TypeError(f"fft: the length n must be at least 1, got {int(n.data)}")
        if isinstance(axis, Constant):
            broadcastable = tuple(b and d != int(axis.data) for d, b in enumerate(a.broadcastable))
        else:
            broadcastable = (False,) * a.ndim
        return Apply(self, [a, n, axis], [TensorType("complex128", broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, n, axis = inputs
        if int(n) < 1:
            raise ValueError(f"fft: the length n must be at least 1, got {int(n)}")
        output_storage[0][0] = np.fft.fft(a, n=int(n), axis=int(axis)).astype("complex128", copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        _, n, axis = node.inputs
        n, shape = tm.cast(n, "int64"), input_shapes[0]
        if isinstance(axis, Constant):
            index = int(axis.data)
            return [tuple(n if d == index else s for d, s in enumerate(shape))]
        return [tuple(tm.switch(tm.eq(axis, d), n, s) for d, s in enumerate(shape))]

    def grad(self, inputs: list, output_grads: list) -> list:
        return [grad_not_implemented(self, 0, inputs[0], "complex gradients of fft are not "
                                     "implemented (as in Theano)"), None, None]


fft = Fourier()
