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


class _BlasUpdate(Op):
    """``Z * beta + alpha * dot(X, Y)`` with 0-d ``alpha, beta``, all of one float dtype;
    a subclass names the operands and their ranks (``ROLES``). ``beta == 0`` ignores Z's
    values (NaN included), as BLAS does. With ``inplace=True`` the result is written into
    ``Z`` (declared in ``destroy_map``)."""

    __props__ = ("inplace",)
    ROLES: tuple[tuple[str, int], ...] = ()

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{'inplace' if self.inplace else 'no_inplace'}}}"

    def make_node(self, z: Any, alpha: Any, x: Any, y: Any, beta: Any) -> Apply:
        what = type(self).__name__.lower()
        (zn, _), _, (xn, _), (yn, _), _ = self.ROLES
        z, alpha, x, y, beta = (as_tensor_variable(v) for v in (z, alpha, x, y, beta))
        for (name, ndim), var in zip(self.ROLES, (z, alpha, x, y, beta)):
            if var.ndim != ndim:
                raise TypeError(f"{what}: {name} ({var.describe()}) must be {ndim}-d, got {var.ndim}-d")
            if var.dtype != z.dtype or var.dtype not in _BLAS_DTYPES:
                raise TypeError(f"{what}: every input must be float32 or float64 and of one dtype; "
                                f"{name} ({var.describe()}) is {var.dtype}, {zn} is {z.dtype}")
        dot_pattern = x.broadcastable[:1] + y.broadcastable[1:]
        if z.broadcastable != dot_pattern:
            raise TypeError(f"{what}: {zn} ({z.describe()}, {z.type.describe()}) must have the "
                            f"broadcast pattern of dot({xn}, {yn}), {dot_pattern}")
        return Apply(self, [z, alpha, x, y, beta], [TensorType(z.dtype, z.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        z, alpha, x, y, beta = inputs
        self.check_shapes(z, x, y)
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
                z[...] = 0
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

    @classmethod
    def check_shapes(cls, z: Any, x: Any, y: Any) -> None:
        """A ValueError unless ``dot(x, y)`` has ``z``'s shape (arrays anywhere: the device
        ops check with it too)."""
        if z.shape != tuple(x.shape[:1]) + tuple(y.shape[1:]) or x.shape[1] != y.shape[0]:
            (zn, _), _, (xn, _), (yn, _), _ = cls.ROLES
            raise ValueError(f"{cls.__name__.lower()}: {zn} has shape {z.shape}, {xn} {x.shape} "
                             f"and {yn} {y.shape}; dot({xn}, {yn}) must have {zn}'s shape")


class Gemm(_BlasUpdate):
    """``Z * beta + alpha * dot(X, Y)`` for matrices ``Z, X, Y`` (BLAS's gemm)."""

    ROLES = (("Z", 2), ("alpha", 0), ("X", 2), ("Y", 2), ("beta", 0))


class Gemv(_BlasUpdate):
    """``y * beta + alpha * dot(A, x)`` for a matrix ``A`` and vectors ``y, x`` (Theano's
    Gemv, BLAS's gemv)."""

    ROLES = (("y", 1), ("alpha", 0), ("A", 2), ("x", 1), ("beta", 0))


gemm = Gemm(False)
gemm_inplace = Gemm(True)
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
