"""images2neibs / neibs2images against explicit loops written here (Theano's documented
row order and border rules), every mode, steps, odd sizes; gradients by finite
differences; shapes inferred; round trips; errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.nnet import neighbours as nb
from tests.utils import assert_matches, check_infer_shape, run

CASES = [  # (shape, neib_shape, neib_step, mode)
    ((2, 3, 4, 6), (2, 3), None, "valid"),
    ((1, 2, 5, 7), (3, 3), (1, 2), "valid"),
    ((2, 1, 7, 5), (2, 2), None, "ignore_borders"),
    ((1, 2, 8, 7), (3, 2), (2, 3), "ignore_borders"),
    ((2, 2, 5, 6), (3, 2), (2, 2), "half"),
    ((1, 1, 5, 5), (3, 3), (1, 1), "full"),
    ((2, 1, 5, 6), (3, 3), None, "wrap_centered"),
    ((1, 2, 7, 5), (3, 5), (2, 1), "wrap_centered"),
]


def reference(x: np.ndarray, neib_shape: tuple, step: tuple | None, mode: str) -> np.ndarray:
    """One row per (i, j, patch row, patch column): the patch, zeros outside the image
    (half, full) or wrapped around it (wrap_centered)."""
    (c, d), (sx, sy) = neib_shape, step or neib_shape
    height, width = x.shape[2:]
    if mode == "wrap_centered":
        grid, shift = (-(-height // sx), -(-width // sy)), (c // 2, d // 2)
    elif mode == "half":
        grid, shift = ((height - c % 2) // sx + 1, (width - d % 2) // sy + 1), (c // 2, d // 2)
    elif mode == "full":
        grid, shift = ((height + c - 2) // sx + 1, (width + d - 2) // sy + 1), (c - 1, d - 1)
    else:
        grid, shift = ((height - c) // sx + 1, (width - d) // sy + 1), (0, 0)
    rows = []
    for n, s, a, b in itertools.product(range(x.shape[0]), range(x.shape[1]), range(grid[0]), range(grid[1])):
        patch = np.zeros((c, d), x.dtype)
        for i, j in itertools.product(range(c), range(d)):
            r, q = a * sx + i - shift[0], b * sy + j - shift[1]
            if mode == "wrap_centered":
                patch[i, j] = x[n, s, r % height, q % width]
            elif 0 <= r < height and 0 <= q < width:
                patch[i, j] = x[n, s, r, q]
        rows.append(patch.ravel())
    return np.array(rows)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, neib, step, mode", CASES)
def test_images2neibs_matches_explicit_loops(shape, neib, step, mode, dtype):
    xv = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    x = T.tensor4("x", dtype=dtype)
    out = nb.images2neibs(x, neib, step, mode)
    assert_matches(run([x], out, xv), reference(xv, neib, step, mode))
    check_infer_shape([x], out, [xv])


@pytest.mark.parametrize("shape, neib, step, mode", CASES)
def test_verify_grad_of_images2neibs(shape, neib, step, mode):
    xv = np.random.default_rng(1).standard_normal(shape)
    verify_grad(lambda x: nb.images2neibs(x, neib, step, mode), [xv], n_tests=1)


@pytest.mark.parametrize("shape, neib, step, mode", CASES[1::3])
def test_verify_grad_of_the_gradient(shape, neib, step, mode):
    rng = np.random.default_rng(2)
    xv = rng.standard_normal(shape)
    gz = rng.standard_normal(reference(xv, neib, step, mode).shape)
    verify_grad(lambda g: nb.Images2NeibsGrad(mode)(T.constant(xv), g, neib, step or neib), [gz], n_tests=1)


def test_symbolic_patch_shape_and_step():
    xv = np.random.default_rng(3).standard_normal((1, 2, 5, 7))
    x, shp, step = T.tensor4("x"), T.lvector("shp"), T.lvector("step")
    out = nb.images2neibs(x, shp, step)
    values = [xv, np.array([3, 3]), np.array([1, 2])]
    assert_matches(run([x, shp, step], out, *values), reference(xv, (3, 3), (1, 2), "valid"))
    check_infer_shape([x, shp, step], out, values)


@pytest.mark.parametrize("shape, neib, mode", [((2, 3, 4, 6), (2, 3), "valid"), ((2, 1, 7, 5), (2, 2), "ignore_borders")])
def test_neibs2images_inverts(shape, neib, mode):
    xv = np.random.default_rng(4).standard_normal(shape)
    x = T.tensor4("x")
    back = nb.neibs2images(nb.images2neibs(x, neib, mode=mode), neib, x.shape, mode=mode)
    expected = xv.copy()
    if mode == "ignore_borders":  # what no patch covered comes back as zeros
        expected[:, :, shape[2] // neib[0] * neib[0]:] = 0
        expected[:, :, :, shape[3] // neib[1] * neib[1]:] = 0
    assert_matches(run([x], back, xv), expected)
    neibs = T.matrix("neibs")
    rows = reference(xv, neib, None, mode)
    assert_matches(run([neibs], nb.neibs2images(neibs, neib, shape, mode=mode), rows), expected)
    verify_grad(lambda m: nb.neibs2images(m, neib, shape, mode=mode), [rows], n_tests=1)


def test_errors():
    x = T.tensor4("images")
    with pytest.raises(NotImplementedError, match="Only modes valid, half, full"):
        nb.images2neibs(x, (2, 2), mode="same")
    with pytest.raises(NotImplementedError, match="neibs2images do not support mode=half"):
        nb.neibs2images(T.matrix("m"), (2, 2), (1, 1, 4, 4), mode="half")
    with pytest.raises(TypeError, match="must be a 4-d tensor"):
        nb.images2neibs(T.matrix("m"), (2, 2))
    with pytest.raises(TypeError, match=r"neib_shape\[0\]=2, neib_step\[0\]=2 and 'images' shape\[2\]=5 not consistent"):
        run([x], nb.images2neibs(x, (2, 2)), np.zeros((1, 1, 5, 4)))
    with pytest.raises(TypeError, match="need patch with odd shapes"):
        run([x], nb.images2neibs(x, (2, 3), mode="wrap_centered"), np.zeros((1, 1, 4, 4)))
    with pytest.raises(ValueError, match="neib_step wrong step"):
        run([x], nb.images2neibs(x, (2, 2), (0, 1)), np.zeros((1, 1, 4, 4)))
    assert T.nnet.neighbours is nb
