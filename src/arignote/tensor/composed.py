"""numpy-style functions of Theano's ``tensor`` module that other ops compose: no Op of
their own, so their gradients, rewrites and kernels are those of the ops they are made of.

``tile`` broadcasts ``x`` with a new axis before each of its own and reshapes (one
allocation, no copies per repetition); ``take`` is advanced indexing on one axis;
``isclose`` follows numpy's rule (infinities equal when of one sign, NaN equal only
with ``equal_nan``). ``smallest``/``largest``, ``ceil_intdiv``, ``swapaxes``,
``horizontal_stack``/``vertical_stack`` and ``inverse_permutation`` are Theano's
``tensor.basic`` helpers.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence


import numpy as np

from arignote.graph.basic import Variable
from arignote.tensor.checks import assert_op
from arignote.tensor.alloc import alloc, arange
from arignote.tensor.join import concatenate, stack
from arignote.tensor.math import (abs_, and_, cast, clip, eq, ge, gt, int_div, isinf, isnan, le, lt, mod, neq,
                                  or_, round as round_, switch)
from arignote.tensor.reduction import all as all_, max as max_, min as min_
from arignote.tensor.shape import checked_axis, flatten, reshape, shape_padleft
from arignote.scalar.dtypes import upcast
from arignote.tensor import shape as _shape
from arignote.tensor.blas import dot
from arignote.tensor.type import complex_dtypes, discrete_dtypes
from arignote.tensor.variable import as_tensor_variable

__all__ = ["tile", "take", "ptp", "divmod", "cov", "is_flat", "isclose", "allclose", "iround", "stacklists", "mgrid", "ogrid",
           "smallest", "largest", "ceil_intdiv", "swapaxes", "horizontal_stack", "vertical_stack",
           "inverse_permutation"]


def tile(x: Any, reps: Any, ndim: int | None = None) -> Variable:
    """``x`` repeated ``reps[d]`` times along each axis ``d`` (numpy.tile): ``reps`` longer
    than ``x.ndim`` adds leading axes, shorter repeats the last axes. ``reps`` is an int,
    an int scalar, a list of ints and int scalars, or an int vector (then ``ndim``, the
    result's rank, is required; a vector longer than ``ndim`` fails when run).
    ``ndim`` defaults to ``max(x.ndim, len(reps))``."""
    x = as_tensor_variable(x)
    if ndim is not None and ndim < x.ndim:
        raise ValueError(f"tile of {x.describe()}: ndim={ndim} is less than its rank {x.ndim}")
    if not isinstance(reps, (list, tuple)):
        given = as_tensor_variable(reps)
        if given.dtype not in discrete_dtypes or given.ndim > 1:
            raise ValueError(f"tile of {x.describe()}: reps must be an int, an int scalar, a "
                             f"list of those or an int vector, got {given.describe()} "
                             f"({given.type.describe()})")
        if given.ndim == 0:
            reps = [given]
        elif ndim is None:
            raise ValueError(f"tile of {x.describe()}: reps {given.describe()} is a vector, so "
                             "its length is not known: give the result's rank, tile(x, reps, ndim)")
        else:
            missing = ndim - given.shape[0]
            missing = assert_op(missing, ge(missing, 0))
            padded = concatenate([alloc(cast(1, given.dtype), missing), given])
            reps = [padded[d] for d in range(ndim)]
    elif not all(isinstance(r, (int, np.integer)) or (isinstance(r, Variable) and r.ndim == 0
                                                      and r.dtype in discrete_dtypes) for r in reps):
        raise ValueError(f"tile of {x.describe()}: the entries of reps {list(reps)!r} must be ints "
                         "or int scalars")
    reps = list(reps)
    rank = max(x.ndim, len(reps)) if ndim is None else int(ndim)
    if rank < len(reps):
        raise ValueError(f"tile of {x.describe()}: len(reps) ({len(reps)}) is more than ndim={ndim}")
    reps = [1] * (rank - len(reps)) + reps
    x = shape_padleft(x, rank - x.ndim) if rank > x.ndim else x
    sizes = [x.shape[d] for d in range(rank)]
    pattern = [p for d in range(rank) for p in ("x", d)]
    spread = alloc(x.dimshuffle(pattern), *[v for d in range(rank) for v in (reps[d], sizes[d])])
    return reshape(spread, [reps[d] * sizes[d] for d in range(rank)], ndim=rank)


_TAKE_MODES = ("raise", "wrap", "clip")


def take(a: Any, indices: Any, axis: int | None = None, mode: str = "raise") -> Variable:
    """``a``'s elements at ``indices`` along ``axis`` (numpy.take; ``axis=None``: of the
    flattened ``a``). ``mode``: 'raise' (an index out of range is an IndexError), 'wrap'
    (taken modulo the length) or 'clip' (to the first or last)."""
    a, indices = as_tensor_variable(a), as_tensor_variable(indices)
    if mode not in _TAKE_MODES:
        raise ValueError(f"take: mode={mode!r} is not one of {_TAKE_MODES}")
    if axis is None:
        a, axis = flatten(a), 0
    axis = checked_axis(a, axis, "take")
    length = a.shape[axis]
    if mode == "wrap":
        indices = mod(indices, length)
    elif mode == "clip":
        indices = clip(indices, 0, length - 1)
    return a[(slice(None),) * axis + (indices,)]


def ptp(a: Any, axis: Any = None) -> Variable:
    """The range, maximum minus minimum, over ``axis`` (numpy.ptp)."""
    return max_(a, axis) - min_(a, axis)


def divmod(x: Any, y: Any) -> tuple[Variable, Variable]:
    """Python's divmod, elementwise: ``(x // y, x % y)``, the floored quotient and the
    remainder with the sign of ``y``."""
    return int_div(x, y), mod(x, y)


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None) -> Variable:
    """The covariance matrix of the variables in ``m`` (numpy.cov): each row a variable
    (each column with ``rowvar=False``), ``y`` more variables of the same form; divided by
    ``N - 1`` (``N`` with ``bias``, or ``N - ddof``). One variable gives a 0-d result."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not implemented (nor were "
                                  "they in Theano); weight the observations before calling cov")
    rows = [_variables(m, rowvar, "m")] + ([] if y is None else [_variables(y, rowvar, "y")])
    m = rows[0] if len(rows) == 1 else concatenate(rows, axis=0)
    m = cast(m, upcast(m.dtype, "float64"))
    if ddof is None:
        ddof = 0 if bias else 1
    centered = m - m.mean(axis=1, keepdims=True)
    total = dot(centered, centered.T.conj() if centered.dtype in complex_dtypes else centered.T)
    return (total / cast(m.shape[1] - ddof, total.dtype)).squeeze()


def _variables(m: Any, rowvar: bool, what: str) -> Variable:
    """``m`` as a matrix with one variable per row."""
    m = as_tensor_variable(m)
    if m.ndim == 1:
        return shape_padleft(m)
    if m.ndim != 2:
        raise ValueError(f"cov: {what} ({m.describe()}) has {m.ndim} dimensions; it takes a "
                         "vector or a matrix of observations")
    return m if rowvar or m.broadcastable[0] else m.T


def is_flat(var: Any, ndim: int | None = None, outdim: int | None = None) -> bool:
    """Whether ``var`` has ``ndim`` dimensions (default 1; ``outdim`` is Theano's older
    name for it), as after ``flatten(var, ndim)``."""
    return as_tensor_variable(var).ndim == _shape.flatten_ndim(ndim, outdim, "is_flat")


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Variable:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (numpy.isclose): infinities are close
    when they are equal, NaN only to NaN and only with ``equal_nan``."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    close = le(abs_(a - b), atol + rtol * abs_(b))
    odd = or_(or_(isinf(a), isnan(a)), or_(isinf(b), isnan(b)))
    result = switch(odd, eq(a, b), close)
    if equal_nan:
        result = or_(result, and_(isnan(a), isnan(b)))
    return result


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Variable:
    """Whether ``isclose`` holds everywhere (a 0-d bool)."""
    return all_(isclose(a, b, rtol, atol, equal_nan))


def iround(a: Any, mode: str | None = None) -> Variable:
    """``round(a, mode)`` as int64."""
    return cast(round_(a, mode), "int64")


def stacklists(arg: Any) -> Variable:
    """A tensor from nested lists of scalars or tensors of one shape: ``stacklists([[a, b],
    [c, d]])`` of scalars is a 2x2 matrix."""
    if isinstance(arg, (list, tuple)):
        return stack([stacklists(item) for item in arg])
    return as_tensor_variable(arg)


def smallest(*args: Any) -> Variable:
    """The elementwise minimum of the arguments (Python's ``min`` over tensors)."""
    if len(args) == 2:
        a, b = (as_tensor_variable(v) for v in args)
        return switch(lt(a, b), a, b)
    return min_(stack(args), axis=0)


def largest(*args: Any) -> Variable:
    """The elementwise maximum of the arguments (Python's ``max`` over tensors)."""
    if len(args) == 2:
        a, b = (as_tensor_variable(v) for v in args)
        return switch(gt(a, b), a, b)
    return max_(stack(args), axis=0)


def ceil_intdiv(a: Any, b: Any) -> Variable:
    """``ceil(a / b)`` of integers, exactly: ``a // b`` plus one where it leaves a remainder."""
    quotient = int_div(a, b)
    return quotient + cast(neq(mod(a, b), 0), quotient.dtype)


def swapaxes(y: Any, axis1: int, axis2: int) -> Variable:
    """``y`` with axes ``axis1`` and ``axis2`` exchanged (a view)."""
    y = as_tensor_variable(y)
    order = list(range(y.ndim))
    i, j = checked_axis(y, axis1, "swapaxes"), checked_axis(y, axis2, "swapaxes")
    order[i], order[j] = order[j], order[i]
    return y.dimshuffle(order)


def _matrices(args: Sequence[Any], what: str) -> list[Variable]:
    tensors = [as_tensor_variable(a) for a in args]
    if not tensors or any(t.ndim != 2 for t in tensors):
        raise TypeError(f"{what} stacks matrices, got {[t.describe() for t in tensors]}: use "
                        "concatenate(tensors, axis) for other ranks")
    return tensors


def horizontal_stack(*args: Any) -> Variable:
    """The matrices side by side (joined along axis 1)."""
    return concatenate(_matrices(args, "horizontal_stack"), axis=1)


def vertical_stack(*args: Any) -> Variable:
    """The matrices one above the other (joined along axis 0)."""
    return concatenate(_matrices(args, "vertical_stack"), axis=0)


def inverse_permutation(perm: Any) -> Variable:
    """The inverse of each permutation in the last axis of ``perm`` (its argsort)."""
    from arignote.tensor.extra_ops import permute_row_elements
    perm = as_tensor_variable(perm)
    positions = alloc(arange(perm.shape[-1], dtype=perm.dtype), *[perm.shape[d] for d in range(perm.ndim)])
    return permute_row_elements(positions, perm, inverse=True)


class _Grid:
    """``mgrid[0:5, 0:3]`` / ``ogrid[...]``: numpy's index tricks on symbolic bounds, one
    integer range per slice (a complex step, numpy's point count, is not supported)."""

    def __init__(self, open_: bool):
        self.open = open_

    def __getitem__(self, key: slice | tuple) -> Variable | list[Variable]:
        slices = key if isinstance(key, tuple) else (key,)
        for s in slices:
            if not isinstance(s, slice) or isinstance(s.step, complex):
                raise TypeError(f"{'ogrid' if self.open else 'mgrid'}[...] takes slices with an integer "
                                f"(or symbolic) start, stop and step, got {s!r} (a complex step, "
                                "numpy's count of points, is not supported: give the step itself)")
        ranges = [arange(0 if s.start is None else s.start, s.stop, 1 if s.step is None else s.step)
                  for s in slices]
        if not isinstance(key, tuple):
            return ranges[0]
        n = len(ranges)
        placed = [r.dimshuffle(*["x"] * j, 0, *["x"] * (n - 1 - j)) for j, r in enumerate(ranges)]
        if self.open:
            return placed
        shape = [r.shape[0] for r in ranges]
        return [alloc(p, *shape) for p in placed]


mgrid = _Grid(open_=False)
ogrid = _Grid(open_=True)
