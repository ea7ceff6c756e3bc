"""``theano.tensor.blas``: the BLAS ops under Theano's names, and the graph helpers of its gemm
rewrite that Theano code calls (reading a sum as scaled terms, finding a scalar under
DimShuffles).

The ops are arignote's (``arignote.tensor.gemm``); arignote's rewrites build Gemm and Gemv
(``arignote.tensor.rewrites.specialize``) and the late forms (``arignote.tensor.rewrites.blas``),
offered here under Theano's names as local optimizers (``local_gemm_to_ger.transform(node)``);
Theano's rewriter classes (``GemmOptimizer``) are not here.
"""
from __future__ import annotations

import numbers
import shlex
from typing import Any

from arignote.compat.theano.opt import RewriteAsLocalOptimizer
from arignote.config import config
from arignote.graph.basic import Apply, Op, Variable
from arignote.graph.errors import InconsistencyError
from arignote.scalar.dtypes import upcast
from arignote.tensor import math as _math
from arignote.tensor.blas import *  # noqa: F403  (Theano's module held the dot family too)
from arignote.tensor.blas import BatchedTensordot
from arignote.tensor.blas import __all__ as _dot_names
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.gemm import (Dot22, Dot22Scalar, Gemm, Gemv, Ger, gemm_inplace, gemm_no_inplace,
                                  gemv_inplace, gemv_no_inplace, ger, ger_destructive)
from arignote.tensor.gemm import dot22 as _dot22
from arignote.tensor.gemm import dot22scalar as _dot22scalar
from arignote.tensor.rewrites import blas as _late
from arignote.tensor.type import integer_dtypes
from arignote.tensor.variable import as_tensor_variable

__all__ = [*_dot_names, "BatchedDot", "Dot22", "Dot22Scalar", "Gemm", "Gemv", "Ger", "InconsistencyError",
           "gemm", "gemm_inplace", "gemm_no_inplace", "gemv", "gemv_inplace", "gemv_no_inplace", "ger",
           "ger_destructive", "_dot22", "_dot22scalar", "ldflags", "res_is_a", "_as_scalar",
           "_is_real_matrix", "_is_real_vector", "_gemm_canonicalize", "_factor_canonicalized",
           "local_dot_to_dot22", "local_dot22_to_ger_or_gemv", "local_dot22_to_dot22scalar",
           "local_gemm_to_ger"]

gemm = gemm_no_inplace
gemv = gemv_no_inplace

_REAL = ("float16", "float32", "float64")
_FLOAT_OR_COMPLEX = (*_REAL, "complex64", "complex128")
# ldflags(): the argument that keeps each kind of token, and the prefix it strips.
_LDFLAG_KINDS = {"-l": "libs", "-L": "libs_dir", "-I": "include_dir"}


# Theano's names of its BLAS rewrites, as local optimizers made of ours.
local_dot_to_dot22 = RewriteAsLocalOptimizer("local_dot_to_dot22", _late.local_dot_to_dot22)
local_dot22_to_ger_or_gemv = RewriteAsLocalOptimizer("local_dot22_to_ger_or_gemv", _late.local_dot22_to_ger_or_gemv)
local_dot22_to_dot22scalar = RewriteAsLocalOptimizer("local_dot22_to_dot22scalar", _late.local_dot22_to_dot22scalar)
local_gemm_to_ger = RewriteAsLocalOptimizer("local_gemm_to_ger", _late.local_gemm_to_ger)


class BatchedDot(Op):
    """Theano's op of ``batched_dot`` on 2-d or 3-d inputs, ``out[i] = dot(x[i], y[i])``:
    ``BatchedDot()(x, y)`` builds arignote's batched product (a BatchedTensordot node)."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        for k, var in enumerate((x, y)):
            if var.ndim not in (2, 3):
                raise TypeError(f"BatchedDot: input {k} ({var.describe()}) must be 2-d or 3-d, got "
                                f"{var.ndim}-d: call tensor.batched_dot for other ranks")
        return BatchedTensordot(((x.ndim - 1,), (1,)))(x, y).owner


def ldflags(libs: bool = True, flags: bool = False, libs_dir: bool = False,
            include_dir: bool = False) -> list[str]:
    """The tokens of ``config.blas.ldflags`` of the kinds asked for: library names (``-lX`` ->
    ``X``), library and include folders (``-L``, ``-I``, prefix stripped), other flags as they are.
    arignote links no BLAS through them (numpy's BLAS does the work); Theano code reads them."""
    wanted = {"libs": libs, "flags": flags, "libs_dir": libs_dir, "include_dir": include_dir}
    out = []
    for token in shlex.split(str(config.blas.ldflags)):
        kind = _LDFLAG_KINDS.get(token[:2], "flags")
        if wanted[kind]:
            out.append(token if kind == "flags" else token[2:])
    return out


def res_is_a(var: Variable, op: Op, maxclients: int | None = None) -> bool:
    """Whether ``op`` computes ``var`` (and, given ``maxclients``, ``var`` has at most that many
    clients in its graph)."""
    few_clients = maxclients is None or len(getattr(var, "clients", ())) <= maxclients
    return bool(var.owner is not None and var.owner.op == op and few_clients)


def _as_scalar(res: Variable, dtype: str | None = None) -> Variable | None:
    """The 0-d variable under ``res``'s DimShuffles when ``res`` broadcasts on every axis, else
    None; an integer one cast to ``dtype`` (default floatX) when that cast loses nothing."""
    if not all(res.type.broadcastable):
        return None
    while res.owner is not None and isinstance(res.owner.op, DimShuffle):
        res = res.owner.inputs[0]
    scalar = res.dimshuffle() if res.type.broadcastable else res
    if scalar.type.dtype in integer_dtypes:
        dtype = dtype or config.floatX
        return _math.cast(scalar, dtype) if upcast(scalar.dtype, dtype) == dtype else None
    return scalar


def _is_real_matrix(res: Variable) -> bool:
    """Whether ``res`` is a real float matrix broadcasting on neither axis."""
    return res.type.dtype in _REAL and res.type.ndim == 2 and not any(res.type.broadcastable)


def _is_real_vector(res: Variable) -> bool:
    """Whether ``res`` is a real float vector that does not broadcast."""
    return res.type.dtype in _REAL and res.type.ndim == 1 and not res.type.broadcastable[0]


def _scaled(scale: Any, var: Variable) -> Any:
    if isinstance(scale, numbers.Number) and scale == 1:
        return var
    if isinstance(scale, numbers.Number) and scale == -1 and var.type.dtype != "bool":
        return -var
    return scale * var


def _scalar_under_dimshuffles(var: Variable) -> Variable:
    while var.owner is not None and isinstance(var.owner.op, DimShuffle):
        var = var.owner.inputs[0]
    return var.dimshuffle() if var.type.broadcastable else var


def _gemm_canonicalize(r: Variable, scale: Any, rval: list, maxclients: int) -> list:
    """Append to ``rval`` the terms of ``r`` read as a sum of ``(scale, vector or matrix)``
    pairs (through add, sub, neg and products with scalars), ``scale`` multiplying them all;
    a term of another rank or dtype is appended as the variable ``scale * r``. Returns ``rval``."""
    if r.type.ndim not in (1, 2) or r.type.dtype not in _FLOAT_OR_COMPLEX:
        rval.append(_scaled(scale, r))
        return rval
    node = r.owner
    name = getattr(getattr(node, "op", None), "scalar_op", None)
    name = getattr(name, "name", None)
    crowded = maxclients and len(getattr(r, "clients", ())) > maxclients
    if crowded or name not in ("add", "sub", "neg", "mul"):
        rval.append((scale, r))
    elif name == "sub":
        _gemm_canonicalize(node.inputs[0], scale, rval, 1)
        _gemm_canonicalize(node.inputs[1], -scale, rval, 1)
    elif name == "add":
        for term in node.inputs:
            _gemm_canonicalize(term, scale, rval, 1)
    elif name == "neg":
        _gemm_canonicalize(node.inputs[0], -scale, rval, 1)
    else:
        _canonicalize_product(r, scale, rval)
    return rval


def _canonicalize_product(r: Variable, scale: Any, rval: list) -> None:
    """A product of scalars with one vector or one matrix: that factor, its scale the scalars'."""
    scalars, arrays = [], []
    for factor in r.owner.inputs:
        if all(factor.type.broadcastable):
            scalars.append(_scalar_under_dimshuffles(factor))
        elif _is_real_vector(factor) or _is_real_matrix(factor):
            arrays.append(factor)
        else:
            rval.append((scale, r))
            return
    if len(arrays) != 1:
        rval.append((scale, r))
        return
    if scalars:
        first = _scaled(scale, scalars[0])
        scale = _math.mul(first, *scalars[1:]) if scalars[1:] else first
    _gemm_canonicalize(arrays[0], scale, rval, 1)


def _factor_canonicalized(lst: list) -> list:
    """``lst`` (from _gemm_canonicalize) with the pairs of one variable merged into one, their
    scales added, at the first one's place; other items kept."""
    out: list = []
    seen: dict[int, int] = {}
    for item in lst:
        if not (isinstance(item, tuple) and len(item) == 2):
            out.append(item)
            continue
        scale, var = item
        if id(var) in seen:
            k = seen[id(var)]
            out[k] = (out[k][0] + scale, var)
        else:
            seen[id(var)] = len(out)
            out.append((scale, var))
    return out

