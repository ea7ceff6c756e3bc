"""``tensor.xlogx``: xlogx and xlogy0 against numpy (0 where x is 0), alone and fused with
other elementwise ops, float32/float64/int inputs, and their gradients by finite differences."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.xlogx import xlogx, xlogy0
from tests.utils import assert_matches


def ref_xlogx(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0, x * np.log(x))


def ref_xlogy0(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0, x * np.log(y))


@pytest.mark.parametrize("dtype,out", [("float32", "float32"), ("float64", "float64"), ("int32", "float64")])
def test_values_match_numpy(dtype, out):
    values = np.array([0, 1, 2, 5, 0, 3]).astype(dtype)
    other = np.array([0, 4, 0.5, 2, 3, 1]).astype("float64" if dtype == "int32" else dtype)
    if dtype == "float32":
        values, other = values / np.float32(3), other
    x, y = T.vector(dtype=dtype), T.vector(dtype=other.dtype)
    assert_matches(function([x], xlogx(x))(values), ref_xlogx(values).astype(out))
    assert_matches(function([x, y], xlogy0(x, y))(values, other), ref_xlogy0(values, other).astype(out))
    fused = function([x, y], xlogx(x) * 2 + xlogy0(x, y))(values, other)
    assert_matches(fused, (ref_xlogx(values) * 2 + ref_xlogy0(values, other)).astype(out))


def test_zero_gives_zero_not_nan():
    zero = T.as_tensor_variable(np.zeros(2))
    assert np.array_equal(function([], [xlogx(zero), xlogy0(zero, zero)])(), [[0, 0], [0, 0]])


def test_gradients():
    rng = np.random.default_rng(0)
    verify_grad(xlogx, [rng.random((3, 4)) + 0.1])
    verify_grad(xlogy0, [rng.random((3, 4)) + 0.1, rng.random((3, 4)) + 0.1])


def test_ops_pickle_and_refuse_complex():
    assert pickle.loads(pickle.dumps(xlogx)) == xlogx
    with pytest.raises(TypeError):
        xlogx(T.cvector())
