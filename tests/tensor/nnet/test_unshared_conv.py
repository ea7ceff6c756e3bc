"""Unshared (locally connected) 2d convolution, ``unshared=True``: filters of shape
(F, out rows, out cols, C / num_groups, kr, kc), one kernel per output position.
The forward op and both gradient ops are compared with explicit loops over the
output positions written here, over border modes, strides, dilations, groups,
filter_flip and dtypes; the gradients by finite differences (verify_grad)."""
from __future__ import annotations

import pickle
from typing import NamedTuple

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.nnet import abstract_conv as ac
from tests.utils import assert_matches, check_infer_shape, run


class Case(NamedTuple):
    name: str
    img: tuple
    filters: int
    ksize: tuple
    border_mode: object = "valid"
    subsample: tuple = (1, 1)
    dilation: tuple = (1, 1)
    groups: int = 1
    flip: bool = True

    def pads(self) -> list[tuple[int, int]]:
        dilated = [(k - 1) * d + 1 for k, d in zip(self.ksize, self.dilation)]
        mode = self.border_mode
        if mode == "valid":
            return [(0, 0)] * 2
        if mode == "full":
            return [(k - 1, k - 1) for k in dilated]
        if mode == "half":
            return [(k // 2, k // 2) for k in dilated]
        if isinstance(mode, int):
            return [(mode, mode)] * 2
        return [(m, m) if isinstance(m, int) else m for m in mode]

    def out(self) -> tuple[int, int]:
        return tuple((n + lo + hi - (k - 1) * d - 1) // s + 1 for n, (lo, hi), k, d, s in
                     zip(self.img[2:], self.pads(), self.ksize, self.dilation, self.subsample))

    def kern(self) -> tuple:
        return (self.filters, *self.out(), self.img[1] // self.groups, *self.ksize)

    def top(self) -> tuple:
        return (self.img[0], self.filters, *self.out())

    def op_args(self) -> dict:
        return dict(border_mode=self.border_mode, subsample=self.subsample, filter_flip=self.flip,
                    filter_dilation=self.dilation, num_groups=self.groups, unshared=True)


CASES = [
    Case("valid", (2, 2, 4, 4), 2, (3, 3)),
    Case("full-stride", (3, 2, 4, 2), 2, (4, 2), "full", (2, 2)),
    Case("groups-stride", (3, 3, 5, 3), 3, (3, 3), "valid", (2, 1), groups=3),
    Case("groups-full", (3, 4, 4, 4), 4, (4, 2), "full", (3, 2), groups=2),
    Case("half-dilation", (1, 2, 7, 6), 3, (3, 2), "half", (1, 1), (2, 2)),
    Case("asymmetric", (2, 1, 5, 5), 2, (2, 3), ((1, 0), (2, 1))),
    Case("int-pad-correlation", (2, 4, 5, 4), 2, (3, 3), 1, (2, 1), (1, 1), 2, False),
]


# ---------------------------------------------------------------- the references
def _windows(case: Case):
    """(i, j, input rows, input cols) of each output position's window in the padded input."""
    (s0, s1), (d0, d1), (kr, kc) = case.subsample, case.dilation, case.ksize
    for i, j in np.ndindex(*case.out()):
        yield i, j, slice(i * s0, i * s0 + (kr - 1) * d0 + 1, d0), slice(j * s1, j * s1 + (kc - 1) * d1 + 1, d1)


def _group_channels(case: Case, f: int) -> slice:
    per_in, per_out = case.img[1] // case.groups, case.filters // case.groups
    g = f // per_out
    return slice(g * per_in, (g + 1) * per_in)


def _flipped(case: Case, kern: np.ndarray) -> np.ndarray:
    return kern[..., ::-1, ::-1] if case.flip else kern


def reference_forward(case: Case, img: np.ndarray, kern: np.ndarray) -> np.ndarray:
    x = np.pad(img.astype(np.float64), [(0, 0), (0, 0)] + case.pads())
    k = _flipped(case, kern.astype(np.float64))
    out = np.zeros(case.top())
    for b in range(case.img[0]):
        for f in range(case.filters):
            channels = _group_channels(case, f)
            for i, j, rows, cols in _windows(case):
                out[b, f, i, j] = np.sum(x[b, channels, rows, cols] * k[f, i, j])
    return out


def reference_grad_weights(case: Case, img: np.ndarray, top: np.ndarray) -> np.ndarray:
    x = np.pad(img.astype(np.float64), [(0, 0), (0, 0)] + case.pads())
    grad = np.zeros(case.kern())
    for b in range(case.img[0]):
        for f in range(case.filters):
            channels = _group_channels(case, f)
            for i, j, rows, cols in _windows(case):
                grad[f, i, j] += top[b, f, i, j] * x[b, channels, rows, cols]
    return _flipped(case, grad)


def reference_grad_inputs(case: Case, kern: np.ndarray, top: np.ndarray) -> np.ndarray:
    pads = case.pads()
    k = _flipped(case, kern.astype(np.float64))
    full = np.zeros(case.img[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(case.img[2:], pads)))
    for b in range(case.img[0]):
        for f in range(case.filters):
            channels = _group_channels(case, f)
            for i, j, rows, cols in _windows(case):
                full[b, channels, rows, cols] += top[b, f, i, j] * k[f, i, j]
    return full[:, :, pads[0][0]:pads[0][0] + case.img[2], pads[1][0]:pads[1][0] + case.img[3]]


# ---------------------------------------------------------------------- tests
def tensor6(dtype: str, name: str):
    return T.tensor(dtype, (False,) * 6, name=name)


def values(case: Case, dtype: str):
    rng = np.random.default_rng(3)
    return (rng.standard_normal(case.img).astype(dtype), rng.standard_normal(case.kern()).astype(dtype),
            rng.standard_normal(case.top()).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_forward_and_both_gradient_ops_match_loops(case, dtype):
    img, kern, top = values(case, dtype)
    x, w, g = T.tensor4(dtype=dtype, name="x"), tensor6(dtype, "w"), T.tensor4(dtype=dtype, name="g")
    rtol = 2e-4 if dtype == "float32" else None
    forward = T.nnet.conv2d(x, w, **case.op_args())
    assert forward.dtype == dtype
    assert_matches(run([x, w], forward, img, kern), reference_forward(case, img, kern).astype(dtype), rtol)
    weights = ac.conv2d_grad_wrt_weights(x, g, case.kern(), **case.op_args())
    assert weights.ndim == 6
    assert_matches(run([x, g], weights, img, top), reference_grad_weights(case, img, top).astype(dtype), rtol)
    inputs = ac.conv2d_grad_wrt_inputs(g, w, case.img, **case.op_args())
    assert_matches(run([w, g], inputs, kern, top), reference_grad_inputs(case, kern, top).astype(dtype), rtol)
    # grad() of the forward op builds the two gradient ops
    dx, dw = arignote.grad(None, [x, w], known_grads={forward: g})
    got = run([x, w, g], [dx, dw], img, kern, top)
    assert_matches(got[0], reference_grad_inputs(case, kern, top).astype(dtype), rtol)
    assert_matches(got[1], reference_grad_weights(case, img, top).astype(dtype), rtol)


@pytest.mark.parametrize("case", CASES[:5], ids=lambda c: c.name)
def test_verify_grad_wrt_inputs_and_weights(case):
    img, kern, top = values(case, "float64")
    op = ac.AbstractConv2d(**case.op_args())
    verify_grad(op, [img, kern], rng=np.random.RandomState(1))
    grad_w = ac.AbstractConv2d_gradWeights(**case.op_args())
    verify_grad(lambda x, t: grad_w(x, t, case.ksize), [img, top], rng=np.random.RandomState(2))
    grad_i = ac.AbstractConv2d_gradInputs(**case.op_args())
    verify_grad(lambda k, t: grad_i(k, t, case.img[2:]), [kern, top], rng=np.random.RandomState(3))


def test_shapes_are_inferred():
    case = CASES[3]
    assert ac.get_conv_gradinputs_shape(case.kern(), case.top(), case.border_mode, case.subsample,
                                        num_groups=case.groups)[:2] == case.img[:2]
    assert ac.get_conv_output_shape(case.img, case.kern(), case.border_mode, case.subsample) == case.top()
    x, w, g = T.tensor4("x"), tensor6("float64", "w"), T.tensor4("g")
    img, kern, top = values(case, "float64")
    check_infer_shape([x, w], [T.nnet.conv2d(x, w, **case.op_args())], [img, kern])
    grad_w = ac.AbstractConv2d_gradWeights(**case.op_args())(x, g, case.ksize)
    check_infer_shape([x, g], [grad_w], [img, top])
    grad_i = ac.AbstractConv2d_gradInputs(**case.op_args())(w, g, case.img[2:])
    check_infer_shape([w, g], [grad_i], [kern, top])


def test_bad_input_is_refused_naming_the_variables():
    x, w = T.tensor4("images"), tensor6("float64", "local_filters")
    with pytest.raises(TypeError, match="the filters 'local_filters' must be a 6D tensor"):
        T.nnet.conv2d(x, T.tensor4("local_filters"), unshared=True)
    with pytest.raises(NotImplementedError, match="2D only"):
        ac.AbstractConv3d(unshared=True)
    with pytest.raises(ValueError, match="kshp must have 6 entries"):
        ac.AbstractConv2d(kshp=(2, 2, 3, 3), unshared=True)
    f = arignote.function([x, w], T.nnet.conv2d(x, w, unshared=True))
    with pytest.raises(ValueError, match=r"unshared filters 'local_filters' have shape \(2, 3, 3, 2, 2, 2\), "
                                         r"so \(3, 3\) output positions, but the output has spatial "
                                         r"shape \(4, 4\)"):
        f(np.zeros((1, 2, 5, 5)), np.zeros((2, 3, 3, 2, 2, 2)))
    g = arignote.function([x, w], T.nnet.conv2d(x, w, unshared=True, num_groups=2))
    with pytest.raises(ValueError, match="'images' has 3 channels .* num_groups=2"):
        g(np.zeros((1, 3, 5, 5)), np.zeros((2, 4, 4, 1, 2, 2)))


def test_unshared_is_a_parameter_of_the_op():
    op = ac.AbstractConv2d(border_mode="full", num_groups=2, unshared=True)
    again = pickle.loads(pickle.dumps(op))
    assert again == op and hash(again) == hash(op)
    assert op != ac.AbstractConv2d(border_mode="full", num_groups=2)
    assert "unshared" in str(op)


def test_empty_batch_and_filters():
    x, w, g = T.tensor4("x"), tensor6("float64", "w"), T.tensor4("g")
    y = T.nnet.conv2d(x, w, unshared=True)
    grad_x, grad_w = arignote.grad(None, [x, w], known_grads={y: g})
    for img, kern in [((0, 2, 4, 4), (3, 3, 3, 2, 2, 2)), ((1, 2, 4, 4), (0, 3, 3, 2, 2, 2))]:
        top = np.ones((img[0], kern[0], 3, 3))
        out, gx, gw = run([x, w, g], [y, grad_x, grad_w], np.ones(img), np.ones(kern), top)
        assert out.shape == top.shape
        assert_matches(gx, np.zeros(img))
        assert_matches(gw, np.zeros(kern))
