"""The numpy side of each draw: which ``RandomState`` method is called, and how.

These functions are the reference for bit-exactness with Theano 1.0's
``shared_randomstreams``: each takes the generator, the distribution's
arguments as arrays of the dtypes the graph gave them, and ``size`` (a tuple,
or None to let the arguments' shapes decide), and returns what numpy draws.
The plain distributions call the method of the same name with the arguments
in numpy's order; the others loop one draw (one row, one permutation) at a
time in C order, as Theano did, because that order fixes which numbers each
element receives.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

Sampler = Callable[..., np.ndarray]


def method(name: str) -> Sampler:
    """The sampler calling ``RandomState.<name>(*args, size)``."""
    def sample(rng: np.random.RandomState, *args_and_size: np.ndarray) -> np.ndarray:
        *args, size = args_and_size
        return getattr(rng, name)(*args, size)
    sample.__name__ = name
    return sample


def _broadcast_to_size(arrays: list[np.ndarray], size: tuple | None, extra: list[int]
                       ) -> tuple[list[np.ndarray], tuple]:
    """Left-pad each array to the output's rank (plus ``extra[k]`` trailing dims of its own)
    and work out the output shape when ``size`` is None."""
    ndim = len(size) if size is not None else max(a.ndim - e for a, e in zip(arrays, extra))
    padded = []
    for a, e in zip(arrays, extra):
        if a.ndim - e > ndim:
            raise ValueError(f"an argument has {a.ndim - e} dimensions but the draw has only {ndim} "
                             f"(size={size}): give a size with at least {a.ndim - e} entries")
        padded.append(a.reshape((1,) * (ndim + e - a.ndim) + a.shape))
    if size is None:
        size = tuple(max(a.shape[d] for a in padded) for d in range(ndim))
    for a in padded:
        for d in range(ndim):
            if a.shape[d] not in (1, size[d]):
                raise ValueError(f"an argument of shape {a.shape} does not broadcast to the draw's "
                                 f"size {size}")
    return padded, tuple(int(s) for s in size)


def _source_index(index: tuple, shape: tuple) -> tuple:
    return tuple(0 if n == 1 else i for i, n in zip(index, shape))


def random_integers(rng: np.random.RandomState, low: np.ndarray, high: np.ndarray,
                    size: tuple | None) -> np.ndarray:
    """Integers in ``[low, high]`` (both included), one numpy call per element."""
    (low, high), size = _broadcast_to_size([np.asarray(low), np.asarray(high)], size, [0, 0])
    out = np.empty(size, dtype="int64")
    for index in np.ndindex(*size):
        lo = int(low[_source_index(index, low.shape)])
        hi = int(high[_source_index(index, high.shape)])
        out[index] = rng.randint(lo, hi + 1, dtype="int64")  # what random_integers does
    return out


def choice(rng: np.random.RandomState, a: np.ndarray, replace: np.ndarray, p: np.ndarray,
           size: tuple | None) -> np.ndarray:
    """numpy's ``choice``; an empty ``p`` stands for None (equal probabilities)."""
    if a.ndim > 1:
        raise ValueError(f"choice: a must be a scalar or a vector, got {a.ndim} dimensions")
    if p.ndim != 1:
        raise ValueError(f"choice: p must be a vector, got {p.ndim} dimensions")
    return rng.choice(a, size, bool(replace), p if p.size else None)


def permutation(rng: np.random.RandomState, n: np.ndarray, size: tuple | None) -> np.ndarray:
    """One permutation of ``range(n)`` per element of ``size``, stacked on a last axis."""
    if n.shape != ():
        raise ValueError(f"permutation: n must be a scalar, got shape {n.shape}")
    n = int(n)
    size = () if size is None else size
    out = np.empty(tuple(size) + (n,), dtype="int64")
    for index in np.ndindex(*size):
        out[index] = rng.permutation(n)
    return out


def multinomial(rng: np.random.RandomState, n: np.ndarray, pvals: np.ndarray,
                size: tuple | None) -> np.ndarray:
    """One multinomial draw per element of ``size``, with its row of ``pvals``.

    numpy refuses probabilities summing above 1, which float rounding produces;
    as in Theano, a row summing to within 1e-5 above 1, or whose last entry is
    below 5e-5, is scaled by ``1 - 5e-5`` first.
    """
    (n, pvals), size = _broadcast_to_size([np.asarray(n), np.asarray(pvals)], size, [0, 1])
    if pvals.size and pvals.min() < 0:
        raise ValueError("multinomial: pvals has negative entries")
    out = np.empty(size + (pvals.shape[-1],), dtype="int64")
    for index in np.ndindex(*size):
        row = pvals[_source_index(index, pvals.shape[:-1])]
        total = np.sum(row)
        if 1.0 < total < 1.0 + 1e-5 or row[-1] < 5e-5:
            row = row * (1.0 - 5e-5)
            total = np.sum(row)
        if total > 1.0:
            raise ValueError(f"multinomial: a row of pvals sums to {total}, more than 1")
        out[index] = rng.multinomial(n[_source_index(index, n.shape)], row.astype("float64"))
    return out


SAMPLERS: dict[str, Sampler] = {
    "uniform": method("uniform"),
    "normal": method("normal"),
    "binomial": method("binomial"),
    "poisson": method("poisson"),
    "random_integers": random_integers,
    "choice": choice,
    "permutation": permutation,
    "multinomial": multinomial,
}
