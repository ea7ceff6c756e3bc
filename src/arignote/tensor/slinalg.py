"""Theano's ``tensor.slinalg``: linear algebra through ``scipy.linalg``.

``cholesky``, ``solve`` (and Theano's structured variants ``solve_lower_triangular``,
``solve_upper_triangular``, ``solve_symmetric``; ``solve_triangular`` is
scipy's name for the first two), ``eigvalsh`` (also generalized, with ``b``),
``expm`` and ``kron``. The ops run LAPACK on the host (placement keeps them on
the CPU and says why); their gradients are in ``tensor/grad/linalg.py``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.tensor.blas import outer
from arignote.tensor.join import concatenate
from arignote.tensor.nlinalg import HostLinalgOp, as_matrix, check_square
from arignote.tensor.shape import reshape, shape_i
from arignote.tensor.shape import shape as _shape
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Cholesky", "Solve", "Eigvalsh", "EigvalshGrad", "Expm", "ExpmGrad", "cholesky", "solve",
           "solve_lower_triangular", "solve_upper_triangular", "solve_symmetric", "solve_triangular",
           "eigvalsh", "expm", "kron", "MATRIX_STRUCTURES"]



def _linalg() -> Any:
    """``scipy.linalg``, imported on first use: it costs about 0.25 s, a third of ``import arignote``."""
    import scipy.linalg
    return scipy.linalg


MATRIX_STRUCTURES = ("general", "symmetric", "lower_triangular", "upper_triangular", "hermitian",
                     "banded", "diagonal", "toeplitz")


class Cholesky(HostLinalgOp):
    """The triangular factor ``L`` of a positive definite ``x = L L.T`` (``lower``), or ``U``
    with ``x = U.T U``; only that triangle of ``x`` is read. ``on_error='nan'`` gives a matrix
    of NaNs instead of raising when ``x`` is not positive definite."""

    __props__ = ("lower", "on_error")

    def __init__(self, lower: bool = True, on_error: str = "raise"):
        if on_error not in ("raise", "nan"):
            raise ValueError(f"cholesky: on_error must be 'raise' or 'nan', got {on_error!r}")
        self.lower, self.on_error = bool(lower), on_error

    def make_node(self, x: Any) -> Apply:
        x = as_matrix(x, "cholesky", square=True)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        check_square(x, node.inputs[0], "cholesky")
        try:
            factor = _linalg().cholesky(x, lower=self.lower)
        except _linalg().LinAlgError as err:
            if self.on_error == "raise":
                raise _linalg().LinAlgError(f"cholesky of {node.inputs[0].describe()}: {err} (pass "
                                               "on_error='nan' to get NaNs instead)") from None
            factor = np.full(x.shape, np.nan)
        output_storage[0][0] = factor.astype(node.outputs[0].dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class Solve(HostLinalgOp):
    """``x`` with ``A x = b`` (``b`` a vector or a matrix). ``A_structure`` 'lower_triangular'
    and 'upper_triangular' read that triangle of ``A`` only (``scipy.linalg.solve_triangular``);
    any other structure solves the general system, as Theano did. Integer ``A`` and ``b`` are
    allowed, as in Theano: ``x`` has the dtype scipy gives (float64, or float32 for float32
    and small integers)."""

    __props__ = ("A_structure", "lower", "overwrite_A", "overwrite_b")

    def __init__(self, A_structure: str = "general", lower: bool = False, overwrite_A: bool = False,
                 overwrite_b: bool = False):
        if A_structure not in MATRIX_STRUCTURES:
            raise ValueError(f"solve: A_structure must be one of {', '.join(MATRIX_STRUCTURES)}, "
                             f"got {A_structure!r}")
        self.A_structure, self.lower = A_structure, bool(lower)
        self.overwrite_A, self.overwrite_b = bool(overwrite_A), bool(overwrite_b)

    def make_node(self, A: Any, b: Any) -> Apply:
        A = as_matrix(A, "solve", square=True, integers=True)
        b = as_tensor_variable(b)
        if b.ndim not in (1, 2):
            raise TypeError(f"solve: b must be a vector or a matrix, got {b.describe()} ({b.type})")
        dtype = _linalg().solve(np.eye(1, dtype=A.dtype), np.eye(1, dtype=b.dtype)).dtype.name
        return Apply(self, [A, b], [TensorType(dtype, b.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        A, b = inputs
        check_square(A, node.inputs[0], "solve")
        if A.shape[0] != b.shape[0]:
            raise ValueError(f"solve: A ({node.inputs[0].describe()}) is {A.shape} but b "
                             f"({node.inputs[1].describe()}) has {b.shape[0]} rows")
        if self.A_structure in ("lower_triangular", "upper_triangular"):
            x = _linalg().solve_triangular(A, b, lower=self.A_structure == "lower_triangular")
        else:
            x = _linalg().solve(A, b)
        output_storage[0][0] = np.asarray(x, dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        rows = input_shapes[0][1]
        return [(rows,) if len(input_shapes[1]) == 1 else (rows, input_shapes[1][1])]


solve = Solve()
solve_lower_triangular = Solve(A_structure="lower_triangular", lower=True)
solve_upper_triangular = Solve(A_structure="upper_triangular", lower=False)
solve_symmetric = Solve(A_structure="symmetric")


def solve_triangular(a: Any, b: Any, lower: bool = False) -> Variable:
    """``x`` with ``a x = b`` for triangular ``a`` (scipy's name; ``lower`` picks the triangle)."""
    return (solve_lower_triangular if lower else solve_upper_triangular)(a, b)


class Eigvalsh(HostLinalgOp):
    """The ascending eigenvalues of the symmetric ``a``, or of the generalized problem
    ``a v = w b v`` (``b`` positive definite); only the ``lower`` (or upper) triangles are read."""

    __props__ = ("lower",)

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    def make_node(self, a: Any, b: Any = None) -> Apply:
        a = as_matrix(a, "eigvalsh", square=True)
        if isinstance(b, Constant) and b.data is None:  # Theano's NoneConst: no b
            b = None
        inputs = [a] if b is None else [a, as_matrix(b, "eigvalsh (b)", square=True)]
        dtype = np.result_type(*[v.dtype for v in inputs], np.float32 if a.dtype == "float32" else np.float64)
        return Apply(self, inputs, [TensorType(dtype.name, (False,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        b = inputs[1] if len(inputs) > 1 else None
        w = _linalg().eigvalsh(inputs[0], b, lower=self.lower)
        output_storage[0][0] = w.astype(node.outputs[0].dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(input_shapes[0][0],)]


class EigvalshGrad(HostLinalgOp):
    """The gradients of ``Eigvalsh`` with respect to ``a`` (and ``b``) given that of ``w``:
    with ``v`` the ``b``-orthonormal eigenvectors, ``v diag(gw) v.T`` and ``-v diag(gw w) v.T``,
    folded onto the triangle that is read."""

    __props__ = ("lower",)

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    def make_node(self, a: Any, *rest: Any) -> Apply:
        a = as_tensor_variable(a)
        inputs = [a] + [as_tensor_variable(v) for v in rest]
        dtype = np.result_type(*[v.dtype for v in inputs]).name
        n_out = len(inputs) - 1
        return Apply(self, inputs, [TensorType(dtype, (False, False))() for _ in range(n_out)])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, b, gw = (inputs[0], None, inputs[1]) if len(inputs) == 2 else inputs
        w, v = _linalg().eigh(a, b, lower=self.lower)
        grads = [(v * gw) @ v.T] + ([] if b is None else [-(v * (gw * w)) @ v.T])
        for cell, g, out in zip(output_storage, grads, node.outputs):
            cell[0] = fold_symmetric(g, self.lower).astype(out.dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]] * len(node.outputs)


def fold_symmetric(g: np.ndarray, lower: bool) -> np.ndarray:
    """The gradient of a function that reads one triangle of a symmetric matrix, from the
    gradient ``g`` of the full matrix: each entry of that triangle gets itself and its mirror."""
    if lower:
        return np.tril(g) + np.triu(g, 1).T
    return np.triu(g) + np.tril(g, -1).T


def eigvalsh(a: Any, b: Any = None, lower: bool = True) -> Variable:
    """The eigenvalues of the symmetric matrix ``a`` (generalized with ``b``), ascending."""
    return Eigvalsh(lower)(a, b)


class Expm(HostLinalgOp):
    """``scipy.linalg.expm``: the matrix exponential of a square matrix."""

    def make_node(self, A: Any) -> Apply:
        A = as_matrix(A, "expm", square=True)
        return Apply(self, [A], [A.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        check_square(inputs[0], node.inputs[0], "expm")
        output_storage[0][0] = np.asarray(_linalg().expm(inputs[0]), dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


class ExpmGrad(HostLinalgOp):
    """The gradient of ``expm`` at ``A`` given that of its result ``G``: the Frechet
    derivative of the exponential at ``A.T`` in the direction ``G`` (``scipy.linalg.expm_frechet``)."""

    def make_node(self, A: Any, G: Any) -> Apply:
        A, G = as_tensor_variable(A), as_tensor_variable(G)
        return Apply(self, [A, G], [A.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        A, G = inputs
        derivative = _linalg().expm_frechet(A.T, G, compute_expm=False)
        output_storage[0][0] = np.asarray(derivative, dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


cholesky = Cholesky()
expm = Expm()


def kron(a: Any, b: Any) -> Variable:
    """The Kronecker product (``scipy.linalg.kron``: for matrices, ``numpy.kron``); the two
    ranks must add up to 3 or more, as in Theano."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim + b.ndim <= 2:
        raise TypeError(f"kron: the ranks of its inputs must add up to 3 or more, got {a.ndim} and {b.ndim}")
    o = reshape(outer(a, b), concatenate([_shape(a), _shape(b)]), ndim=a.ndim + b.ndim)
    if o.ndim == 3:
        return o.dimshuffle(1, 0, 2).flatten()
    shuffled = o.dimshuffle(0, 2, 1, *range(3, o.ndim))
    rest = [shape_i(o, i) for i in range(4, o.ndim)]
    return reshape(shuffled, [shape_i(o, 0) * shape_i(o, 2), shape_i(o, 1) * shape_i(o, 3)] + rest,
                   ndim=o.ndim - 2)
