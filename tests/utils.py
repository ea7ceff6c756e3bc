"""Helpers for comparing compiled graphs with their numpy twins."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arignote import function


def run(inputs: Sequence[Any], output: Any, *values: Any, **kwargs: Any) -> Any:
    """Compile ``output`` from ``inputs`` and call it once on ``values``."""
    return function(list(inputs), output, on_unused_input="ignore", **kwargs)(*values)


def assert_matches(actual: np.ndarray, expected: np.ndarray, rtol: float | None = None) -> None:
    """Same dtype, same shape, values equal (floats: close, NaNs in the same places)."""
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray), f"expected an ndarray, got {type(actual).__name__}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    if actual.dtype.kind in "fc":
        tol = rtol if rtol is not None else (1e-3 if actual.dtype.itemsize <= 4 else 1e-10)
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)
