"""One graph builder per distribution, as Theano's ``raw_random`` had them.

Each takes a random state variable first and returns Theano's pair
``[new_state, sample]``; ``RandomStreams`` supplies the state and wires the
update. Argument names, defaults and dtypes are
Theano's: float draws default to the upcast of floatX and the arguments,
integer draws to int64.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.config import config
from arignote.graph.basic import Variable
from arignote.scalar.dtypes import upcast
from arignote.tensor.random.op import RandomFunction, infer_ndim_bcast
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["uniform", "normal", "binomial", "poisson", "random_integers", "choice",
           "permutation", "multinomial"]


def _draw(fn: str, rng: Variable, size: Variable, args: list, dtype: str,
          bcast: tuple, ndim_added: int = 0) -> list[Variable]:
    op = RandomFunction(fn, TensorType(dtype, bcast), ndim_added=ndim_added)
    return list(op.build(rng, size, *args).outputs)


def uniform(rng: Variable, size: Any = None, low: Any = 0.0, high: Any = 1.0,
            ndim: int | None = None, dtype: str | None = None) -> list[Variable]:
    """Floats in ``[low, high)``; numpy's ``uniform(low, high, size)``."""
    low, high = as_tensor_variable(low), as_tensor_variable(high)
    dtype = dtype or upcast(config.floatX, low.dtype, high.dtype)
    ndim, size, bcast = infer_ndim_bcast(ndim, size, low, high)
    return _draw("uniform", rng, size, [low, high], dtype, bcast)


def normal(rng: Variable, size: Any = None, avg: Any = 0.0, std: Any = 1.0,
           ndim: int | None = None, dtype: str | None = None) -> list[Variable]:
    """Gaussian floats; numpy's ``normal(avg, std, size)``."""
    avg, std = as_tensor_variable(avg), as_tensor_variable(std)
    dtype = dtype or upcast(config.floatX, avg.dtype, std.dtype)
    ndim, size, bcast = infer_ndim_bcast(ndim, size, avg, std)
    return _draw("normal", rng, size, [avg, std], dtype, bcast)


def binomial(rng: Variable, size: Any = None, n: Any = 1, p: Any = 0.5,
             ndim: int | None = None, dtype: str = "int64") -> list[Variable]:
    """Successes in ``n`` trials of probability ``p``; numpy's ``binomial(n, p, size)``."""
    n, p = as_tensor_variable(n), as_tensor_variable(p)
    ndim, size, _ = infer_ndim_bcast(ndim, size, n, p)
    return _draw("binomial", rng, size, [n, p], dtype, (False,) * ndim)


def poisson(rng: Variable, size: Any = None, lam: Any = 1.0, ndim: int | None = None,
            dtype: str = "int64") -> list[Variable]:
    """Poisson counts of mean ``lam``; the size (or ndim) must be given, as in Theano."""
    lam = as_tensor_variable(lam)
    ndim, size, bcast = infer_ndim_bcast(ndim, size)
    return _draw("poisson", rng, size, [lam], dtype, bcast)


def random_integers(rng: Variable, size: Any = None, low: Any = 0, high: Any = 1,
                    ndim: int | None = None, dtype: str = "int64") -> list[Variable]:
    """Integers in ``[low, high]``, both included."""
    low, high = as_tensor_variable(low), as_tensor_variable(high)
    ndim, size, bcast = infer_ndim_bcast(ndim, size, low, high)
    return _draw("random_integers", rng, size, [low, high], dtype, bcast)


def choice(rng: Variable, size: Any = None, a: Any = 2, replace: Any = True, p: Any = None,
           ndim: int | None = None, dtype: str = "int64") -> list[Variable]:
    """numpy's ``choice(a, size, replace, p)``: from ``range(a)`` or the entries of vector ``a``."""
    a = as_tensor_variable(a)
    replace = (constant(np.int8(replace)) if isinstance(replace, (bool, np.bool_))
               else as_tensor_variable(replace))
    if not isinstance(p, (Variable, np.ndarray)) and not p:  # Theano's ``p or []``: 0, None, []
        p = None
    p = as_tensor_variable(np.zeros(0, config.floatX) if p is None else p)
    ndim, size, bcast = infer_ndim_bcast(ndim, size)
    return _draw("choice", rng, size, [a, replace, p], dtype, bcast)


def permutation(rng: Variable, size: Any = None, n: Any = 1, ndim: int | None = None,
                dtype: str = "int64") -> list[Variable]:
    """Permutations of ``range(n)``, one per element of ``size``, on a last axis of length n."""
    if size is None or size == ():
        if ndim not in (None, 1):
            raise TypeError(f"permutation: one permutation (size={size}) has 1 dimension, "
                            f"not ndim={ndim}")
        size, bcast = constant(np.zeros(0, "int64")), ()
    else:
        ndim, size, bcast = infer_ndim_bcast(ndim, size)
    return _draw("permutation", rng, size, [as_tensor_variable(n)], dtype, bcast + (False,), 1)


def multinomial(rng: Variable, size: Any = None, n: Any = 1, pvals: Any = (0.5, 0.5),
                ndim: int | None = None, dtype: str = "int64") -> list[Variable]:
    """Counts of ``n`` draws among ``pvals.shape[-1]`` outcomes; one row of pvals per draw."""
    n = as_tensor_variable(n)
    pvals = as_tensor_variable(list(pvals) if isinstance(pvals, tuple) else pvals)
    if pvals.ndim < 1:
        raise ValueError(f"multinomial: pvals must have at least 1 dimension, got {pvals.describe()}")
    rows = pvals[(slice(None),) * (pvals.ndim - 1) + (0,)]
    ndim, size, bcast = infer_ndim_bcast(ndim, size, n, rows)
    return _draw("multinomial", rng, size, [n, pvals], dtype,
                 bcast + (pvals.broadcastable[-1],), 1)
