"""Helpers for comparing compiled graphs with their numpy twins, shared by the op tests."""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np
import pytest

from arignote import function
from arignote import tensor as T
from arignote.graph.basic import Apply, Op
from arignote.tensor.shape import shape_i
from arignote.tensor.variable import as_tensor_variable

# numpy's floating-point warnings are expected where references meet inf, NaN and overflow on
# purpose; any other RuntimeWarning (the native build's "compiler failed", for one) fails the
# test. Use as a module's ``pytestmark`` (or part of it).
NUMPY_FP_WARNINGS_ONLY = [
    pytest.mark.filterwarnings("error::RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:(overflow|invalid value|divide by zero) encountered:RuntimeWarning"),
]

# A fixed seed makes a run reproducible; a test's values still depend on which
# tests drew from the generator before it.
_VALUES = np.random.default_rng(0)


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


def value(shape: tuple, dtype: str = "float64") -> np.ndarray:
    """Sample data of ``shape`` and ``dtype``, spread over about [-15, 15] before the cast."""
    return (_VALUES.standard_normal(shape) * 5).astype(dtype)


def var_for(array: np.ndarray, name: str = "x") -> Any:
    """A symbolic tensor that ``array`` fits, broadcastable where ``array`` has length 1."""
    return T.tensor(str(array.dtype), tuple(n == 1 for n in array.shape), name=name)


def check_infer_shape(inputs: Sequence[Any], outputs: Any, values: Sequence[Any]) -> None:
    """Each output's ``infer_shape``, compiled, gives the shape of its computed value.

    The op is asked with symbolic input shapes (``shape_i`` of each input), so
    the check covers the shape graph a rewrite would build, not only constants.
    """
    outputs = outputs if isinstance(outputs, list) else [outputs]
    for out in outputs:
        node = out.owner
        # Inputs that are not arrays (None, a random state) have no shape: (), as ShapeFeature gives.
        shapes = [tuple(shape_i(v, d) for d in range(getattr(v.type, "ndim", 0))) for v in node.inputs]
        inferred = node.op.infer_shape(None, node, shapes)[out.index]
        assert len(inferred) == out.ndim
        for entry in inferred:
            assert isinstance(entry, int) or entry.dtype == "int64", entry
        computed = run(inputs, [out] + [as_tensor_variable(s) for s in inferred], *values)
        assert tuple(int(s) for s in computed[1:]) == computed[0].shape


class AddOneInplace(Op):
    """A toy in-place op: overwrites its input with input + 1 (declares destroy_map)."""

    destroy_map = {0: [0]}

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        (x,) = inputs
        x += 1
        output_storage[0][0] = x
