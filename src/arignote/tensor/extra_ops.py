"""Theano's ``tensor.extra_ops``: numpy functions that are not elementwise, reductions or indexing.

``cumsum``/``cumprod`` (``CumOp``), ``diff``, ``bincount``, ``searchsorted``,
``fill_diagonal`` and ``fill_diagonal_offset``, ``to_one_hot``,
``unravel_index``/``ravel_multi_index``, ``bartlett``, ``Unique``, ``cpu_contiguous``,
and ``squeeze``/``repeat`` (which live with the shape and join ops). Each op's
``perform`` is the numpy function; gradients are in ``tensor/grad/extra_ops.py``.
None has a GPU kernel (``HostOp``): placement keeps them on the CPU and says so.
``take_along_axis`` and ``permute_row_elements`` are gathers built from indexing;
``choose`` is numpy's (Theano had it in ``tensor``).
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.config import config
from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import DISCRETE, INTEGER
from arignote.tensor import math as _math
from arignote.tensor.alloc import alloc, arange, as_int_scalar, zeros
from arignote.tensor.composed import take
from arignote.tensor.hostop import HostOp
from arignote.tensor.join import Repeat, repeat
from arignote.tensor.shape import (checked_axis, product, reshape, shape_i, shape_padleft, squeeze,
                                   vector_length)
from arignote.tensor.sort import argsort
from arignote.tensor.subtensor import AdvancedSubtensor1, set_subtensor
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["CpuContiguous", "cpu_contiguous", "CumOp", "DiffOp", "SearchsortedOp", "BinCount",
           "FillDiagonal", "FillDiagonalOffset", "UnravelIndex", "RavelMultiIndex", "Bartlett", "Unique",
           "RepeatOp", "cumsum", "cumprod", "diff", "bincount", "searchsorted", "fill_diagonal", "fill_diagonal_offset", "to_one_hot",
           "unravel_index", "ravel_multi_index", "bartlett", "squeeze", "repeat", "take_along_axis",
           "permute_row_elements", "NonZero", "nonzero", "flatnonzero", "nonzero_values", "compress",
           "Choose", "choose"]

RepeatOp = Repeat  # Theano's name of the op


class RankError(TypeError, ValueError):
    """An input of the wrong number of dimensions: both the ValueError Theano raised and the
    TypeError arignote raises for a wrong type."""


# ---------------------------------------------------------------- contiguity
class CpuContiguous(HostOp):
    """A C-contiguous copy of ``x`` (``numpy.ascontiguousarray``), or ``x`` itself when it is
    already contiguous, for code handing the array to a library that needs that layout."""

    view_map = {0: [0]}

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.ascontiguousarray(inputs[0])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def cpu_contiguous(x: Any) -> Variable:
    """``x`` laid out C-contiguously (copied only when it is not already)."""
    return CpuContiguous()(x)


# ----------------------------------------------------------------- cumulative
class CumOp(HostOp):
    """``numpy.cumsum`` (mode 'add') or ``numpy.cumprod`` ('mul') along ``axis``; ``axis``
    None works on the flattened input and gives a vector. The dtype is the input's."""

    __props__ = ("axis", "mode")

    def __init__(self, axis: int | None = None, mode: str = "add"):
        if mode not in ("add", "mul"):
            raise ValueError(f"CumOp: mode must be 'add' or 'mul', got {mode!r}")
        self.axis = None if axis is None else int(axis)
        self.mode = mode

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.axis is None:
            return Apply(self, [x], [TensorType(x.dtype, (False,))()])
        checked_axis(x, self.axis, "cumsum" if self.mode == "add" else "cumprod")
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        fn = np.cumsum if self.mode == "add" else np.cumprod
        output_storage[0][0] = fn(inputs[0], axis=self.axis, dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        if self.axis is None:
            return [(product(list(input_shapes[0])),)]
        return [input_shapes[0]]

    def __str__(self) -> str:
        return f"CumOp{{{self.axis}, {self.mode}}}"


def cumsum(x: Any, axis: int | None = None) -> Variable:
    """The cumulative sum along ``axis`` (None: of the flattened ``x``), as ``numpy.cumsum``."""
    return CumOp(axis, "add")(x)


def cumprod(x: Any, axis: int | None = None) -> Variable:
    """The cumulative product along ``axis`` (None: of the flattened ``x``), as ``numpy.cumprod``."""
    return CumOp(axis, "mul")(x)


# ----------------------------------------------------------------------- diff
class DiffOp(HostOp):
    """``numpy.diff(x, n, axis)``: the ``n``-th discrete difference along ``axis``."""

    __props__ = ("n", "axis")

    def __init__(self, n: int = 1, axis: int = -1):
        if int(n) < 0:
            raise ValueError(f"diff: the order n must be >= 0, got {n}")
        self.n, self.axis = int(n), int(axis)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        axis = checked_axis(x, self.axis, "diff")
        broadcastable = list(x.broadcastable)
        broadcastable[axis] = broadcastable[axis] and self.n == 0
        return Apply(self, [x], [TensorType(x.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.array(np.diff(inputs[0], n=self.n, axis=self.axis))

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = list(input_shapes[0])
        axis = self.axis % len(shape)
        shape[axis] = _math.maximum(_math.sub(shape[axis], self.n), 0) if self.n else shape[axis]
        return [tuple(shape)]


def diff(x: Any, n: int = 1, axis: int = -1) -> Variable:
    """The ``n``-th order discrete difference along ``axis`` (``numpy.diff``)."""
    return DiffOp(n, axis)(x)


# ------------------------------------------------------------------- counting
class NegativeCountError(ValueError, AssertionError):
    """``bincount(..., assert_nonneg=True)`` met a negative value (Theano's Assert raised
    AssertionError)."""


class BinCount(HostOp):
    """``numpy.bincount(x, weights, minlength)``: ``x`` a non-negative integer vector.

    The result has ``x``'s dtype without weights, the weights' dtype with them.
    """

    __props__ = ("assert_nonneg",)

    def __init__(self, assert_nonneg: bool = False):
        self.assert_nonneg = bool(assert_nonneg)

    def make_node(self, x: Any, minlength: Any, weights: Any = None) -> Apply:
        x = as_tensor_variable(x)
        if x.ndim != 1 or x.dtype not in INTEGER:
            raise TypeError(f"bincount: x must be an integer vector, got {x.describe()} ({x.type})")
        minlength = as_int_scalar(minlength, "bincount minlength")
        inputs = [x, minlength]
        dtype = x.dtype
        if weights is not None:
            weights = as_tensor_variable(weights)
            if weights.ndim != 1:
                raise TypeError(f"bincount: weights must be a vector like x, got {weights.describe()}")
            inputs.append(weights)
            dtype = weights.dtype
        return Apply(self, inputs, [TensorType(dtype, (False,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, minlength = inputs[0], int(inputs[1])
        weights = inputs[2] if len(inputs) > 2 else None
        if x.size and x.min() < 0:
            error = NegativeCountError if self.assert_nonneg else ValueError
            raise error(f"bincount of {node.inputs[0].describe()}: its values must be >= 0, "
                        f"got {int(x.min())}")
        if weights is not None and weights.shape != x.shape:
            raise ValueError(f"bincount: weights have shape {weights.shape} but x has {x.shape}")
        counts = np.bincount(x, weights, minlength=max(minlength, 0))
        output_storage[0][0] = counts.astype(node.outputs[0].dtype, copy=False)


def bincount(x: Any, weights: Any = None, minlength: Any = None, assert_nonneg: bool = False) -> Variable:
    """How often each value occurs in the non-negative integer vector ``x`` (``numpy.bincount``),
    each occurrence counting ``weights[i]`` when weights are given; at least ``minlength`` bins.

    Negative values always raise: ValueError, or with ``assert_nonneg=True`` (Theano's
    check) an error that is also an AssertionError, as Theano's was.
    """
    return BinCount(assert_nonneg)(x, 0 if minlength is None else minlength, weights)


class SearchsortedOp(HostOp):
    """``numpy.searchsorted(x, v, side, sorter)``: int64 insertion points of ``v`` into ``x``."""

    __props__ = ("side",)

    def __init__(self, side: str = "left"):
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        self.side = side

    def make_node(self, x: Any, v: Any, sorter: Any = None) -> Apply:
        x, v = as_tensor_variable(x), as_tensor_variable(v)
        if x.ndim != 1:
            raise RankError(f"searchsorted: x must be a sorted vector, got {x.describe()} ({x.type})")
        inputs = [x, v]
        if sorter is not None:
            sorter = as_tensor_variable(sorter)
            if sorter.ndim != 1:
                raise RankError(f"searchsorted: sorter must be an integer vector, got "
                                f"{sorter.describe()} ({sorter.type})")
            if sorter.dtype not in INTEGER:
                raise TypeError(f"searchsorted: sorter must be an integer vector, got {sorter.describe()}")
            inputs.append(sorter)
        return Apply(self, inputs, [TensorType("int64", v.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        sorter = inputs[2] if len(inputs) > 2 else None
        output_storage[0][0] = np.asarray(np.searchsorted(inputs[0], inputs[1], side=self.side,
                                                          sorter=sorter), dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[1]]


def searchsorted(x: Any, v: Any, side: str = "left", sorter: Any = None) -> Variable:
    """Where ``v``'s values would be inserted into the sorted vector ``x`` to keep it sorted."""
    return SearchsortedOp(side)(x, v, sorter)


# ------------------------------------------------------------------ diagonals
class FillDiagonal(HostOp):
    """A copy of ``a`` whose main diagonal ``a[i, i, ...]`` is the scalar ``val``.

    A matrix may be rectangular (the diagonal has ``min(rows, cols)`` entries, as
    in Theano); more dimensions must all have the same length (``numpy.fill_diagonal``).
    """

    def make_node(self, a: Any, val: Any) -> Apply:
        a, val = as_tensor_variable(a), as_tensor_variable(val)
        if a.ndim < 2:
            raise TypeError(f"fill_diagonal: a must have at least 2 dimensions, got {a.describe()}")
        return Apply(self, [a, _scalar_of(val, a, "fill_diagonal")], [a.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, val = inputs[0].copy(), inputs[1]
        if a.ndim == 2:
            k = np.arange(min(a.shape))
            a[k, k] = val
        elif len(set(a.shape)) > 1:
            raise ValueError(f"fill_diagonal of {node.inputs[0].describe()}: all dimensions of a "
                             f"{a.ndim}-d array must have the same length, got {a.shape}")
        else:
            np.fill_diagonal(a, val)
        output_storage[0][0] = a

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def fill_diagonal(a: Any, val: Any) -> Variable:
    """``a`` with its main diagonal set to the scalar ``val`` (a new array)."""
    return FillDiagonal()(a, val)


class FillDiagonalOffset(HostOp):
    """A copy of the matrix ``a`` whose diagonal ``offset`` (an int scalar) is ``val``."""

    def make_node(self, a: Any, val: Any, offset: Any) -> Apply:
        a, val = as_tensor_variable(a), as_tensor_variable(val)
        if a.ndim != 2:
            raise TypeError(f"fill_diagonal_offset: a must be a matrix, got {a.describe()}")
        offset = as_int_scalar(offset, "fill_diagonal_offset offset")
        return Apply(self, [a, _scalar_of(val, a, "fill_diagonal_offset"), offset], [a.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, val, offset = inputs[0].copy(), inputs[1], int(inputs[2])
        rows, cols = diagonal_positions(a.shape, offset)
        a[rows, cols] = val
        output_storage[0][0] = a

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def diagonal_positions(shape: tuple, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """The (row, column) indices of diagonal ``offset`` of a matrix of ``shape``."""
    height, width = shape
    start_row, start_col = max(-offset, 0), max(offset, 0)
    n = max(min(height - start_row, width - start_col), 0)
    k = np.arange(n)
    return k + start_row, k + start_col


def fill_diagonal_offset(a: Any, val: Any, offset: Any) -> Variable:
    """The matrix ``a`` with diagonal ``offset`` (above the main one when positive) set to ``val``."""
    return FillDiagonalOffset()(a, val, offset)


def _scalar_of(val: Variable, a: Variable, what: str) -> Variable:
    if val.ndim != 0:
        raise TypeError(f"{what}: val must be a scalar, got {val.describe()} ({val.type})")
    if val.dtype != a.dtype:
        if np.result_type(a.dtype, val.dtype) != np.dtype(a.dtype):
            raise TypeError(f"{what}: val {val.describe()} is {val.dtype}, which {a.describe()} "
                            f"({a.dtype}) cannot hold: cast one of them")
        val = _math.cast(val, a.dtype)
    return val


# ------------------------------------------------------------------- encoding
def to_one_hot(y: Any, nb_class: Any, dtype: str | None = None) -> Variable:
    """A matrix whose row ``i`` is the one-hot code of ``y[i]`` (an int vector of values in
    ``[0, nb_class)``), of ``dtype`` (default floatX)."""
    y = as_tensor_variable(y)
    if y.ndim != 1 or y.dtype not in INTEGER:
        raise TypeError(f"to_one_hot: y must be an integer vector, got {y.describe()} ({y.type})")
    n = shape_i(y, 0)
    codes = zeros((n, nb_class), dtype=dtype or config.floatX)
    return set_subtensor(codes[arange(n), y], 1)


class UnravelIndex(HostOp):
    """``numpy.unravel_index(indices, dims, order)``: ``ndim`` int64 arrays of indices' shape."""

    __props__ = ("ndim", "order")

    def __init__(self, ndim: int, order: str = "C"):
        if order not in ("C", "F"):
            raise ValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
        if not isinstance(ndim, (int, np.integer)) or ndim < 1:
            raise ValueError(f"unravel_index: ndim must be an int >= 1, got {ndim!r}")
        self.ndim, self.order = int(ndim), order

    def make_node(self, indices: Any, dims: Any) -> Apply:
        indices, dims = _index_array(indices, "indices"), _index_array(dims, "dims")
        if dims.ndim != 1:
            raise TypeError(f"unravel_index: dims must be a vector of lengths, got {dims.describe()}")
        return Apply(self, [indices, dims],
                     [TensorType("int64", indices.broadcastable)() for _ in range(self.ndim)])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        indices, dims = inputs
        if len(dims) != self.ndim:
            raise ValueError(f"unravel_index: dims has {len(dims)} entries, but the op was built "
                             f"for ndim={self.ndim}")
        for cell, coord in zip(output_storage, np.unravel_index(indices, dims, order=self.order)):
            cell[0] = np.array(coord, dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]] * self.ndim


def unravel_index(indices: Any, dims: Any, order: str = "C", ndim: int | None = None) -> tuple:
    """The coordinates (a tuple of int64 arrays) that the flat ``indices`` have in an array of
    shape ``dims``; ``ndim`` (the length of ``dims``) is needed when the graph does not fix it."""
    if ndim is None:
        ndim = vector_length(as_tensor_variable(dims))
        if ndim is None:
            raise ValueError(f"unravel_index: the length of dims ({dims}) is not known before the "
                             "function runs: pass ndim=")
    result = UnravelIndex(ndim, order)(indices, dims)
    return tuple(result) if ndim > 1 else (result,)


class RavelMultiIndex(HostOp):
    """``numpy.ravel_multi_index(multi_index, dims, mode, order)``: int64 flat indices."""

    __props__ = ("mode", "order")

    def __init__(self, mode: str = "raise", order: str = "C"):
        if mode not in ("raise", "wrap", "clip") or order not in ("C", "F"):
            raise ValueError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip' and order "
                             f"'C' or 'F', got {mode!r}, {order!r}")
        self.mode, self.order = mode, order

    def make_node(self, *inputs: Any) -> Apply:
        coords = [_index_array(c, "multi_index") for c in inputs[:-1]]
        dims = _index_array(inputs[-1], "dims")
        if not coords or dims.ndim != 1:
            raise TypeError("ravel_multi_index: give one index array per dimension, and dims as a vector")
        return Apply(self, coords + [dims], [TensorType("int64", coords[0].broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        flat = np.ravel_multi_index(tuple(inputs[:-1]), tuple(inputs[-1]), mode=self.mode, order=self.order)
        output_storage[0][0] = np.asarray(flat, dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def ravel_multi_index(multi_index: Sequence[Any], dims: Any, mode: str = "raise",
                      order: str = "C") -> Variable:
    """The flat indices, into an array of shape ``dims``, of the coordinates ``multi_index``
    (one integer array per dimension)."""
    if not isinstance(multi_index, (tuple, list)):
        raise TypeError(f"ravel_multi_index: multi_index must be a tuple or list of index arrays, "
                        f"got {type(multi_index).__name__}")
    return RavelMultiIndex(mode, order)(*multi_index, dims)


def _index_array(value: Any, what: str) -> Variable:
    var = as_tensor_variable(value)
    if var.dtype not in INTEGER:
        raise TypeError(f"{what} must hold integers, got {var.describe()} ({var.type})")
    return var


# --------------------------------------------------------------- small extras
class Bartlett(HostOp):
    """``numpy.bartlett(M)``: the triangular window of ``M`` points, a float64 vector."""

    def make_node(self, M: Any) -> Apply:
        M = as_tensor_variable(M)
        if M.ndim != 0 or M.dtype not in DISCRETE:
            raise TypeError(f"bartlett: M must be an integer scalar, got {M.describe()} ({M.type})")
        return Apply(self, [M], [TensorType("float64", (False,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.bartlett(int(inputs[0])).astype("float64")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(_math.maximum(_math.cast(node.inputs[0], "int64"), 0),)]


def bartlett(M: Any) -> Variable:
    """The Bartlett (triangular) window of ``M`` points (an empty vector for ``M <= 0``)."""
    return Bartlett()(M)


class Unique(HostOp):
    """``numpy.unique`` with Theano's flags: the sorted unique values, then (each when asked)
    the first indices, the inverse indices and the counts (int64 vectors)."""

    __props__ = ("return_index", "return_inverse", "return_counts", "axis")

    def __init__(self, return_index: bool = False, return_inverse: bool = False,
                 return_counts: bool = False, axis: int | None = None):
        self.return_index, self.return_inverse = bool(return_index), bool(return_inverse)
        self.return_counts, self.axis = bool(return_counts), axis

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.axis is None:
            values = TensorType(x.dtype, (False,))()
        else:
            axis = checked_axis(x, self.axis, "Unique")
            values = TensorType(x.dtype, tuple(b and k != axis for k, b in enumerate(x.broadcastable)))()
        extra = self.return_index + self.return_inverse + self.return_counts
        return Apply(self, [x], [values] + [TensorType("int64", (False,))() for _ in range(extra)])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        result = np.unique(inputs[0], return_index=self.return_index, return_inverse=self.return_inverse,
                           return_counts=self.return_counts, axis=self.axis)
        result = result if isinstance(result, tuple) else (result,)
        for k, (cell, value, out) in enumerate(zip(output_storage, result, node.outputs)):
            cell[0] = np.asarray(value if k == 0 else np.reshape(value, -1), dtype=out.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        """The inverse indices have one entry per element (per slice along ``axis``) of the
        input; the unique values, first indices and counts are as long as the values found."""
        values = node.outputs[0]
        own = tuple(shape_i(values, d) for d in range(values.ndim))
        found = (own[0 if self.axis is None else self.axis % values.ndim],)
        if self.axis is None:
            every = (product(list(input_shapes[0])),)
        else:
            every = (input_shapes[0][self.axis % values.ndim],)
        flags = [self.return_index, self.return_inverse, self.return_counts]
        return [own] + [every if k == 1 else found for k in range(3) if flags[k]]



# ------------------------------------------------------------------ non-zeros
class NonZero(HostOp):
    """``numpy.nonzero`` as one int64 matrix: row ``k`` holds the indices along axis ``k``."""

    def make_node(self, a: Any) -> Apply:
        a = as_tensor_variable(a)
        if a.ndim == 0:
            raise ValueError(f"nonzero of the scalar {a.describe()}: give an array of 1 or more dimensions")
        return Apply(self, [a], [TensorType("int64", (a.ndim == 1, False))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.array(np.nonzero(inputs[0]), dtype="int64").reshape(inputs[0].ndim, -1)


def nonzero(a: Any, return_matrix: bool = False) -> Any:
    """The indices of ``a``'s non-zero entries: a tuple of one int64 vector per axis (as
    ``numpy.nonzero``), or with ``return_matrix`` the matrix of them, one row per axis."""
    matrix = NonZero()(a)
    if return_matrix:
        return matrix
    return tuple(matrix[k] for k in range(matrix.owner.inputs[0].ndim))


def flatnonzero(a: Any) -> Variable:
    """The indices of the non-zero entries of ``a`` flattened (``numpy.flatnonzero``)."""
    a = as_tensor_variable(a)
    return NonZero()(a.flatten())[0]


def nonzero_values(a: Any) -> Variable:
    """The non-zero entries of ``a``, flattened, in order."""
    a = as_tensor_variable(a)
    return a.flatten()[flatnonzero(a)]


def compress(condition: Any, x: Any, axis: int | None = None) -> Variable:
    """The slices of ``x`` along ``axis`` (of ``x`` flattened when None) where the vector
    ``condition`` is non-zero (``numpy.compress``; a shorter ``condition`` selects among
    the first slices only)."""
    return take(x, flatnonzero(condition), axis)


# ----------------------------------------------------------------- gathering
def take_along_axis(a: Any, index: Any, axis: int) -> Variable:
    """``numpy.take_along_axis(a, index, axis)`` for an integer ``index`` of ``a``'s shape:
    a gather from the flattened ``a``, so it is differentiable like indexing."""
    a, index = as_tensor_variable(a), as_tensor_variable(index)
    axis = checked_axis(a, axis, "take_along_axis")
    if a.ndim == 1:
        return AdvancedSubtensor1()(a, index)
    others = [d for d in range(a.ndim) if d != axis]
    n = shape_i(a, axis)
    lead = [shape_i(a, d) for d in others]
    offsets = reshape(arange(product(lead), dtype="int64") * n, lead, ndim=len(lead)).dimshuffle(
        *range(len(lead)), "x")
    flat_index = (_math.cast(index.dimshuffle(*others, axis), "int64") + offsets).flatten()
    gathered = reshape(AdvancedSubtensor1()(a.dimshuffle(*others, axis).flatten(), flat_index),
                       lead + [n], ndim=a.ndim)
    back = [0] * a.ndim
    for position, d in enumerate(others + [axis]):
        back[d] = position
    return gathered.dimshuffle(*back)


def permute_row_elements(x: Any, y: Any, inverse: bool = False) -> Variable:
    """Each row (last axis) of ``x`` reordered by the permutation in the same row of ``y``
    (``x[..., y]`` row by row); the leading axes of ``x`` and ``y`` broadcast together, so
    one vector takes each permutation of a matrix of them, and lengths of 1 stretch where
    the values have them. ``inverse`` applies the inverse permutations. Theano's
    ``permute_row_elements``."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    if y.dtype not in INTEGER or y.ndim < 1 or x.ndim < 1:
        raise TypeError(f"permute_row_elements: y must hold integer permutations of the rows of x, "
                        f"got {y.describe()} ({y.type}) for {x.describe()} ({x.type})")
    if inverse:
        y = argsort(y, -1)
    ndim = max(x.ndim, y.ndim)
    x, y = shape_padleft(x, ndim - x.ndim), shape_padleft(y, ndim - y.ndim)
    leading = [_broadcast_length([x, y], d) for d in range(ndim - 1)]
    x = alloc(x, *leading, shape_i(x, -1))
    y = alloc(y, *leading, shape_i(y, -1))
    return take_along_axis(x, y, ndim - 1)


# ----------------------------------------------------------------- choose
_CHOOSE_MODES = ("raise", "wrap", "clip")


class Choose(HostOp):
    """``numpy.choose(a, choices, mode=mode)``: at each position, the entry of the choice that
    ``a`` names there; ``a`` and the choices broadcast together. ``choices`` is a tensor
    whose first axis lists the choices. No gradient (as in Theano)."""

    __props__ = ("mode",)

    def __init__(self, mode: str = "raise"):
        if mode not in _CHOOSE_MODES:
            raise ValueError(f"choose: mode={mode!r} is not one of {_CHOOSE_MODES}")
        self.mode = mode

    def make_node(self, a: Any, choices: Any) -> Apply:
        a, choices = as_tensor_variable(a), as_tensor_variable(choices)
        if a.dtype not in INTEGER:
            raise TypeError(f"choose: a must hold integer choice numbers, got {a.describe()} ({a.type.describe()})")
        if choices.ndim < 1:
            raise TypeError(f"choose: choices {choices.describe()} must have a first axis listing the choices")
        per_choice = choices.broadcastable[1:]
        ndim = max(a.ndim, len(per_choice))
        padded = [(True,) * (ndim - len(b)) + tuple(b) for b in (a.broadcastable, per_choice)]
        return Apply(self, [a, choices], [TensorType(choices.dtype, tuple(x and y for x, y in zip(*padded)))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, choices = inputs
        try:
            output_storage[0][0] = np.asarray(np.choose(a, choices, mode=self.mode), dtype=choices.dtype)
        except ValueError as err:
            raise ValueError(f"choose({node.inputs[0].describe()}, ...): {err} (with mode='raise' every "
                             f"entry of a must be in [0, {len(choices)}); mode='wrap' or 'clip' map the "
                             "others)") from None

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        a_shape, choice_shape = list(input_shapes[0]), list(input_shapes[1])[1:]
        a_var, c_var = node.inputs
        ndim = node.outputs[0].ndim
        a_shape = [1] * (ndim - len(a_shape)) + a_shape
        a_b = (True,) * (ndim - a_var.ndim) + a_var.broadcastable
        choice_shape = [1] * (ndim - len(choice_shape)) + choice_shape
        c_b = (True,) * (ndim - c_var.ndim + 1) + c_var.broadcastable[1:]
        return [tuple(c if ab else a for a, c, ab, cb in zip(a_shape, choice_shape, a_b, c_b))]


def _broadcast_length(parts: Sequence[Variable], d: int) -> Any:
    """The length of dimension ``d`` when ``parts`` broadcast together (numpy's rule, lengths of
    1 stretch, known when the function runs): their longest, or 0 if one is empty."""
    lengths = [shape_i(p, d) for p in parts if not p.broadcastable[d]]
    if not lengths:
        return 1
    longest = _math.maximum(*lengths) if len(lengths) > 1 else lengths[0]
    empty = _math.eq(_math.minimum(*lengths), 0) if len(lengths) > 1 else _math.eq(longest, 0)
    return _math.switch(empty, 0, longest)


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Variable:
    """``numpy.choose``: ``choices`` a tensor (choices on its first axis) or a list of tensors
    of broadcastable shapes; ``out`` is not supported (pass None)."""
    if out is not None:
        raise TypeError("choose: out= is not supported: a graph computes a new result")
    if isinstance(choices, (list, tuple)):
        from arignote.tensor.join import stack
        parts = [as_tensor_variable(c) for c in choices]
        ndim = max(p.ndim for p in parts)
        parts = [shape_padleft(p, ndim - p.ndim) for p in parts]
        choices = stack([alloc(p, *[_broadcast_length(parts, d) for d in range(ndim)]) for p in parts])
    return Choose(mode)(a, choices)
