"""Theano's ``tensor.nlinalg``: linear algebra through ``numpy.linalg``.

``matrix_inverse``, ``pinv``, ``det``, ``eig``, ``eigh``, ``svd``, ``qr``,
``lstsq``, ``tensorinv``, ``tensorsolve``, and the helpers ``matrix_dot``,
``trace``, ``diag``, ``alloc_diag``, ``extract_diag``, ``matrix_power``,
``norm``. The ops run LAPACK on the host,
so placement keeps them on the CPU and says why. Gradients (where Theano had
them: inverse, pinv, det, eigh) are in ``tensor/grad/linalg.py``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import DISCRETE, upgrade_to_float
from arignote.tensor import math as _math
from arignote.tensor import reduction as _reduction
from arignote.tensor.blas import dot
from arignote.tensor import diagonal as _diagonal
from arignote.tensor.diagonal import ExtractDiag
from arignote.tensor.hostop import HostOp
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["MatrixInverse", "MatrixPinv", "Det", "Eig", "Eigh", "EighGrad", "SVD", "QRFull",
           "QRIncomplete", "Lstsq", "lstsq", "TensorInv", "TensorSolve", "matrix_inverse", "pinv", "det",
           "eig", "eigh", "svd", "qr", "tensorinv", "tensorsolve", "matrix_dot", "trace", "diag",
           "AllocDiag", "alloc_diag", "extract_diag", "matrix_power", "norm"]

class HostLinalgOp(HostOp):
    """A linear-algebra op computed by LAPACK on the host."""

    host_reason = "LAPACK through numpy/scipy runs it on the host"


def as_matrix(x: Any, what: str, square: bool = False, integers: bool = False) -> Variable:
    """``x`` as a float (or complex) matrix, or a clear error naming ``what``; ``integers``
    lets integer matrices through, for ops whose output dtype scipy upcasts."""
    x = as_tensor_variable(x)
    if x.ndim != 2:
        raise TypeError(f"{what} expects a matrix, got {x.describe()} of type {x.type}")
    if x.dtype in DISCRETE and not integers:
        raise TypeError(f"{what} of the integer matrix {x.describe()} ({x.dtype}): cast it to a "
                        "float dtype first, e.g. tensor.cast(x, 'float64')")
    if square and x.broadcastable[0] != x.broadcastable[1]:
        raise ValueError(f"{what} expects a square matrix, but {x.describe()} is {x.type}")
    return x


def check_square(value: np.ndarray, var: Variable, what: str) -> None:
    if value.shape[0] != value.shape[1]:
        raise ValueError(f"{what} of {var.describe()}: the matrix must be square, got shape {value.shape}")


class MatrixInverse(HostLinalgOp):
    """``numpy.linalg.inv``."""

    def make_node(self, x: Any) -> Apply:
        x = as_matrix(x, "matrix_inverse", square=True)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        check_square(inputs[0], node.inputs[0], "matrix_inverse")
        output_storage[0][0] = np.linalg.inv(inputs[0]).astype(node.outputs[0].dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class MatrixPinv(HostLinalgOp):
    """``numpy.linalg.pinv``: the Moore-Penrose pseudo-inverse (any shape)."""

    def make_node(self, x: Any) -> Apply:
        x = as_matrix(x, "pinv")
        return Apply(self, [x], [TensorType(x.dtype, x.broadcastable[::-1])()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.linalg.pinv(inputs[0]).astype(node.outputs[0].dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0][::-1]]


class Det(HostLinalgOp):
    """``numpy.linalg.det``: a scalar of the matrix's dtype."""

    def make_node(self, x: Any) -> Apply:
        x = as_matrix(x, "det", square=True)
        return Apply(self, [x], [TensorType(x.dtype, ())()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        check_square(inputs[0], node.inputs[0], "det")
        output_storage[0][0] = np.asarray(np.linalg.det(inputs[0]), dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [()]


class Eig(HostLinalgOp):
    """``numpy.linalg.eig``: eigenvalues ``w`` and right eigenvectors ``v`` (columns), of the
    matrix's dtype. A real matrix whose eigenvalues are complex is an error (Theano dropped the
    imaginary parts); compute on a complex matrix to get them."""

    def make_node(self, x: Any) -> Apply:
        x = as_matrix(x, "eig", square=True)
        return Apply(self, [x], [TensorType(x.dtype, (False,))(), TensorType(x.dtype, (False, False))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        check_square(x, node.inputs[0], "eig")
        w, v = np.linalg.eig(x)
        if np.iscomplexobj(w) and not np.iscomplexobj(x):
            if np.any(w.imag != 0):
                raise ValueError(f"eig of the real matrix {node.inputs[0].describe()}: its eigenvalues "
                                 "are complex, which a real result cannot hold: cast the matrix to "
                                 "complex128 first (or use eigh for a symmetric matrix)")
            w, v = w.real, v.real
        output_storage[0][0] = w.astype(node.outputs[0].dtype, copy=False)
        output_storage[1][0] = v.astype(node.outputs[1].dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        n = input_shapes[0][0]
        return [(n,), (n, n)]


class Eigh(Eig):
    """``numpy.linalg.eigh(x, UPLO)``: ascending eigenvalues and orthonormal eigenvectors of a
    symmetric (Hermitian) matrix, of which only the ``UPLO`` triangle is read (a kind of Eig,
    as in Theano, whose code looks for Eig nodes)."""

    __props__ = ("UPLO",)

    def __init__(self, UPLO: str = "L"):
        if UPLO not in ("L", "U"):
            raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
        self.UPLO = UPLO

    def make_node(self, x: Any) -> Apply:
        x = as_matrix(x, "eigh", square=True)
        w_dtype = np.linalg.eigh(np.ones((1, 1), dtype=x.dtype))[0].dtype.name
        return Apply(self, [x], [TensorType(w_dtype, (False,))(), TensorType(x.dtype, (False, False))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        check_square(inputs[0], node.inputs[0], "eigh")
        w, v = np.linalg.eigh(inputs[0], self.UPLO)
        output_storage[0][0] = w.astype(node.outputs[0].dtype, copy=False)
        output_storage[1][0] = v.astype(node.outputs[1].dtype, copy=False)


class EighGrad(HostLinalgOp):
    """The gradient of ``Eigh`` with respect to its matrix, given those of ``w`` and ``v``.

    With ``F[m, n] = 1 / (w[n] - w[m])`` off the diagonal, the gradient of the
    full symmetric matrix is ``v (diag(gw) + F * (v.T gv)) v.T``; since ``eigh``
    reads one triangle, that triangle gets the sum of each entry and its mirror.
    """

    __props__ = ("UPLO",)

    def __init__(self, UPLO: str = "L"):
        self.UPLO = UPLO

    def make_node(self, x: Any, w: Any, v: Any, gw: Any, gv: Any) -> Apply:
        x, w, v, gw, gv = map(as_tensor_variable, (x, w, v, gw, gv))
        dtype = np.result_type(*[t.dtype for t in (x, w, v, gw, gv)]).name
        return Apply(self, [x, w, v, gw, gv], [TensorType(dtype, (False, False))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        _, w, v, gw, gv = inputs
        with np.errstate(divide="ignore"):
            f = 1.0 / (w[np.newaxis, :] - w[:, np.newaxis])
        np.fill_diagonal(f, 0.0)
        g = v @ (np.diag(gw) + f * (v.T @ gv)) @ v.T
        one, other = (np.tril, np.triu) if self.UPLO == "L" else (np.triu, np.tril)
        folded = one(g) + one(other(g, 1 if self.UPLO == "L" else -1).T)
        output_storage[0][0] = folded.astype(node.outputs[0].dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class SVD(HostLinalgOp):
    """``numpy.linalg.svd``: ``(u, s, vt)``, or ``s`` alone with ``compute_uv=False``."""

    __props__ = ("full_matrices", "compute_uv")

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True):
        self.full_matrices, self.compute_uv = bool(full_matrices), bool(compute_uv)

    def make_node(self, x: Any) -> Apply:
        x = as_matrix(x, "svd")
        s_dtype = np.linalg.svd(np.ones((1, 1), dtype=x.dtype), compute_uv=False).dtype.name
        s = TensorType(s_dtype, (False,))()
        if not self.compute_uv:
            return Apply(self, [x], [s])
        return Apply(self, [x], [TensorType(x.dtype, (False, False))(), s, TensorType(x.dtype, (False, False))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        result = np.linalg.svd(inputs[0], self.full_matrices, self.compute_uv)
        result = tuple(result) if self.compute_uv else (result,)
        for cell, value, out in zip(output_storage, result, node.outputs):
            cell[0] = np.asarray(value, dtype=out.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        m, n = input_shapes[0]
        k = _math.minimum(m, n)
        if not self.compute_uv:
            return [(k,)]
        return [(m, m if self.full_matrices else k), (k,), (n if self.full_matrices else k, n)]


class QRFull(HostLinalgOp):
    """``numpy.linalg.qr(x, mode)`` for the modes with two results: 'reduced', 'complete', 'raw'."""

    __props__ = ("mode",)

    def __init__(self, mode: str):
        self.mode = mode

    def make_node(self, x: Any) -> Apply:
        x = as_matrix(x, "qr")
        r = TensorType(x.dtype, (False,) if self.mode == "raw" else (False, False))()
        return Apply(self, [x], [TensorType(x.dtype, (False, False))(), r])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        for cell, value, out in zip(output_storage, np.linalg.qr(inputs[0], self.mode), node.outputs):
            cell[0] = np.asarray(value, dtype=out.dtype)


class QRIncomplete(HostLinalgOp):
    """``numpy.linalg.qr(x, 'r')``: ``r`` alone."""

    __props__ = ("mode",)

    def __init__(self, mode: str):
        self.mode = mode

    def make_node(self, x: Any) -> Apply:
        x = as_matrix(x, "qr")
        return Apply(self, [x], [TensorType(x.dtype, (False, False))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(np.linalg.qr(inputs[0], self.mode), dtype=node.outputs[0].dtype)


matrix_inverse = MatrixInverse()
pinv = MatrixPinv()
det = Det()
eig = Eig()


class AllocDiag(_diagonal.AllocDiag):
    """``numpy.diag`` of a vector: Theano's ``nlinalg.AllocDiag``, which took vectors only
    (``tensor.AllocDiag`` takes an offset, axes and stacks of diagonals)."""

    def make_node(self, d: Any) -> Apply:
        d = as_tensor_variable(d)
        if d.ndim != 1:
            raise TypeError(f"nlinalg.alloc_diag takes a vector, got {d.describe()} ({d.ndim}-d): "
                            "use tensor.AllocDiag(offset, axis1, axis2) for stacks of diagonals")
        return super().make_node(d)


alloc_diag = AllocDiag()
extract_diag = ExtractDiag()


class Lstsq(HostLinalgOp):
    """``numpy.linalg.lstsq(a, b, rcond)``: ``[x, residuals, rank, s]`` (Theano spells the
    class ``lstsq``: ``lstsq()(a, b, rcond)``)."""

    def make_node(self, a: Any, b: Any, rcond: Any) -> Apply:
        a, b, rcond = (as_tensor_variable(v) for v in (a, b, rcond))
        if a.ndim != 2 or b.ndim not in (1, 2) or rcond.ndim != 0:
            raise TypeError(f"lstsq expects a coefficient matrix, a vector or matrix b and a scalar "
                            f"rcond, got {a.describe()} ({a.type}), {b.describe()} ({b.type}) and "
                            f"{rcond.describe()} ({rcond.type})")
        dtype = upgrade_to_float(a.dtype, b.dtype)
        real = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
        return Apply(self, [a, b, rcond], [TensorType(dtype, (False,) * b.ndim)(),
                                           TensorType(real, (False,))(), TensorType("int64", ())(),
                                           TensorType(real, (False,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b, rcond = inputs
        found = np.linalg.lstsq(a, b, rcond=float(rcond))
        for cell, value, out in zip(output_storage, found, node.outputs):
            cell[0] = np.asarray(value, dtype=out.dtype)


lstsq = Lstsq


class TensorInv(HostLinalgOp):
    """``numpy.linalg.tensorinv(a, ind)``: the inverse with respect to ``tensordot`` over the
    first ``ind`` axes; its shape is ``a.shape[ind:] + a.shape[:ind]``."""

    __props__ = ("ind",)

    def __init__(self, ind: int = 2):
        if not isinstance(ind, (int, np.integer)) or ind <= 0:
            raise ValueError(f"tensorinv: ind must be a positive int, got {ind!r}")
        self.ind = int(ind)

    def make_node(self, a: Any) -> Apply:
        a = as_tensor_variable(a)
        if a.dtype in DISCRETE or a.ndim <= self.ind:
            raise TypeError(f"tensorinv(ind={self.ind}) expects a float tensor of more than {self.ind} "
                            f"dimensions, got {a.describe()} ({a.type})")
        pattern = a.broadcastable[self.ind:] + a.broadcastable[:self.ind]
        return Apply(self, [a], [TensorType(a.dtype, pattern)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.linalg.tensorinv(inputs[0], self.ind).astype(node.outputs[0].dtype,
                                                                                copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = tuple(input_shapes[0])
        return [shape[self.ind:] + shape[:self.ind]]


class TensorSolve(HostLinalgOp):
    """``numpy.linalg.tensorsolve(a, b, axes)``: ``x`` with ``tensordot(a, x, x.ndim) == b``,
    of ``a.ndim - b.ndim`` dimensions (``a.shape[b.ndim:]`` once ``axes`` are moved last)."""

    __props__ = ("axes",)

    def __init__(self, axes: Any = None):
        self.axes = None if axes is None else tuple(int(x) for x in axes)

    def make_node(self, a: Any, b: Any) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim <= b.ndim:
            raise TypeError(f"tensorsolve expects a of more dimensions than b, got {a.describe()} "
                            f"({a.type}) and {b.describe()} ({b.type})")
        dtype = upgrade_to_float(a.dtype, b.dtype)
        return Apply(self, [a, b], [TensorType(dtype, (False,) * (a.ndim - b.ndim))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b = inputs
        output_storage[0][0] = np.linalg.tensorsolve(a, b, self.axes).astype(node.outputs[0].dtype,
                                                                               copy=False)


def eigh(a: Any, UPLO: str = "L") -> list[Variable]:
    """``[w, v]``: eigenvalues and eigenvectors of the symmetric matrix ``a``."""
    return Eigh(UPLO)(a)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """``[u, s, vt]`` (or ``s``) of ``a``, as ``numpy.linalg.svd``."""
    return SVD(full_matrices, compute_uv)(a)


_QR_MODES = ("reduced", "complete", "r", "raw")


def qr(a: Any, mode: str = "reduced") -> Any:
    """The QR factorisation of ``a`` (``numpy.linalg.qr``): ``[q, r]``, ``r`` alone for
    ``mode='r'``, ``[h, tau]`` for 'raw'."""
    if mode not in _QR_MODES:
        raise ValueError(f"qr: mode must be one of {', '.join(_QR_MODES)}, got {mode!r}")
    return QRIncomplete(mode)(a) if mode == "r" else QRFull(mode)(a)


def tensorinv(a: Any, ind: int = 2) -> Variable:
    """The inverse of ``a`` with respect to ``tensordot`` over its first ``ind`` axes."""
    return TensorInv(ind)(a)


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Variable:
    """``x`` solving ``tensordot(a, x, x.ndim) == b`` (``axes``: ``a``'s axes to move last)."""
    return TensorSolve(axes)(a, b)


def matrix_dot(*args: Any) -> Variable:
    """The product ``args[0] . args[1] . ...`` of two or more matrices (or vectors)."""
    result = as_tensor_variable(args[0])
    for a in args[1:]:
        result = dot(result, a)
    return result


def trace(X: Any) -> Variable:
    """The sum of the diagonal of the matrix ``X``."""
    return _reduction.sum(extract_diag(X))


def diag(x: Any) -> Variable:
    """The diagonal of a matrix, or the square matrix with a vector on its diagonal."""
    x = as_tensor_variable(x)
    if x.ndim == 1:
        return alloc_diag(x)
    if x.ndim == 2:
        return extract_diag(x)
    raise TypeError(f"diag expects a vector or a matrix, got {x.describe()} ({x.ndim}-d)")


def matrix_power(M: Any, n: int) -> Variable:
    """The square matrix ``M`` to the power ``n`` (a Python int >= 0), by repeated products."""
    M = as_matrix(M, "matrix_power", square=True)
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"matrix_power: n must be an int >= 0, got {n!r} (invert the matrix first "
                         "for a negative power)")
    from arignote.tensor.alloc import identity_like
    result = identity_like(M)
    for _ in range(int(n)):
        result = dot(result, M)
    return result


def norm(x: Any, ord: Any) -> Variable:
    """The vector or matrix norm of ``x`` (Theano's ``nlinalg.norm``; ``ord`` None, 'fro',
    'inf', '-inf', or a number; matrices: None/'fro', 'inf', '-inf', 1, -1)."""
    x = as_tensor_variable(x)
    a = _math.abs(x)
    if x.ndim == 1:
        if isinstance(ord, str) and ord not in ("inf", "-inf"):
            raise ValueError(f"norm: ord={ord!r} is not a vector norm; use None, 'inf', '-inf' or "
                             "a number")
        if ord is None:
            return _math.sqrt(_reduction.sum(_math.sqr(x)))
        if ord == "inf":
            return _reduction.max(a)
        if ord == "-inf":
            return _reduction.min(a)
        if ord == 0:
            return _reduction.sum(_math.neq(x, 0))
        return _math.pow(_reduction.sum(_math.pow(a, ord)), 1.0 / ord)
    if x.ndim == 2:
        if ord is None or ord == "fro":
            return _math.sqrt(_reduction.sum(_math.sqr(a)))
        by = {"inf": (_reduction.max, 1), "-inf": (_reduction.min, 1), 1: (_reduction.max, 0),
              -1: (_reduction.min, 0)}
        if ord in by:
            pick, axis = by[ord]
            return pick(_reduction.sum(a, axis=axis))
        raise ValueError(f"norm: ord={ord!r} is not a matrix norm here; use None, 'fro', 'inf', "
                         "'-inf', 1 or -1")
    if x.ndim == 0:
        raise ValueError(f"norm of the scalar {x.describe()}: give a vector or a matrix")
    raise NotImplementedError(f"norm of {x.describe()} ({x.ndim}-d): only vectors and matrices "
                              "have a norm here; reshape it, or reduce over axes yourself")
