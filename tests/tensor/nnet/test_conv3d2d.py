"""``nnet.conv3d2d``: conv3d in the (batch, time, channels, rows, cols) layout against
scipy.signal.convolve (a true 3d convolution) summed over channels, for every border
mode and mixed (time, rows, cols) modes; gradients by finite differences; the diagonal
stripe view and its two ops against explicit indexing."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import convolve

from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.nnet.conv3d2d import (DiagonalSubtensor, conv3d, diagonal_subtensor,
                                           get_diagonal_subtensor_view, inc_diagonal_subtensor)
from tests.utils import assert_matches, run

PADS = {"valid": lambda k: 0, "full": lambda k: k - 1, "half": lambda k: k // 2}


def reference(signals: np.ndarray, filters: np.ndarray, modes) -> np.ndarray:
    taps = (filters.shape[1], filters.shape[3], filters.shape[4])
    pads = [PADS[m](k) for m, k in zip(modes, taps)]
    padded = np.pad(signals, [(0, 0), (pads[0],) * 2, (0, 0), (pads[1],) * 2, (pads[2],) * 2])
    out = np.array([[sum(convolve(padded[n, :, c], filters[k, :, c], "valid")
                         for c in range(signals.shape[2])) for k in range(filters.shape[0])]
                    for n in range(signals.shape[0])])
    return out.transpose(0, 2, 1, 3, 4).astype(signals.dtype)


def movie(dtype: str = "float64"):
    return T.TensorType(dtype, (False,) * 5)()


@pytest.mark.parametrize("border_mode", ["valid", "full", "half", ("valid", "full", "full"),
                                         ("full", "valid", "half")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv3d_matches_convolve(border_mode, dtype):
    rng = np.random.default_rng(0)
    signals, filters = rng.random((2, 5, 3, 6, 7)).astype(dtype), rng.random((4, 2, 3, 3, 2)).astype(dtype)
    s, f = movie(dtype), movie(dtype)
    modes = (border_mode,) * 3 if isinstance(border_mode, str) else border_mode
    expected = reference(signals, filters, modes)
    assert_matches(run([s, f], conv3d(s, f, border_mode=border_mode), signals, filters), expected)
    given = conv3d(s, f, signals.shape, filters.shape, border_mode)
    assert_matches(run([s, f], given, signals, filters), expected)


def test_conv3d_one_frame_filters_and_gradients():
    rng = np.random.default_rng(1)
    signals, filters = rng.random((1, 4, 2, 4, 3)), rng.random((2, 1, 2, 2, 2))
    s, f = movie(), movie()
    assert_matches(run([s, f], conv3d(s, f), signals, filters), reference(signals, filters, ("valid",) * 3))
    for mode in ["valid", ("full", "valid", "valid")]:
        verify_grad(lambda a, b, mode=mode: conv3d(a, b, border_mode=mode), [signals, rng.random((2, 2, 2, 2, 2))])


def test_conv3d_bad_arguments():
    with pytest.raises(TypeError, match="5d"):
        conv3d(T.dtensor4(), movie())
    with pytest.raises(ValueError, match="border_mode"):
        conv3d(movie(), movie(), border_mode="same")


def test_diagonal_subtensor_view():
    x = np.arange(7 * 4 * 2).reshape(7, 4, 2)
    view = get_diagonal_subtensor_view(x, 0, 1)
    expected = np.array([[x[a + 3 - b, b] for b in range(4)] for a in range(4)])
    assert np.shares_memory(view, x) and np.array_equal(view, expected)
    assert np.array_equal(get_diagonal_subtensor_view(x, 0, 2)[:, :, 1], x[:6, :, 1])  # shifted up by 1
    with pytest.raises(NotImplementedError, match="at least as long"):
        get_diagonal_subtensor_view(x, 2, 0)


def test_diagonal_ops_and_gradients():
    rng = np.random.default_rng(2)
    x, amt = rng.random((6, 3)), rng.random((4, 3))
    m = T.dmatrix()
    got = run([m], diagonal_subtensor(m, 0, 1), x)
    assert_matches(got, np.array([[x[a + 2 - b, b] for b in range(3)] for a in range(4)]))
    expected = x.copy()
    for a in range(4):
        for b in range(3):
            expected[a + 2 - b, b] += amt[a, b]
    assert_matches(run([m], inc_diagonal_subtensor(m, 0, 1, amt), x), expected)
    verify_grad(lambda v: DiagonalSubtensor()(v, 0, 1), [x])
    verify_grad(lambda v, a: inc_diagonal_subtensor(v, 0, 1, a), [x, amt])
