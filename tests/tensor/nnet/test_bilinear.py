"""bilinear_upsampling, frac_bilinear_upsampling and the triangle kernels, against a
reference written here as Theano defines the operation: the input with its first
and last rows and columns repeated, transposed-convolved (explicit loops) by the
triangle kernel with stride ``ratio``, then cropped; a fractional ratio ``p / q``
is the upsampling by ``p`` keeping every ``q``-th sample."""
from __future__ import annotations

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.config import config
from arignote.gradient import verify_grad
from arignote.tensor.nnet import abstract_conv as ac
from tests.utils import assert_matches, run


def triangle(ratio: int) -> np.ndarray:
    return np.array([min(t + 1, 2 * ratio - 1 - t) for t in range(2 * ratio - 1)], float)


def upsample_axis(x: np.ndarray, axis: int, ratio: int) -> np.ndarray:
    """Edge-pad by one, scatter each sample times the normalized triangle at stride
    ``ratio``, crop ``2 ratio - (ratio - 1) // 2 - 1`` from the start, keep ``n ratio``."""
    x = np.moveaxis(x, axis, -1)
    padded = np.concatenate([x[..., :1], x, x[..., -1:]], -1)
    kern = triangle(ratio) / ratio
    full = np.zeros(x.shape[:-1] + ((padded.shape[-1] - 1) * ratio + len(kern),))
    for i in range(padded.shape[-1]):
        for t, k in enumerate(kern):
            full[..., i * ratio + t] += padded[..., i] * k
    start = 2 * ratio - (ratio - 1) // 2 - 1
    return np.moveaxis(full[..., start:start + x.shape[-1] * ratio], -1, axis)


def reference(x: np.ndarray, rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
    for axis, (p, q) in ((2, rows), (3, cols)):
        x = upsample_axis(x, axis, p)[(slice(None),) * axis + (slice(None, None, q),)]
    return x


def test_kernels_are_the_triangles():
    ratio = T.iscalar("ratio")
    kernels = arignote.function([ratio], [ac.bilinear_kernel_1D(ratio, normalize=False),
                                          ac.bilinear_kernel_1D(ratio)])
    for r in range(1, 8):
        assert_matches(run([], ac.bilinear_kernel_1D(r, normalize=False)), triangle(r).astype(config.floatX))
        raw, normal = kernels(r)
        assert_matches(raw, triangle(r).astype(config.floatX))
        assert_matches(normal, (triangle(r) / r).astype(config.floatX))
        assert_matches(run([], ac.bilinear_kernel_2D(r)), np.outer(triangle(r), triangle(r)) / r ** 2)
    assert_matches(run([], ac.bilinear_kernel_2D((2, 3), normalize=False)), np.outer(triangle(2), triangle(3)))


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 2, 3, 1), (1, 1, 1, 4)])
@pytest.mark.parametrize("ratio", [1, 2, 3, 4, 5])
def test_integer_ratios_match_the_transposed_convolution(shape, ratio):
    x = np.random.default_rng(ratio).random(shape)
    expected = reference(x, (ratio, 1), (ratio, 1))
    assert expected.shape == shape[:2] + (shape[2] * ratio, shape[3] * ratio)
    for use_1D_kernel in (True, False):
        assert_matches(run([], ac.bilinear_upsampling(x, ratio, use_1D_kernel=use_1D_kernel)), expected)
    v, r = T.tensor4("v"), T.iscalar("r")
    assert_matches(run([v, r], ac.bilinear_upsampling(v, r, batch_size=shape[0],
                                                      num_input_channels=shape[1]), x, ratio), expected)


@pytest.mark.parametrize("frac_ratio, rows, cols", [
    ((3, 2), (3, 2), (3, 2)), ((4, 3), (4, 3), (4, 3)), ((2, 4), (1, 2), (1, 2)),
    (((7, 4), (5, 3)), (7, 4), (5, 3)), (((6, 4), (2, 1)), (3, 2), (2, 1)),
    (((5, 5), (8, 3)), (1, 1), (8, 3)),
])
def test_fractional_ratios_keep_every_denominator_th_sample(frac_ratio, rows, cols):
    x = np.random.default_rng(1).random((2, 3, 4, 5))
    expected = reference(x, rows, cols)
    assert expected.shape[2] == (4 * rows[0] - 1) // rows[1] + 1
    got = run([], ac.bilinear_upsampling(x, frac_ratio=frac_ratio, use_1D_kernel=False))
    assert_matches(got, expected)
    v = T.tensor4("v")
    assert_matches(run([v], ac.frac_bilinear_upsampling(v, frac_ratio), x), expected)


def test_interpolation_properties_and_dtypes():
    ramp = np.arange(6, dtype="float32").reshape(1, 1, 1, 6) * np.ones((1, 1, 3, 1), "float32")
    out = run([], ac.bilinear_upsampling(ramp, 3))
    assert out.dtype == np.dtype(np.result_type("float32", config.floatX))
    assert np.allclose(np.diff(out[0, 0, 0, 1:-1]), 1 / 3)  # linear away from the clamped edges
    assert np.allclose(out[0, 0], out[0, 0, :1])  # every row equal
    constant = np.full((2, 2, 3, 3), 7.0)
    assert_matches(run([], ac.bilinear_upsampling(constant, 4)), np.full((2, 2, 12, 12), 7.0))
    with config.change_flags(floatX="float32"):
        assert ac.bilinear_upsampling(T.ftensor4("f"), 2).dtype == "float32"
        assert ac.bilinear_kernel_1D(2).dtype == "float32"


@pytest.mark.parametrize("ratio, frac", [(2, None), (3, None), (None, ((3, 2), (5, 3)))])
def test_verify_grad_wrt_the_input(ratio, frac):
    x = np.random.default_rng(2).random((1, 2, 3, 4))
    verify_grad(lambda v: ac.bilinear_upsampling(v, ratio, frac, use_1D_kernel=frac is None), [x],
                rng=np.random.RandomState(0))


def test_bad_arguments_are_refused():
    v = T.tensor4("maps")
    with pytest.raises(ValueError, match="can't use ratio and frac_ratio together"):
        ac.bilinear_upsampling(v, 2, (3, 2))
    with pytest.raises(ValueError, match=r"No ratio \(or frac_ratio\) provided"):
        ac.bilinear_upsampling(v)
    with pytest.raises(ValueError, match="frac_ratio must be a tuple"):
        ac.frac_bilinear_upsampling(v, [3, 2])
    with pytest.raises(ValueError, match=r"\(numerator, denominator\) pair of positive ints, got \(3, 0\)"):
        ac.bilinear_upsampling(v, frac_ratio=(3, 0))
    with pytest.raises(TypeError, match="'maps' must be a 4D tensor"):
        ac.bilinear_upsampling(T.tensor3("maps"), 2)
    f = arignote.function([v], ac.bilinear_upsampling(v, 2, batch_size=2, num_input_channels=3))
    with pytest.raises(ValueError, match="maps"):
        f(np.zeros((2, 4, 3, 3)))
