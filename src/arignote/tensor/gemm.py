"""Ops that only the specialize rewrites create: Gemm, Gemv and SumOfSquares.

``Gemm`` is BLAS's ``Z * beta + alpha * dot(X, Y)`` on matrices, ``Gemv`` its
``y * beta + alpha * dot(A, x)`` for a matrix ``A`` and vectors; their in-place
forms overwrite ``Z`` (``y``), and the in-place rewrite uses them only where the
destroy check proves that input is needed nowhere else. It goes through numpy's
BLAS on purpose: scipy ships a second OpenBLAS whose thread pool, spinning
beside numpy's, made every product several times slower on two threads. ``SumOfSquares`` is
``sum(x ** 2, axis)`` in one pass over ``x``, without the squared temporary.
None has a gradient: rewrites run after gradients are built.
"""
from __future__ import annotations

import string
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Op
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Gemm", "Gemv", "SumOfSquares", "gemm", "gemm_inplace", "gemv", "gemv_inplace"]

_BLAS_DTYPES = ("float32", "float64")


class Gemm(Op):
    """``Z * beta + alpha * dot(X, Y)`` for matrices ``Z, X, Y`` and 0-d ``alpha, beta``.

    All five share one float dtype. With ``inplace=True`` the result is written
    into ``Z`` (declared in ``destroy_map``).
    """

    __props__ = ("inplace",)

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self) -> str:
        return "Gemm{inplace}" if self.inplace else "Gemm{no_inplace}"

    def make_node(self, z: Any, alpha: Any, x: Any, y: Any, beta: Any) -> Apply:
        z, alpha, x, y, beta = (as_tensor_variable(v) for v in (z, alpha, x, y, beta))
        for name, var, ndim in (("Z", z, 2), ("alpha", alpha, 0), ("X", x, 2), ("Y", y, 2),
                                ("beta", beta, 0)):
            if var.ndim != ndim:
                raise TypeError(f"gemm: {name} ({var.describe()}) must be {ndim}-d, got {var.ndim}-d")
            if var.dtype != z.dtype or var.dtype not in _BLAS_DTYPES:
                raise TypeError(f"gemm: every input must be float32 or float64 and of one dtype; "
                                f"{name} ({var.describe()}) is {var.dtype}, Z is {z.dtype}")
        dot_pattern = (x.broadcastable[0], y.broadcastable[1])
        if z.broadcastable != dot_pattern:
            raise TypeError(f"gemm: Z ({z.describe()}, {z.type.describe()}) must have the broadcast "
                            f"pattern of dot(X, Y), {dot_pattern}")
        return Apply(self, [z, alpha, x, y, beta], [TensorType(z.dtype, z.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        z, alpha, x, y, beta = inputs
        if z.shape != (x.shape[0], y.shape[1]) or x.shape[1] != y.shape[0]:
            raise ValueError(f"gemm: Z has shape {z.shape}, X {x.shape} and Y {y.shape}; "
                             "dot(X, Y) must have Z's shape")
        out = output_storage[0][0]
        if (not self.inplace and isinstance(out, np.ndarray) and out.shape == z.shape
                and out.dtype == z.dtype and out.flags.c_contiguous
                and not any(np.may_share_memory(out, v) for v in (z, x, y))):
            product = np.dot(x, y, out=out)  # last call's buffer (a spare-buffered update's too)
        else:
            product = np.dot(x, y)
        if alpha != 1:
            np.multiply(product, alpha, out=product)
        if self.inplace:
            if beta == 0:
                z[...] = 0  # BLAS's rule: Z's values (NaN included) do not count
            elif beta != 1:
                np.multiply(z, beta, out=z)
            np.add(z, product, out=z)
            output_storage[0][0] = z
            return
        if beta == 1:
            np.add(product, z, out=product)
        elif beta != 0:
            product += z * beta
        output_storage[0][0] = product

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


gemm = Gemm(False)
gemm_inplace = Gemm(True)


class Gemv(Op):
    """``y * beta + alpha * dot(A, x)`` for a matrix ``A``, vectors ``y, x`` and 0-d
    ``alpha, beta`` of one float dtype (Theano's Gemv). ``beta == 0`` ignores ``y``'s
    values, as BLAS does. With ``inplace=True`` the result is written into ``y``."""

    __props__ = ("inplace",)

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self) -> str:
        return "Gemv{inplace}" if self.inplace else "Gemv{no_inplace}"

    def make_node(self, y: Any, alpha: Any, a: Any, x: Any, beta: Any) -> Apply:
        y, alpha, a, x, beta = (as_tensor_variable(v) for v in (y, alpha, a, x, beta))
        for name, var, ndim in (("y", y, 1), ("alpha", alpha, 0), ("A", a, 2), ("x", x, 1),
                                ("beta", beta, 0)):
            if var.ndim != ndim:
                raise TypeError(f"gemv: {name} ({var.describe()}) must be {ndim}-d, got {var.ndim}-d")
            if var.dtype != y.dtype or var.dtype not in _BLAS_DTYPES:
                raise TypeError(f"gemv: every input must be float32 or float64 and of one dtype; "
                                f"{name} ({var.describe()}) is {var.dtype}, y is {y.dtype}")
        if y.broadcastable != a.broadcastable[:1]:
            raise TypeError(f"gemv: y ({y.describe()}, {y.type.describe()}) must have the broadcast "
                            f"pattern of dot(A, x), {a.broadcastable[:1]}")
        return Apply(self, [y, alpha, a, x, beta], [TensorType(y.dtype, y.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        y, alpha, a, x, beta = inputs
        if y.shape != a.shape[:1] or a.shape[1] != x.shape[0]:
            raise ValueError(f"gemv: y has shape {y.shape}, A {a.shape} and x {x.shape}; "
                             "dot(A, x) must have y's shape")
        out = output_storage[0][0]
        if self.inplace:
            if beta == 0:
                y[...] = 0
            elif beta != 1:
                np.multiply(y, beta, out=y)
            y += np.dot(a, x) * alpha
            output_storage[0][0] = y
            return
        reuse = (isinstance(out, np.ndarray) and out.shape == y.shape and out.dtype == y.dtype
                 and not any(np.may_share_memory(out, v) for v in (y, a, x)))
        product = np.dot(a, x, out=out) if reuse else np.dot(a, x)
        if alpha != 1:
            np.multiply(product, alpha, out=product)
        if beta == 1:
            np.add(product, y, out=product)
        elif beta != 0:
            product += y * beta
        output_storage[0][0] = product

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


gemv = Gemv(False)
gemv_inplace = Gemv(True)


class SumOfSquares(Op):
    """``sum(x * x, axis)`` for a float ``x``, in one pass, accumulating in ``acc_dtype``
    (None: ``x``'s; the rewrite gives the sum's, float64 for a float32 ``x``) and rounded
    once to ``x``'s dtype: BLAS dot or einsum in ``x``'s dtype; a wider accumulator is
    the native CPU kernel's (the reduction nest with the map ``sqr``), else einsum's."""

    __props__ = ("axis", "acc_dtype")
    acc_dtype = None  # the class default keeps the ops pickled before it existed loading

    def __init__(self, axis: Sequence[int], acc_dtype: str | None = None):
        self.axis = tuple(sorted(int(a) for a in axis))
        self.acc_dtype = None if acc_dtype is None else str(np.dtype(acc_dtype))

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.dtype not in _BLAS_DTYPES:
            raise TypeError(f"sum of squares of {x.describe()}: float32 or float64 only, got {x.dtype}")
        if self.acc_dtype is not None and np.promote_types(x.dtype, self.acc_dtype) != self.acc_dtype:
            raise TypeError(f"sum of squares of {x.describe()} ({x.dtype}) cannot accumulate in "
                            f"{self.acc_dtype}: give an accumulator at least as precise as {x.dtype}")
        if any(not 0 <= a < x.ndim for a in self.axis):
            raise np.exceptions.AxisError(f"{self}: {x.describe()} has {x.ndim} dimensions")
        broadcastable = [b for i, b in enumerate(x.broadcastable) if i not in self.axis]
        return Apply(self, [x], [TensorType(x.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        acc = self.acc_dtype or x.dtype
        if len(self.axis) == x.ndim and acc == x.dtype:
            flat = x.reshape(-1)
            result = np.dot(flat, flat)
        else:
            letters = string.ascii_letters[:x.ndim]
            kept = "".join(c for i, c in enumerate(letters) if i not in self.axis)
            result = np.einsum(f"{letters},{letters}->{kept}", x, x, dtype=acc)
        output_storage[0][0] = np.asarray(result, dtype=x.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [tuple(s for i, s in enumerate(input_shapes[0]) if i not in self.axis)]
