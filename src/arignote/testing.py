"""Tools for testing code built on arignote (Theano's ``theano.tests.unittest_tools``).

``fetch_seed`` and ``seed_rng`` make test randomness reproducible through one
flag, ``config.unittests.rseed`` (default 666; ``'random'`` for a new seed
each run), so a failing run can be replayed with
``ARIGNOTE_FLAGS=unittests.rseed=N``. ``verify_grad`` is
``arignote.verify_grad`` seeded the same way; ``assert_allclose`` compares
with tolerances chosen by dtype and reports what differs.
"""
from __future__ import annotations

import sys
import unittest
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from arignote import gradient
from arignote.config import config

__all__ = ["fetch_seed", "seed_rng", "verify_grad", "assert_allclose", "WrongValue", "SkipTest"]

SkipTest = unittest.SkipTest


def fetch_seed(pseed: int | None = None) -> int | None:
    """``pseed`` if given, else ``config.unittests.rseed``; None (a random seed) for 'random'."""
    seed = pseed or config.unittests.rseed
    return None if seed in ("random", None, 0) else int(seed)


def seed_rng(pseed: int | None = None) -> int | None:
    """Seed numpy's global generator with ``fetch_seed(pseed)``; return the seed."""
    seed = fetch_seed(pseed)
    if pseed and pseed != seed:
        print(f"Warning: using seed {seed} given by config.unittests.rseed instead of {pseed}",
              file=sys.stderr)
    np.random.seed(seed)
    return seed


def verify_grad(op: Callable[..., Any], pt: Sequence[Any], n_tests: int = 2, rng: Any = None,
                *args: Any, **kwargs: Any) -> None:
    """``arignote.verify_grad``, with numpy's global generator seeded by ``seed_rng`` when
    no ``rng`` is given. Failures raise ``verify_grad.E_grad`` (``GradientError``)."""
    if rng is None:
        seed_rng()
        rng = np.random
    gradient.verify_grad(op, pt, n_tests, rng, *args, **kwargs)


verify_grad.E_grad = gradient.GradientError


class WrongValue(AssertionError):
    """``assert_allclose`` found values that differ beyond the tolerances."""

    def __init__(self, expected: Any, value: Any, rtol: float, atol: float):
        self.val1, self.val2, self.rtol, self.atol = expected, value, rtol, atol
        expected, value = np.asarray(expected), np.asarray(value)
        lines = [f"values differ beyond rtol={rtol}, atol={atol}",
                 f"  expected: shape {expected.shape}, dtype {expected.dtype}",
                 f"  value:    shape {value.shape}, dtype {value.dtype}"]
        if _broadcast(expected, value):
            expected, value = np.broadcast_arrays(expected, value)
        else:
            lines.append("  (the shapes do not broadcast)")
        if expected.shape == value.shape and expected.size:
            with np.errstate(all="ignore"):
                diff = np.abs(value.astype(np.float64) - expected.astype(np.float64))
            worst = np.unravel_index(int(np.nanargmax(np.where(np.isnan(diff), np.inf, diff))), diff.shape)
            lines.append(f"  largest difference {diff[worst]} at {tuple(int(i) for i in worst)}: "
                         f"expected {expected[worst]}, got {value[worst]}")
        super().__init__("\n".join(lines))


def assert_allclose(expected: Any, value: Any, rtol: float | None = None, atol: float | None = None) -> None:
    """Raise ``WrongValue`` unless ``value`` is close to ``expected`` everywhere (shapes that
    broadcast are compared as numpy.allclose does, as Theano's did; NaN equals NaN).

    Default tolerances follow the less precise dtype, as Theano's did: rtol/atol
    1e-5/1e-8 (numpy's) for float64, 1e-5/1e-5 for float32, 1e-3/1e-3 for float16.
    """
    expected_a, value_a = np.asarray(expected), np.asarray(value)
    dtypes = {str(expected_a.dtype), str(value_a.dtype)}
    default_rtol, default_atol = (1e-3, 1e-3) if "float16" in dtypes else (
        (1e-5, 1e-5) if dtypes & {"float32", "complex64"} else (1e-5, 1e-8))
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if not _broadcast(expected_a, value_a) or not np.allclose(value_a, expected_a, rtol=rtol, atol=atol,
                                                              equal_nan=True):
        raise WrongValue(expected, value, rtol, atol)


def _broadcast(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return True
