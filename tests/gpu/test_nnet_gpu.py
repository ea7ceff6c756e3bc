"""The convolution, pooling, batch-normalization and activation gradients on a device:
verify_grad once per gradient op (the op-suite runs the value tables; its finite-difference
sweeps run on the CPU only), Rop, the GPU ops' placement, and the cuDNN plumbing
with a stand-in for cuDNN computed on the host."""
from __future__ import annotations

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.backends.gpu import ops_conv
from arignote.backends.gpu.array import to_gpu
from arignote.backends.gpu.context import get_context
from arignote.gradient import verify_grad
from arignote.tensor.nnet import abstract_conv as ac
from arignote.tensor.nnet import bn, im2col
from arignote.tensor.signal import pool
from tests.tensor.nnet.test_abstract_conv import CASES, conv, reference_conv, reference_grad_inputs, values
from tests.tensor.nnet.test_activations import ACTIVATIONS
from tests.utils import assert_matches, run

CONV = CASES[15]  # pads, strides, dilation, groups, correlation


def _conv(x, w, case=CONV):
    return T.nnet.conv2d(x, w, border_mode=case.border_mode, subsample=case.subsample,
                         filter_flip=case.flip, filter_dilation=case.dilation, num_groups=case.groups)


def _gpu_ops(f) -> set[str]:
    return {type(n.op).__name__ for n in f.maker.fgraph.toposort() if "Gpu" in type(n.op).__name__}


@pytest.mark.parametrize("case", [CONV, CASES[18]], ids=lambda c: c.name)
def test_conv_gradients_verify_on_the_device(device, case):
    img, kern, top = values(case, "float64", seed=5)
    verify_grad(lambda x, w: conv(case, x, w), [img, kern], n_tests=1)
    kw = dict(border_mode=case.border_mode, subsample=case.subsample, filter_flip=case.flip,
              filter_dilation=case.dilation, num_groups=case.groups)
    grad_inputs, grad_weights = ((ac.conv2d_grad_wrt_inputs, ac.conv2d_grad_wrt_weights) if case.nd == 2
                                 else (ac.conv3d_grad_wrt_inputs, ac.conv3d_grad_wrt_weights))
    verify_grad(lambda w, g: grad_inputs(g, w, case.img, **kw), [kern, top], n_tests=1)
    verify_grad(lambda x, g: grad_weights(x, g, case.kern, **kw), [img, top], n_tests=1)


def test_conv_rop_and_placement(device):
    img, kern, _ = values(CONV, "float32", seed=6)
    x, w, vx = T.ftensor4("x"), T.ftensor4("w"), T.ftensor4("vx")
    y = _conv(x, w)
    f = arignote.function([x, w, vx], [y, arignote.Rop(y, x, vx),
                                       arignote.grad((y ** 2).sum(), w)])
    out, rop, grad = f(img, kern, img[::-1].copy())
    assert_matches(out, reference_conv(CONV, img, kern).astype("float32"), 1e-4)
    assert_matches(rop, reference_conv(CONV, img[::-1], kern).astype("float32"), 1e-4)
    if device != "cpu":
        assert {"GpuCorrMM", "GpuCorrMM_gradWeights"} <= _gpu_ops(f)


@pytest.mark.parametrize("mode", pool.MODES)
def test_pool_gradients_verify_on_the_device(device, mode):
    rng = np.random.default_rng(7)
    xv = rng.standard_normal((2, 2, 6, 5))
    params = ((3, 2), (2, 1), (1, 1))
    op = pool.Pool(True, mode)
    verify_grad(lambda x: op(x, *params), [xv], n_tests=1)
    if mode == "max":
        gz = rng.standard_normal((2, 2, 3, 6))
        verify_grad(lambda x, g: pool.MaxPoolGrad(True)(x, op(x, *params), g, *params), [xv, gz], n_tests=1)
        ggx = rng.standard_normal(xv.shape)
        verify_grad(lambda x, gg: pool.DownsampleFactorMaxGradGrad(True)(x, op(x, *params), gg, *params),
                    [xv, ggx], n_tests=1)
    x = T.tensor4("x")
    f = arignote.function([x], arignote.grad(op(x, *params).sum(), x))
    if device != "cpu":
        # The max-pool gradient reads the pooled value; the average's does not need it.
        assert ({"GpuPool", "GpuMaxPoolGrad"} if mode == "max" else {"GpuAveragePoolGrad"}) <= _gpu_ops(f)


def test_views_with_offsets_pool_and_convolve(device):
    """Device views that start inside their buffer (a slice of a shared variable)."""
    rng = np.random.default_rng(12)
    data = arignote.shared(rng.standard_normal((3, 2, 6, 5)), name="data")
    kern = rng.standard_normal((2, 2, 3, 3))
    view = data[1:]  # contiguous, from an offset into the buffer
    pooled = pool.pool_2d(view, (2, 2), ignore_border=True)
    convolved = T.nnet.conv2d(view, kern)
    outputs = [pooled, convolved, arignote.grad(convolved.sum(), data)]
    got_pool, got_conv, got_grad = arignote.function([], outputs)()
    value = data.get_value()[1:]
    blocks = value[:, :, :6, :4].reshape(2, 2, 3, 2, 2, 2)
    assert_matches(got_pool, blocks.max(axis=(3, 5)))
    case = CASES[0]._replace(img=value.shape, kern=kern.shape)
    assert_matches(got_conv, reference_conv(case, value, kern))
    expected = np.zeros((3, 2, 6, 5))
    expected[1:] = reference_grad_inputs(case, kern, np.ones(got_conv.shape))
    assert_matches(got_grad, expected)


def test_batch_norm_gradient_verifies_on_the_device(device):
    rng = np.random.default_rng(8)
    xv, gv, bv = rng.standard_normal((4, 3, 2, 2)), rng.standard_normal(3), rng.standard_normal(3)
    verify_grad(lambda x, g, b: bn.batch_normalization_train(x, g, b, "spatial")[0], [xv, gv, bv], n_tests=1)
    mv, vv = rng.standard_normal(3), rng.random(3) + 0.5
    verify_grad(lambda x, g, b, m, v: bn.batch_normalization_test(x, g, b, m, v, "spatial"),
                [xv, gv, bv, mv, vv], n_tests=1)
    verify_grad(lambda x, g, b, m, s: bn.batch_normalization(x, g, b, m, s),
                [xv.reshape(16, 3), gv, bv, mv, vv], n_tests=1)


def test_activation_gradients_verify_on_the_device(device):
    """Every activation of tensor.nnet at once: one random projection of their joined
    outputs, so a wrong gradient in any of them shows."""
    v = np.array([-3.1, -0.7, -0.2, 0.3, 0.9, 2.6])  # away from the kinks
    verify_grad(lambda x: T.concatenate([fn(x) for fn, _ in ACTIVATIONS.values()]), [v], n_tests=1)


def test_neighbours_stay_on_the_cpu_with_a_reason(device):
    x = T.tensor4("x")
    f = arignote.function([x], T.nnet.neighbours.images2neibs(x, (2, 2)))
    text = arignote.explain(f, file=open("/dev/null", "w"))
    if device != "cpu":
        assert "no GPU kernel for Images2Neibs" in text
    assert run([x], T.nnet.neighbours.images2neibs(x, (2, 2)), np.ones((1, 1, 2, 2))).shape == (1, 4)


class _HostCudnn:
    """cuDNN's three calls computed on the host (cross-correlations), recording each call."""

    def __init__(self):
        self.calls = []

    def __call__(self, kind, out, a, b, pads, stride, dilation, groups):
        self.calls.append(kind)
        a, b = np.asarray(a), np.asarray(b)
        if kind == "forward":
            result = im2col.forward(a, b, pads, stride, dilation, groups, False, out.shape[2:])
        elif kind == "weights":
            result = im2col.grad_weights(a, b, out.shape[2:], pads, stride, dilation, groups, False)
        else:
            result = im2col.grad_inputs(a, b, out.shape[2:], pads, stride, dilation, groups, False)
        out.context.copy_into(out, to_gpu(out.context, np.ascontiguousarray(result, out.dtype)))


def test_cudnn_is_called_with_flipped_filters_and_symmetric_pads(opencl, monkeypatch):
    """The plumbing of the cuDNN path (flips, padding, groups), with cuDNN stood in for
    on the host: the results must be the plain kernels' and the CPU's."""
    device = get_context(None).device
    stand_in = _HostCudnn()
    monkeypatch.setattr(device, "conv", stand_in, raising=False)
    for case, used in ((CASES[12], True), (CASES[7], False)):  # symmetric pads; asymmetric ones
        img, kern, top = values(case, "float32", seed=9)
        x, w, g = T.ftensor4("x"), T.ftensor4("w"), T.ftensor4("g")
        y = _conv(x, w, case)
        gx, gw = arignote.grad(None, [x, w], known_grads={y: g})
        stand_in.calls.clear()
        out, dx, dw = arignote.function([x, w, g], [y, gx, gw])(img, kern, top)
        assert sorted(stand_in.calls) == (["forward", "inputs", "weights"] if used else [])
        assert_matches(out, reference_conv(case, img, kern).astype("float32"), 1e-4)
        assert_matches(dx, reference_grad_inputs(case, kern, top).astype("float32"), 1e-4)
        with arignote.config.change_flags(device="cpu"):
            cpu = arignote.function([x, w, g], gw)(img, kern, top)
        assert_matches(dw, cpu, 1e-4)
    assert ops_conv.GpuCorrMM.__name__.startswith("Gpu")


def test_unshared_stays_on_the_host_and_corrmm_is_lowered(device):
    """Unshared convolution has no device kernel: it stays on the CPU with its reason and
    computes the CPU's values; CorrMM (Theano's name of the abstract op) is lowered."""
    from arignote.tensor.nnet import corr
    from tests.tensor.nnet.test_unshared_conv import CASES as UNSHARED, reference_forward
    case = UNSHARED[3]  # groups, full padding, strides
    rng = np.random.default_rng(9)
    img, kern = rng.standard_normal(case.img).astype("float32"), rng.standard_normal(case.kern()).astype("float32")
    x, w = T.ftensor4("x"), T.tensor("float32", (False,) * 6, name="w")
    f = arignote.function([x, w], T.nnet.conv2d(x, w, **case.op_args()))
    assert_matches(f(img, kern), reference_forward(case, img, kern).astype("float32"), 1e-4)
    if device != "cpu":
        assert "unshared (locally connected) convolution has no GPU kernel" in arignote.explain(
            f, file=open("/dev/null", "w"))
    w4 = T.ftensor4("w4")
    img4, kern4, _ = values(CONV, "float32", seed=7)
    g = arignote.function([x, w4], corr.CorrMM(CONV.border_mode, CONV.subsample, CONV.dilation,
                                                num_groups=CONV.groups)(x, w4))
    assert_matches(g(img4, kern4), reference_conv(CONV, img4, kern4).astype("float32"), 1e-4)
    if device != "cpu":
        assert "GpuCorrMM" in _gpu_ops(g)
