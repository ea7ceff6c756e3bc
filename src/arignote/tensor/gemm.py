"""BLAS ops: Gemm, Gemv, Ger, Dot22, Dot22Scalar (Theano's theano.tensor.blas), SumOfSquares.

``Gemm`` is BLAS's ``Z * beta + alpha * dot(X, Y)`` on matrices, ``Gemv`` its
``y * beta + alpha * dot(A, x)`` for a matrix ``A`` and vectors; their in-place
forms overwrite ``Z`` (``y``), and the in-place rewrite uses them only where the
destroy check proves that input is needed nowhere else. It goes through numpy's
BLAS on purpose: scipy ships a second OpenBLAS whose thread pool, spinning
beside numpy's, made every product several times slower on two threads. ``Ger`` is the
rank-1 update ``A + alpha * outer(x, y)``; ``Dot22`` (a Dot of two matrices) and
``Dot22Scalar`` (``dot(X, Y) * a``) are the forms Theano's rewrites built gemm from, kept for
its programs. The specialize rewrites create Gemm, Gemv and ``SumOfSquares``, which is
``sum(x ** 2, axis)`` in one pass over ``x``, without the squared temporary.
None but Dot22 (a Dot's) has a gradient: rewrites run after gradients are built.
"""
from __future__ import annotations

import string
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Op
from arignote.graph.errors import InconsistencyError
from arignote.graph.traversal import view_roots
from arignote.tensor.blas import Dot
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Gemm", "Gemv", "Ger", "Dot22", "Dot22Scalar", "SumOfSquares", "BlasInputError", "gemm",
           "gemm_inplace", "gemm_no_inplace", "gemv", "gemv_inplace", "gemv_no_inplace", "ger",
           "ger_destructive", "dot22", "dot22scalar"]

# Theano's BLAS ops take its float and complex dtypes (numpy's dot computes the rest).
_BLAS_DTYPES = ("float16", "float32", "float64", "complex64", "complex128")
_SUM_OF_SQUARES_DTYPES = ("float32", "float64")


class BlasInputError(TypeError):
    """A BLAS op's input of the wrong rank or dtype. ``args[0]`` is the kind of error
    (``Gemm.E_rank``, ``E_scalar``, ``E_mixed``, ``E_float``: Theano's programs compare it);
    the message names the input, what it is and what was expected."""

    def __init__(self, kind: str, message: str):
        super().__init__(kind, message)

    def __str__(self) -> str:
        return self.args[1]


class _Kinds:
    """The kinds of bad input the BLAS ops report, under Theano's names."""

    E_rank = "gemm only works for rank 2"
    E_scalar = "gemm requires scalar argument"
    E_z_uniq = "argument z aliased to x or y"
    E_mixed = "gemm requires matching dtypes"
    E_float = "gemm requires floating-point dtypes"


def _check_operands(what: str, roles: Sequence[tuple[str, int]], variables: Sequence[Any]) -> None:
    """A BlasInputError unless each variable has its role's rank and all share one BLAS dtype."""
    for (name, ndim), var in zip(roles, variables):
        if var.ndim != ndim:
            kind = _Kinds.E_scalar if ndim == 0 else _Kinds.E_rank
            raise BlasInputError(kind, f"{what}: {name} ({var.describe()}) must be {ndim}-d, "
                                       f"got {var.ndim}-d")
    first_name, first = roles[0][0], variables[0]
    for (name, _), var in zip(roles, variables):
        if var.dtype != first.dtype:
            raise BlasInputError(_Kinds.E_mixed, f"{what}: every input must have one dtype; {name} "
                                                 f"({var.describe()}) is {var.dtype}, {first_name} is "
                                                 f"{first.dtype}: cast one of them")
    if first.dtype not in _BLAS_DTYPES:
        raise BlasInputError(_Kinds.E_float, f"{what}: {first_name} ({first.describe()}) and the other "
                                             f"inputs are {first.dtype}; BLAS takes "
                                             f"{', '.join(_BLAS_DTYPES)}: cast them")


class _BlasUpdate(_Kinds, Op):
    """``Z * beta + alpha * dot(X, Y)`` with 0-d ``alpha, beta``, all of one float (complex)
    dtype; a subclass names the operands and their ranks (``ROLES``). The result has Z's type
    (a length-1 axis of ``dot(X, Y)`` may meet a Z that does not broadcast: the run-time check
    compares shapes). ``beta == 0`` ignores Z's values (NaN included), as BLAS does. With
    ``inplace=True`` the result is written into ``Z`` (declared in ``destroy_map``), which
    must then view neither ``X`` nor ``Y``."""

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
        if self.inplace:
            for name, var in ((xn, x), (yn, y)):
                if set(view_roots(z)) & set(view_roots(var)):
                    raise InconsistencyError(self.E_z_uniq, f"{what}: {zn} ({z.describe()}) shares memory "
                                             f"with {name} ({var.describe()}), and the in-place form "
                                             f"overwrites {zn}: use the no_inplace op")
        _check_operands(what, self.ROLES, (z, alpha, x, y, beta))
        return Apply(self, [z, alpha, x, y, beta], [TensorType(z.dtype, z.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        z, alpha, x, y, beta = inputs
        self.check_shapes(z, x, y)
        # The product goes straight into a buffer that can take it: Z itself when the
        # in-place form ignores Z's values (beta == 0: Gemv on a fresh vector), else the
        # last call's result (a spare-buffered update's too).
        target = z if self.inplace and beta == 0 else None if self.inplace else output_storage[0][0]
        if (isinstance(target, np.ndarray) and target.shape == z.shape and target.dtype == z.dtype
                and target.flags.c_contiguous
                and not any(np.may_share_memory(target, v) for v in ((x, y) if target is z else (z, x, y)))):
            product = np.dot(x, y, out=target)
        else:
            product = np.dot(x, y)
        if alpha != 1:
            np.multiply(product, alpha, out=product)
        if self.inplace:
            if beta == 0:
                if product is not z:
                    z[...] = product
            else:
                if beta != 1:
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


gemm = gemm_no_inplace = Gemm(False)
gemm_inplace = Gemm(True)
gemv = gemv_no_inplace = Gemv(False)
gemv_inplace = Gemv(True)


class Ger(_Kinds, Op):
    """BLAS's rank-1 update ``A + alpha * outer(x, y)`` for a matrix ``A``, 0-d ``alpha`` and
    vectors ``x, y``, all of one float (complex) dtype. ``destructive=True`` writes the
    result into ``A`` (declared in ``destroy_map``)."""

    __props__ = ("destructive",)
    ROLES = (("A", 2), ("alpha", 0), ("x", 1), ("y", 1))

    def __init__(self, destructive: bool = False):
        self.destructive = bool(destructive)
        self.destroy_map = {0: [0]} if self.destructive else {}

    def __str__(self) -> str:
        return f"Ger{{{'destructive' if self.destructive else 'non-destructive'}}}"

    def make_node(self, A: Any, alpha: Any, x: Any, y: Any) -> Apply:
        A, alpha, x, y = (as_tensor_variable(v) for v in (A, alpha, x, y))
        _check_operands("ger", self.ROLES, (A, alpha, x, y))
        return Apply(self, [A, alpha, x, y], [A.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        A, alpha, x, y = inputs
        if A.shape != (x.shape[0], y.shape[0]):
            raise ValueError(f"ger: A has shape {A.shape}, x {x.shape} and y {y.shape}; outer(x, y) "
                             "must have A's shape")
        out = A if self.destructive else A.copy()
        out += np.outer(x * alpha if alpha != 1 else x, y)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


ger = Ger(False)
ger_destructive = Ger(True)


class Dot22(Dot):
    """A Dot of two matrices of one float (complex) dtype (Theano's ``_dot22``); its gradient
    is Dot's."""

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        _check_operands("dot22", (("x", 2), ("y", 2)), (x, y))
        return super().make_node(x, y)


class Dot22Scalar(_Kinds, Op):
    """``dot(x, y) * a`` for matrices ``x, y`` and a 0-d ``a``, all of one float (complex)
    dtype (Theano's ``_dot22scalar``)."""

    __props__ = ()

    ROLES = (("x", 2), ("y", 2), ("a", 0))

    def make_node(self, x: Any, y: Any, a: Any) -> Apply:
        x, y, a = (as_tensor_variable(v) for v in (x, y, a))
        _check_operands("dot22scalar", self.ROLES, (x, y, a))
        broadcastable = (x.broadcastable[0], y.broadcastable[1])
        return Apply(self, [x, y, a], [TensorType(x.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, y, a = inputs
        if x.shape[1] != y.shape[0]:
            raise ValueError(f"dot22scalar: x has shape {x.shape} and y {y.shape}; x's columns must "
                             "match y's rows")
        product = np.dot(x, y)
        if a != 1:
            np.multiply(product, a, out=product)
        output_storage[0][0] = product

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(input_shapes[0][0], input_shapes[1][1])]


dot22 = Dot22()
dot22scalar = Dot22Scalar()


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
        if x.dtype not in _SUM_OF_SQUARES_DTYPES:
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
