"""Our float32 exp and tanh (backends/kernels/c_math.py) through the native path, on a dense
sample of every float32 binade and the edges where they clamp, overflow, underflow and
saturate: within the measured ulp bound of a float64 reference, special values as numpy's."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import config, function, tensor
from arignote.backends.cpu import native
from arignote.backends.kernels import c_math
from tests.backends.test_native_elemwise import assert_native

pytestmark = pytest.mark.skipif(not native.available(), reason="no working C compiler")


def around(value: float, width: int = 300) -> np.ndarray:
    """The ``width`` float32 numbers on each side of ``value`` (and of ``-value``)."""
    bits = np.array([value, -value], np.float32).view(np.int32)
    return (bits[:, None] + np.arange(-width, width + 1, dtype=np.int32)).view(np.float32).ravel()


def sample() -> np.ndarray:
    spread = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0xFFFFFFFF],
                    np.uint32).view(np.float32)
    tiny = np.arange(0, 5000, dtype=np.uint32).view(np.float32)  # zero and the smallest subnormals
    edges = [np.log(np.finfo(np.float32).max),  # exp overflows
             87.33654,  # exp leaves the normals
             103.27893, 103.97208,  # exp's last subnormals, then 0
             89.0, 104.0,  # exp's clamps
             9.010913, 10.0,  # tanh saturates; its clamp
             0.0625, 2.0**-12,  # tanh's largest error; where it is x
             1.0, 0.5, float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny)]
    specials = np.array([0.0, -0.0, np.inf, -np.inf], np.float32)
    return np.concatenate([spread, nans, tiny, -tiny, specials, *(around(e) for e in edges)])


def ulp_error(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in float32 ulp of exact's binade (2**-149 below the normals)."""
    binade = np.floor(np.log2(np.maximum(np.abs(exact), 2.0**-126)))
    return np.abs(got.astype(np.float64) - exact) / np.exp2(binade - 23)


@pytest.mark.parametrize("name", ["exp", "tanh"])
def test_within_the_measured_bound_with_numpys_special_values(name):
    x = tensor.fvector("x")
    with config.change_flags(native_min_size=0):
        f = function([x], getattr(tensor, name)(x))
    values = sample()
    got = f(values)
    assert_native(f, 1)
    ours = {"exp": "ak_expf", "tanh": "ak_tanhf"}[name]
    assert c_math.OVERRIDES[name] == ours
    with np.errstate(over="ignore", invalid="ignore"):  # the signalling NaNs, exp's overflow
        exact = getattr(np, name)(values.astype(np.float64))
        theirs = getattr(np, name)(values)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(got), np.isnan(theirs))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(theirs))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(theirs))
    zero = got == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(exact[zero]))
    finite = np.isfinite(got)
    error = ulp_error(got[finite], exact[finite])
    bound = {"exp": c_math.EXP_ULP, "tanh": c_math.TANH_ULP}[name]
    worst = int(np.argmax(error))
    assert error[worst] <= bound, (f"{name}({values[finite][worst]!r}) = {got[finite][worst]!r}: "
                                   f"{error[worst]:.3f} ulp, measured bound {bound}")
