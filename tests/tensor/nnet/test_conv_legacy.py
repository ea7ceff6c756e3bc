"""Theano's legacy ``nnet.conv.conv2d`` / ``ConvOp`` and ``signal.conv.conv2d`` against
scipy.signal.convolve2d summed over channels (a true convolution: flipped filters),
over valid/full, strides, odd and even sizes, shapes given or not, float32 and float64;
the gradients by finite differences; shapes given at build time checked at run time."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from scipy.signal import convolve2d

from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.nnet import conv_legacy
from arignote.tensor.nnet.conv_legacy import ConvOp
from arignote.tensor.shape import NotScalarConstantError
from arignote.tensor.signal import conv as signal_conv
from tests.utils import assert_matches, check_infer_shape, run


def reference(img: np.ndarray, kern: np.ndarray, mode: str, subsample=(1, 1)) -> np.ndarray:
    out = np.array([[sum(convolve2d(img[b, c], kern[k, c], mode) for c in range(img.shape[1]))
                     for k in range(kern.shape[0])] for b in range(img.shape[0])])
    return out[:, :, ::subsample[0], ::subsample[1]].astype(img.dtype)


def legacy(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return conv_legacy.conv2d(*args, **kwargs)


CASES = [((3, 2, 7, 5), (5, 2, 2, 3), "valid", (1, 1)),
         ((3, 2, 8, 8), (4, 2, 5, 5), "full", (1, 1)),
         ((1, 1, 5, 5), (2, 1, 8, 8), "full", (1, 1)),
         ((2, 3, 3, 3), (4, 3, 3, 3), "valid", (1, 1)),
         ((3, 2, 7, 5), (5, 2, 2, 3), "full", (2, 2)),
         ((2, 1, 9, 6), (3, 1, 3, 2), "valid", (2, 1))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("img_shape,kern_shape,mode,subsample", CASES)
@pytest.mark.parametrize("give_shapes", [True, False])
def test_conv2d_matches_convolve2d(img_shape, kern_shape, mode, subsample, dtype, give_shapes):
    rng = np.random.default_rng(0)
    img, kern = rng.random(img_shape).astype(dtype), rng.random(kern_shape).astype(dtype)
    x, w = T.tensor4(dtype=dtype), T.tensor4(dtype=dtype)
    shapes = (img_shape, kern_shape) if give_shapes else (None, None)
    y = legacy(x, w, *shapes, border_mode=mode, subsample=subsample)
    assert isinstance(y.owner.op, ConvOp)
    assert_matches(run([x, w], y, img, kern), reference(img, kern, mode, subsample))
    check_infer_shape([x, w], y, [img, kern])


@pytest.mark.parametrize("mode", ["valid", "full"])
def test_conv2d_gradients(mode):
    rng = np.random.default_rng(1)
    img, kern = rng.random((2, 2, 5, 4)), rng.random((3, 2, 2, 3))
    verify_grad(lambda x, w: legacy(x, w, img.shape, kern.shape, mode), [img, kern])
    verify_grad(lambda x, w: legacy(x, w, border_mode=mode, subsample=(2, 1)), [img, kern])


def test_constant_shapes_and_unsigned_entries():
    img, kern = np.random.default_rng(2).random((3, 2, 7, 5)), np.ones((5, 2, 2, 3))
    x, w = T.dtensor4(), T.dtensor4()
    for image_shape in [(T.as_tensor_variable(3), 2, np.uint8(7), 5), T.as_tensor_variable([3, 2, 7, 5]),
                        (None, 2, None, None)]:
        y = legacy(x, w, image_shape, (np.uint16(5), 2, 2, 3))
        assert_matches(run([x, w], y, img, kern), reference(img, kern, "valid"))


def test_symbolic_shape_entry_is_refused():
    n = T.iscalar("n")
    with pytest.raises(NotScalarConstantError, match="constant"):
        legacy(T.dtensor4(), T.dtensor4(), (3, 2, 8, n), (4, 2, 5, 5))


def test_channel_mismatch_at_build_time():
    with pytest.raises(ValueError, match="channels"):
        legacy(T.dtensor4(), T.dtensor4(), (3, 2, 8, 8), (4, 3, 5, 5))


@pytest.mark.parametrize("img_shape,kern_shape", [((2, 2, 8, 8), (4, 2, 5, 5)), ((3, 2, 7, 8), (4, 2, 5, 5)),
                                                  ((3, 2, 8, 8), (3, 2, 5, 5)), ((3, 2, 8, 8), (4, 2, 5, 6))])
def test_given_shapes_checked_at_run_time(img_shape, kern_shape):
    x, w = T.dtensor4("x"), T.dtensor4("w")
    y = legacy(x, w, (3, 2, 8, 8), (4, 2, 5, 5), unroll_batch=3, unroll_kern=2)
    with pytest.raises(ValueError, match="shape"):
        run([x, w], y, np.ones(img_shape), np.ones(kern_shape))


def test_bad_inputs():
    with pytest.raises(TypeError, match="4D"):
        legacy(T.dmatrix(), T.dtensor4())
    with pytest.raises(ValueError, match="output_mode"):
        legacy(T.dtensor4(), T.dtensor4(), border_mode="half")
    with pytest.raises(NotImplementedError, match="upsampl"):
        ConvOp(imshp=(1, 4, 4), kshp=(2, 2), imshp_logical=(1, 8, 8))


def test_convop_legacy_arguments():
    op = ConvOp(imshp=(6, 7), kshp=(3, 2), nkern=4, bsize=2, dx=2, dy=1, output_mode="full",
                unroll_patch=True, openmp=False)
    assert op.imshp == (2, 1, 6, 7) and op.kshp == (4, 1, 3, 2) and op.subsample == (2, 1)
    assert op.outshp == (4, 8) and op.unroll_patch is True and op.out_mode == "full"
    assert ConvOp.getOutputShape((6, 7), (3, 2), (1, 1), "valid") == (4, 6)
    assert ConvOp.has_all_shape((1, 6, 7), (3, 2)) and not ConvOp.has_all_shape((1, None, 7), (3, 2))
    assert pickle.loads(pickle.dumps(op)) == op
    img, kern = np.random.default_rng(3).random((2, 1, 6, 7)), np.random.default_rng(4).random((4, 1, 3, 2))
    x, w = T.dtensor4(), T.dtensor4()
    assert_matches(run([x, w], op(x, w), img, kern), reference(img, kern, "full", (2, 1)))


def test_deprecation_warning():
    with pytest.warns(UserWarning, match="deprecated"):
        conv_legacy.conv2d(T.dtensor4(), T.dtensor4())


@pytest.mark.parametrize("img_ndim,kern_ndim", [(2, 2), (3, 2), (2, 3), (3, 3)])
@pytest.mark.parametrize("mode", ["valid", "full"])
def test_signal_conv2d_layouts(img_ndim, kern_ndim, mode):
    rng = np.random.default_rng(5)
    img = rng.random((4, 7, 6)[3 - img_ndim:])
    kern = rng.random((3, 3, 2)[3 - kern_ndim:])
    x, w = T.TensorType("float64", (False,) * img_ndim)(), T.TensorType("float64", (False,) * kern_ndim)()
    y = signal_conv.conv2d(x, w, border_mode=mode)
    imgs = img if img_ndim == 3 else img[None]
    kerns = kern if kern_ndim == 3 else kern[None]
    expected = np.array([[convolve2d(i, k, mode) for k in kerns] for i in imgs])
    expected = expected[(slice(None) if img_ndim == 3 else 0,) + (slice(None) if kern_ndim == 3 else 0,)]
    assert_matches(run([x, w], y, img, kern), expected)
    given = signal_conv.conv2d(x, w, img.shape, kern.shape, border_mode=mode, subsample=(2, 1))
    assert_matches(run([x, w], given, img, kern), expected[..., ::2, :])
    verify_grad(lambda a, b: signal_conv.conv2d(a, b, border_mode=mode), [img, kern])


def test_signal_conv2d_refuses_4d():
    with pytest.raises(TypeError, match="2d"):
        signal_conv.conv2d(T.dtensor4(), T.dtensor3())
    with pytest.raises(TypeError, match="2d"):
        signal_conv.conv2d(T.dtensor3(), T.dvector())
