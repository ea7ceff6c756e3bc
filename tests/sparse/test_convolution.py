"""``sparse.convolution`` (Theano's ``sparse.sandbox.sp``): convolution and max pooling through
a sparse patch matrix, against scipy's correlate2d and a numpy pooling loop."""
import numpy as np
import pytest
from scipy.signal import correlate2d

import arignote
from arignote import tensor as T
from arignote.sparse.convolution import convolution_indices, convolve, max_pool
from arignote.testing import verify_grad


def ref_convolve(images, kerns, imgshp, kshp, step, mode, bias):
    """Each kernel correlated with each feature of each image, summed over features, subsampled."""
    features = imgshp[0]
    dx, dy = step
    maps = []
    for image in images.reshape((-1, *imgshp)):
        per_kernel = []
        for kern in kerns.reshape(len(kerns), features, *kshp):
            full = sum(correlate2d(image[f], kern[f], mode) for f in range(features))
            per_kernel.append(full[::dy, ::dx])
        maps.append(np.stack(per_kernel))
    maps = np.stack(maps) + bias[None, :, None, None]
    return maps.reshape(len(images), -1), maps.shape[1:]


@pytest.mark.parametrize("mode", ["valid", "full"])
@pytest.mark.parametrize("step", [(1, 1), (2, 3)])
@pytest.mark.parametrize("imgshp", [(7, 6), (2, 5, 6)])
def test_convolve_matches_correlate2d(mode, step, imgshp):
    rng = np.random.RandomState(0)
    shape3 = (1, *imgshp) if len(imgshp) == 2 else imgshp
    kshp, nkern, batch = (3, 2), 4, 3
    kerns, images, bias = T.dmatrix("kerns"), T.dmatrix("images"), T.dvector("bias")
    out, outshp = convolve(kerns, kshp, nkern, images, imgshp, step, bias=bias, mode=mode)
    f = arignote.function([kerns, images, bias], out)
    k = rng.normal(size=(nkern, shape3[0] * 6))
    x = rng.normal(size=(batch, int(np.prod(shape3))))
    b = rng.normal(size=nkern)
    want, want_shape = ref_convolve(x, k, shape3, kshp, step, mode, b)
    assert tuple(outshp) == want_shape
    np.testing.assert_allclose(f(k, x, b), want, rtol=1e-10, atol=1e-12)
    unflat, _ = convolve(kerns, kshp, nkern, images, imgshp, step, mode=mode, flatten=False)
    assert arignote.function([kerns, images], unflat)(k, x).shape == (batch, nkern, int(np.prod(want_shape[1:])))


def test_convolve_gradients():
    rng = np.random.RandomState(1)
    imgshp, kshp = (2, 4, 5), (2, 2)

    def layer(kerns, images):
        return convolve(kerns, kshp, 3, images, imgshp, (1, 2), mode="full")[0]

    verify_grad(layer, [rng.normal(size=(3, 8)), rng.normal(size=(2, 40))], rng=rng)


@pytest.mark.parametrize("pool", [(2, 2), (3, 2), (4, 4)])
def test_max_pool_matches_the_block_maxima(pool):
    rng = np.random.RandomState(2)
    imgshp = (3, 8, 9)
    x = rng.uniform(size=(2, int(np.prod(imgshp))))
    images = T.dmatrix("images")
    out, outshp = max_pool(images, imgshp, pool)
    got = arignote.function([images], out)(x)
    blocks = np.array(imgshp[1:]) // pool
    assert tuple(outshp) == tuple(blocks)
    trimmed = x.reshape(2, *imgshp)[:, :, :blocks[0] * pool[0], :blocks[1] * pool[1]]
    want = trimmed.reshape(2, 3, blocks[0], pool[0], blocks[1], pool[1]).max(axis=(3, 5))
    np.testing.assert_array_equal(got, want.reshape(2, -1))
    verify_grad(lambda v: max_pool(v, imgshp, pool)[0], [x], rng=rng)


def test_the_patch_matrix_and_its_errors():
    indices, indptr, shape, fmt, outshp = convolution_indices.evaluate((3, 3), (2, 2))
    assert fmt == "csc" and shape == (4 * 4, 9) and tuple(outshp) == (2, 2)
    assert len(indices) == 16 and indptr[-1] == 16  # every tap lies inside in valid mode
    full = convolution_indices.evaluate((3, 3), (2, 2), mode="full")
    assert tuple(full[4]) == (4, 4) and len(full[0]) == 4 * 9  # each pixel under each tap once
    with pytest.raises(ValueError, match="no output"):
        convolution_indices.evaluate((3, 3), (4, 4))
    with pytest.raises(ValueError, match="ws=False"):
        convolution_indices.evaluate((3, 3), (2, 2), ws=False)
    with pytest.raises(ValueError, match="mode"):
        convolution_indices.evaluate((3, 3), (2, 2), mode="same")
    with pytest.raises(TypeError, match="images .* must be a matrix"):
        convolve(T.dmatrix(), (2, 2), 1, T.dvector("v"), (3, 3))
