"""conv2d/conv3d, their two gradient ops, conv2d_transpose and the shape helpers, against
references written here with scipy.signal (correlate for the forward pass and the
filter gradient, convolve for the input gradient), over one table of cases: border
modes (valid, full, half, int, pair, asymmetric pairs), strides, dilations, groups,
filter_flip, odd sizes, batch 1 and more, float32 and float64. Gradients, second
derivatives and Rop by finite differences (verify_grad)."""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import pytest
from scipy.signal import convolve, correlate

import arignote
from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.nnet import abstract_conv as ac
from tests.utils import assert_matches, check_infer_shape, run


class Case(NamedTuple):
    name: str
    img: tuple
    kern: tuple
    border_mode: object = "valid"
    subsample: tuple = (1, 1)
    dilation: tuple = (1, 1)
    groups: int = 1
    flip: bool = True

    @property
    def nd(self) -> int:
        return len(self.img) - 2


CASES = [
    Case("valid", (2, 3, 7, 6), (4, 3, 3, 2)),
    Case("valid-batch1-odd", (1, 1, 9, 5), (2, 1, 5, 3)),
    Case("full", (2, 2, 5, 6), (3, 2, 3, 4), "full"),
    Case("half", (2, 3, 6, 7), (2, 3, 3, 5), "half"),
    Case("half-even-kernel", (1, 2, 6, 6), (2, 2, 4, 2), "half"),
    Case("int", (2, 2, 5, 5), (3, 2, 3, 3), 2),
    Case("pair", (1, 2, 5, 6), (2, 2, 3, 3), (1, 2)),
    Case("asymmetric", (2, 1, 6, 5), (2, 1, 3, 2), ((1, 2), (0, 3))),
    Case("stride", (2, 2, 9, 8), (3, 2, 3, 3), "valid", (2, 3)),
    Case("stride-full", (1, 2, 7, 6), (2, 2, 3, 2), "full", (2, 2)),
    Case("dilation", (2, 2, 9, 9), (2, 2, 3, 2), "valid", (1, 1), (2, 3)),
    Case("dilation-half-stride", (1, 2, 10, 9), (3, 2, 3, 3), "half", (2, 1), (2, 2)),
    Case("groups", (2, 4, 6, 6), (6, 2, 3, 3), "valid", (1, 1), (1, 1), 2),
    Case("groups-pad-stride", (1, 6, 7, 6), (3, 2, 2, 3), 1, (2, 1), (1, 1), 3),
    Case("correlation", (2, 3, 6, 5), (2, 3, 3, 3), "valid", flip=False),
    Case("correlation-everything", (2, 4, 9, 8), (4, 2, 3, 2), ((2, 1), 1), (2, 2), (2, 1), 2, False),
    Case("3d-valid", (2, 2, 5, 4, 5), (3, 2, 2, 3, 2), "valid", (1, 1, 1), (1, 1, 1)),
    Case("3d-half-stride", (1, 2, 6, 5, 5), (2, 2, 3, 3, 3), "half", (2, 1, 2), (1, 1, 1)),
    Case("3d-dilation-groups", (1, 4, 6, 6, 5), (2, 2, 2, 2, 2), 1, (1, 1, 1), (2, 1, 2), 2, False),
]


# ---------------------------------------------------------------- the references
def _pads(case: Case) -> list[tuple[int, int]]:
    dilated = [(k - 1) * d + 1 for k, d in zip(case.kern[2:], case.dilation)]
    mode = case.border_mode
    if mode == "valid":
        return [(0, 0)] * case.nd
    if mode == "full":
        return [(k - 1, k - 1) for k in dilated]
    if mode == "half":
        return [(k // 2, k // 2) for k in dilated]
    if isinstance(mode, int):
        return [(mode, mode)] * case.nd
    return [(m, m) if isinstance(m, int) else m for m in mode]


def _dilate(kern: np.ndarray, dilation: tuple) -> np.ndarray:
    out = np.zeros(kern.shape[:2] + tuple((k - 1) * d + 1 for k, d in zip(kern.shape[2:], dilation)))
    out[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in dilation)] = kern
    return out


def _flip(kern: np.ndarray, nd: int) -> np.ndarray:
    return kern[(Ellipsis,) + (slice(None, None, -1),) * nd]


def reference_conv(case: Case, img: np.ndarray, kern: np.ndarray) -> np.ndarray:
    """Each (image, filter) pair: the sum over the group's channels of scipy's correlation."""
    pads = _pads(case)
    x = np.pad(img.astype(np.float64), [(0, 0), (0, 0)] + pads)
    k = _dilate(_flip(kern, case.nd) if case.flip else kern, case.dilation)
    per_in, per_out = img.shape[1] // case.groups, kern.shape[0] // case.groups
    stride = (slice(None, None, s) for s in case.subsample)
    result = np.array([[sum(correlate(x[b, (f // per_out) * per_in + c], k[f, c], mode="valid")
                            for c in range(per_in)) for f in range(kern.shape[0])]
                       for b in range(img.shape[0])])
    return result[(slice(None), slice(None)) + tuple(stride)]


def _upsampled(top: np.ndarray, case: Case) -> np.ndarray:
    out = np.zeros(top.shape[:2] + tuple((n - 1) * s + 1 for n, s in zip(top.shape[2:], case.subsample)))
    out[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in case.subsample)] = top
    return out


def reference_grad_weights(case: Case, img: np.ndarray, top: np.ndarray) -> np.ndarray:
    """dW[f, c, j] = sum over images and outputs of top * padded input at o * stride + j * dilation."""
    x = np.pad(img.astype(np.float64), [(0, 0), (0, 0)] + _pads(case))
    up = _upsampled(top, case)
    per_in, per_out = img.shape[1] // case.groups, top.shape[1] // case.groups
    dilated = [(k - 1) * d + 1 for k, d in zip(case.kern[2:], case.dilation)]
    grad = np.array([[sum(correlate(x[b, (f // per_out) * per_in + c], up[b, f], mode="valid")
                          for b in range(img.shape[0])) for c in range(per_in)]
                     for f in range(top.shape[1])])
    grad = grad[(slice(None), slice(None)) + tuple(slice(0, n, d) for n, d in zip(dilated, case.dilation))]
    return _flip(grad, case.nd) if case.flip else grad


def reference_grad_inputs(case: Case, kern: np.ndarray, top: np.ndarray) -> np.ndarray:
    """The padded input's gradient is scipy's full convolution of the upsampled output
    gradient with the dilated filter, cropped by the padding."""
    pads = _pads(case)
    k = _dilate(_flip(kern, case.nd) if case.flip else kern, case.dilation)
    up = _upsampled(top, case)
    per_in, per_out = case.img[1] // case.groups, top.shape[1] // case.groups
    full = np.zeros((case.img[0], case.img[1]) + tuple(n + lo + hi for n, (lo, hi) in zip(case.img[2:], pads)))
    for b in range(case.img[0]):
        for f in range(top.shape[1]):
            for c in range(per_in):
                part = convolve(up[b, f], k[f, c], mode="full")
                full[(b, (f // per_out) * per_in + c) + tuple(slice(0, n) for n in part.shape)] += part
    return full[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(case.img[2:], pads))]


# ------------------------------------------------------------------ the graphs
def _ops(case: Case):
    kw = dict(border_mode=case.border_mode, subsample=case.subsample, filter_flip=case.flip,
              filter_dilation=case.dilation, num_groups=case.groups)
    return ({**kw, "unshared": False} if case.nd == 2 else kw)


def conv(case: Case, x, w, **shapes):
    if case.nd == 2:
        return T.nnet.conv2d(x, w, **shapes, **_ops(case))
    return T.nnet.conv3d(x, w, **shapes, **_ops(case))


def out_shape(case: Case) -> tuple:
    return ac.get_conv_output_shape(case.img, case.kern, ac.BaseAbstractConv(
        case.nd, border_mode=case.border_mode).border_mode, case.subsample, case.dilation)


def tensor_of(ndim: int, dtype: str, name: str):
    return T.tensor(dtype, (False,) * ndim, name=name)


def values(case: Case, dtype: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(case.img).astype(dtype), rng.standard_normal(case.kern).astype(dtype),
            rng.standard_normal(out_shape(case)).astype(dtype))


# ---------------------------------------------------------------------- tests
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_conv_and_both_gradients_match_scipy(case, dtype):
    img, kern, top = values(case, dtype)
    x, w, g = (tensor_of(len(s), dtype, n) for s, n in ((case.img, "x"), (case.kern, "w"), (img.shape, "g")))
    y = conv(case, x, w)
    assert y.dtype == dtype and y.ndim == case.nd + 2
    rtol = 1e-4 if dtype == "float32" else None
    assert_matches(run([x, w], y, img, kern), reference_conv(case, img, kern).astype(dtype), rtol)
    g = tensor_of(case.nd + 2, dtype, "g")
    grad_x, grad_w = arignote.grad(None, [x, w], known_grads={y: g})
    result = run([x, w, g], [grad_x, grad_w], img, kern, top)
    assert_matches(result[0], reference_grad_inputs(case, kern, top).astype(dtype), rtol)
    assert_matches(result[1], reference_grad_weights(case, img, top).astype(dtype), rtol)


@pytest.mark.parametrize("case", CASES[::3], ids=lambda c: c.name)
def test_shapes_are_inferred_without_running(case):
    img, kern, top = values(case, "float64")
    x, w, g = (tensor_of(len(s), "float64", n) for s, n in ((case.img, "x"), (case.kern, "w"), (top.shape, "g")))
    y = conv(case, x, w)
    grad_x, grad_w = arignote.grad(None, [x, w], known_grads={y: g})
    for out in (y, grad_x, grad_w):
        check_infer_shape([x, w, g], out, [img, kern, top])
    given = conv(case, x, w, input_shape=case.img, filter_shape=case.kern)
    shape = arignote.function([x, w], given.shape)
    assert not any(isinstance(n.op, ac.BaseAbstractConv) for n in shape.maker.fgraph.toposort())
    assert tuple(shape(img, kern)) == out_shape(case)


@pytest.mark.parametrize("case", CASES[1::3] + [CASES[14]], ids=lambda c: c.name)
def test_verify_grad_through_conv(case):
    img, kern, _ = values(case, "float64")
    verify_grad(lambda x, w: conv(case, x, w), [img, kern], n_tests=1)


@pytest.mark.parametrize("case", [CASES[5], CASES[11], CASES[15], CASES[17]], ids=lambda c: c.name)
def test_verify_grad_of_the_gradient_ops(case):
    """The gradient ops' own gradients (second derivatives of a convolution)."""
    img, kern, top = values(case, "float64", seed=1)
    grad_ops = (ac.conv2d_grad_wrt_inputs, ac.conv2d_grad_wrt_weights) if case.nd == 2 else \
        (ac.conv3d_grad_wrt_inputs, ac.conv3d_grad_wrt_weights)
    kw = _ops(case)
    verify_grad(lambda w, g: grad_ops[0](g, w, case.img, **kw), [kern, top], n_tests=1)
    verify_grad(lambda x, g: grad_ops[1](x, g, case.kern, **kw), [img, top], n_tests=1)


def test_second_derivative_and_rop():
    case = CASES[8]
    img, kern, _ = values(case, "float64", seed=2)
    verify_grad(lambda x, w: arignote.grad((conv(case, x, w) ** 2).sum(), w), [img, kern], n_tests=1)
    x, w = tensor_of(4, "float64", "x"), tensor_of(4, "float64", "w")
    vx, vw = tensor_of(4, "float64", "vx"), tensor_of(4, "float64", "vw")
    y = conv(case, x, w)
    rop = arignote.Rop(y, [x, w], [vx, vw])
    rng = np.random.default_rng(3)
    dx, dw = rng.standard_normal(img.shape), rng.standard_normal(kern.shape)
    # The convolution is bilinear: its directional derivative is conv(vx, w) + conv(x, vw).
    expected = reference_conv(case, dx, kern) + reference_conv(case, img, dw)
    assert_matches(run([x, w, vx, vw], rop, img, kern, dx, dw), expected)


@pytest.mark.parametrize("case", [CASES[0], CASES[7], CASES[9], CASES[14]], ids=lambda c: c.name)
def test_conv2d_transpose_is_the_input_gradient(case):
    img, kern, top = values(case, "float64")
    g, w = tensor_of(4, "float64", "g"), tensor_of(4, "float64", "w")
    out = T.nnet.conv2d_transpose(g, w, output_shape=case.img, border_mode=case.border_mode,
                                  input_dilation=case.subsample, filter_flip=case.flip,
                                  filter_dilation=case.dilation, num_groups=case.groups)
    assert_matches(run([g, w], out, top, kern), reference_grad_inputs(case, kern, top))


def test_symbolic_output_shape_of_the_transpose():
    case = CASES[8]
    _, kern, top = values(case, "float64")
    g, w, rows, cols = T.tensor4("g"), T.tensor4("w"), T.lscalar("rows"), T.lscalar("cols")
    out = ac.conv2d_grad_wrt_inputs(g, w, (None, None, rows, cols), subsample=case.subsample)
    assert_matches(run([g, w, rows, cols], out, top, kern, *case.img[2:]),
                   reference_grad_inputs(case, kern, top))


def test_causal_conv1d_sees_only_the_past():
    rng = np.random.default_rng(4)
    x, w = T.tensor3("x"), T.tensor3("w")
    xv, wv = rng.standard_normal((2, 3, 9)), rng.standard_normal((4, 3, 3))
    causal = ac.causal_conv1d(x, w, (4, 3, 3), filter_dilation=2)
    out = run([x, w], causal, xv, wv)
    padded = np.pad(xv, [(0, 0), (0, 0), (4, 0)])  # dilation * (k - 1) on the left only
    dilated = np.zeros((4, 3, 5))
    dilated[:, :, ::2] = wv[:, :, ::-1]  # flipped (a convolution), then dilated
    expected = np.array([[sum(correlate(padded[b, c], dilated[f, c], mode="valid") for c in range(3))
                          for f in range(4)] for b in range(2)])
    assert_matches(out, expected)
    changed = xv.copy()
    changed[:, :, 5:] += 1  # the future of t = 4 changes; the outputs up to t = 4 do not
    assert_matches(run([x, w], causal, changed, wv)[..., :5], out[..., :5])


@pytest.mark.parametrize("nd", [2, 3])
def test_separable_convolution_is_depthwise_then_pointwise(nd):
    rng = np.random.default_rng(5)
    spatial, kernel = (6, 5, 5)[:nd], (3, 2, 2)[:nd]
    img = rng.standard_normal((2, 3) + spatial)
    depthwise, pointwise = rng.standard_normal((6, 1) + kernel), rng.standard_normal((4, 6) + (1,) * nd)
    first = Case("depthwise", img.shape, depthwise.shape, "half", (2,) * nd, (1,) * nd, 3)
    middle = reference_conv(first, img, depthwise)
    expected = reference_conv(Case("pointwise", middle.shape, pointwise.shape, "valid", (1,) * nd, (1,) * nd),
                              middle, pointwise)
    x, d, p = (tensor_of(nd + 2, "float64", n) for n in ("x", "d", "p"))
    fn = ac.separable_conv2d if nd == 2 else ac.separable_conv3d
    out = fn(x, d, p, 3, img.shape, depthwise.shape, pointwise.shape, "half", (2,) * nd)
    assert out.owner.op.imshp == middle.shape
    assert_matches(run([x, d, p], out, img, depthwise, pointwise), expected)
    verify_grad(lambda *a: fn(*a, 3, img.shape, depthwise.shape, pointwise.shape, "half", (2,) * nd),
                [img, depthwise, pointwise], n_tests=1)
    if nd == 2:
        assert T.nnet.separable_conv2d is ac.separable_conv2d


# ------------------------------------------------------------------ shape helpers
def test_shape_helpers_match_computed_shapes():
    for case in CASES:
        mode = ac.BaseAbstractConv(case.nd, border_mode=case.border_mode).border_mode
        shape = ac.get_conv_output_shape(case.img, case.kern, mode, case.subsample, case.dilation)
        assert shape == reference_conv(case, *values(case, "float64")[:2]).shape
        inputs = ac.get_conv_gradinputs_shape(case.kern, shape, mode, case.subsample, case.dilation,
                                              case.groups)
        weights = ac.get_conv_gradweights_shape(case.img, shape, mode, case.subsample, case.dilation,
                                                case.groups)
        for got, true in ((inputs, case.img), (weights, case.kern)):
            assert all(g is None or g == t for g, t in zip(got, true)), (case.name, got, true)
        if all(s == 1 for s in case.subsample):
            assert inputs == case.img
            if mode != "half":
                assert weights == case.kern
        assert ac.check_conv_gradinputs_shape(case.img, case.kern, shape, mode, case.subsample,
                                              case.dilation)
        assert not ac.check_conv_gradinputs_shape(case.img, case.kern, shape[:2] + (99,) * case.nd,
                                                  mode, case.subsample, case.dilation)
    assert ac.get_conv_shape_1axis(None, 3, "valid", 1) is None
    assert ac.border_mode_to_pad("half", 2, (5, 4)) == ((2, 2), (2, 2))
    assert ac.border_mode_to_pad((1, (2, 3)), 2, (5, 4)) == ((1, 1), (2, 3))


def test_symbolic_shape_helpers_build_int64_graphs():
    rows = T.lscalar("rows")
    out = ac.get_conv_shape_1axis(rows, 3, "half", 2, 2)
    assert out.dtype == "int64"
    assert run([rows], out, 11) == (11 + 2 + 2 - 5) // 2 + 1


# ------------------------------------------------------------- Theano's surface
def test_conv2d_keywords_and_deprecations():
    x, w = T.tensor4("x"), T.tensor4("w")
    with pytest.warns(UserWarning, match="`image_shape` keyword argument .* renamed to `input_shape`"):
        y = T.nnet.conv2d(x, w, image_shape=(2, 3, 7, 6))
    assert y.owner.op.imshp == (2, 3, 7, 6)
    with pytest.raises(ValueError, match="should not be provided at the same time"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        T.nnet.conv2d(x, w, input_shape=(2, 3, 7, 6), image_shape=(2, 3, 7, 6))
    with pytest.warns(UserWarning, match=r"\['verbose'\] are now deprecated"):
        T.nnet.conv2d(x, w, verbose=1)
    with pytest.raises(ValueError, match="imshp_logical"):
        T.nnet.conv2d(x, w, imshp_logical=(1, 1))
    op = T.nnet.conv2d(x, w, border_mode=((1, 1), 0)).owner.op
    assert op.border_mode == (1, 0)
    assert T.nnet.conv2d(x, w, border_mode=(0, 0)).owner.op.border_mode == "valid"
    assert type(T.nnet.conv2d(x, w).owner.op).__name__ == "AbstractConv2d"
    assert T.nnet.abstract_conv2d is ac.conv2d  # Theano's name for the keyword-strict one


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(border_mode="same"), ValueError, "invalid border_mode 'same'"),
    (dict(border_mode=-1), ValueError, "non-negative"),
    (dict(border_mode=(1, 2, 3)), ValueError, "tuple of length 2"),
    (dict(subsample=(1,)), ValueError, "subsample must have 2 elements"),
    (dict(filter_dilation=(0, 1)), ValueError, "filter_dilation must have 2 elements, each a positive"),
    (dict(num_groups=0), ValueError, "num_groups must be an int greater than zero"),
    (dict(unshared=True), TypeError, "the filters .* must be a 6D tensor"),
    (dict(input_shape=(1, 2)), ValueError, "imshp must have 4 entries"),
])
def test_bad_parameters_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        T.nnet.conv2d(T.tensor4("x"), T.tensor4("w"), **kwargs)


def test_errors_name_the_variables():
    x, w = T.tensor4("images"), T.tensor4("filters")
    with pytest.raises(TypeError, match="the input 'images' must be a 4D tensor"):
        T.nnet.conv2d(T.matrix("images"), w)
    f = arignote.function([x, w], T.nnet.conv2d(x, w))
    with pytest.raises(ValueError, match="'images' has 3 channels and the filters 'filters'"):
        f(np.zeros((1, 3, 5, 5)), np.zeros((2, 2, 3, 3)))
    with pytest.raises(ValueError, match="smaller than the filters 'filters'"):
        f(np.zeros((1, 2, 2, 5)), np.zeros((2, 2, 3, 3)))
    g = arignote.function([x, w], T.nnet.conv2d(x, w, input_shape=(1, 2, 5, 5)))
    with pytest.raises(ValueError, match=r"'images' has shape \(2, 2, 5, 5\), but input_shape"):
        g(np.zeros((2, 2, 5, 5)), np.zeros((2, 2, 3, 3)))
    top = T.tensor4("top")
    h = arignote.function([w, top], ac.conv2d_grad_wrt_inputs(top, w, (None, None, 9, 9)))
    with pytest.raises(ValueError, match="invalid input_shape for gradInputs"):
        h(np.zeros((2, 2, 3, 3)), np.zeros((1, 2, 5, 5)))


def test_dtypes_upcast_and_integers_convolve_as_floats():
    x, w = T.ftensor4("x"), T.dtensor4("w")
    assert T.nnet.conv2d(x, w).dtype == "float64"
    assert T.nnet.conv2d(x, T.ftensor4("v")).dtype == "float32"
    xi = T.tensor("int16", (False,) * 4, name="xi")
    y = T.nnet.conv2d(xi, T.ftensor4("v"))
    assert y.dtype == "float32"
    img = np.arange(2 * 1 * 4 * 4, dtype="int16").reshape(2, 1, 4, 4)
    kern = np.ones((1, 1, 2, 2), "float32")
    case = Case("ints", img.shape, kern.shape)
    v = T.ftensor4("v")
    assert_matches(run([xi, v], T.nnet.conv2d(xi, v), img, kern),
                   reference_conv(case, img, kern).astype("float32"))


def test_two_threads_convolve_at_once():
    """The scratch buffers are per thread: concurrent calls (of two functions: calls of one
    function take turns) do not mix their temporaries; numpy releases the GIL in the copies
    and products, so the calls interleave."""
    import threading
    case = Case("threads", (8, 4, 30, 30), (6, 2, 5, 5), 1, (1, 1), (1, 1), 2)
    x, w, g = (tensor_of(4, "float64", n) for n in ("x", "w", "g"))
    y = conv(case, x, w)
    outputs = [y] + arignote.grad(None, [x, w], known_grads={y: g})
    functions = [arignote.function([x, w, g], outputs) for _ in range(2)]
    inputs = [values(case, "float64", seed) for seed in (10, 11)]
    expected = [f(*i) for f, i in zip(functions, inputs)]  # one thread at a time
    assert_matches(expected[0][0], reference_conv(case, *inputs[0][:2]))
    failures = []

    def work(n):
        for _ in range(10):
            if not all(np.array_equal(a, b) for a, b in zip(functions[n](*inputs[n]), expected[n])):
                failures.append(n)
    threads = [threading.Thread(target=work, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_ops_pickle_and_compare_by_parameters():
    import pickle
    op = ac.AbstractConv2d_gradInputs((None, 3, 5, 5), None, ((1, 2), 0), (2, 1), False, (1, 2), 1)
    again = pickle.loads(pickle.dumps(op))
    assert again == op and hash(again) == hash(op)
    assert op != ac.AbstractConv2d_gradInputs((None, 3, 5, 5), None, ((1, 2), 0), (2, 1), True, (1, 2), 1)
    assert isinstance(op, ac.AbstractConv_gradInputs)


def test_group_errors_name_the_variables_in_every_direction():
    x, w, top = T.tensor4("images"), T.tensor4("filters"), T.tensor4("top")
    forward = arignote.function([x, w], T.nnet.conv2d(x, w, num_groups=2))
    with pytest.raises(ValueError, match=r"'images' has 3 channels and the filters 'filters' have "
                                         r"shape \(4, 1, 2, 2\): with num_groups=2 .*divisible by 2"):
        forward(np.zeros((1, 3, 4, 4)), np.zeros((4, 1, 2, 2)))
    with pytest.raises(ValueError, match=r"'filters' have shape \(3, 2, 2, 2\)"):
        forward(np.zeros((1, 4, 4, 4)), np.zeros((3, 2, 2, 2)))
    weights = arignote.function([x, top], ac.conv2d_grad_wrt_weights(x, top, (4, 2, 2, 2), num_groups=2))
    with pytest.raises(ValueError, match="'images' has 3 channels and 'top' 4: both must be divisible "
                                         "by num_groups=2"):
        weights(np.zeros((1, 3, 4, 4)), np.zeros((1, 4, 3, 3)))
    inputs = arignote.function([w, top], ac.conv2d_grad_wrt_inputs(top, w, (1, 4, 4, 4), num_groups=2))
    with pytest.raises(ValueError, match=r"'filters' of shape \(3, 2, 2, 2\): their number must be "
                                         r"divisible by num_groups=2"):
        inputs(np.zeros((3, 2, 2, 2)), np.zeros((1, 3, 3, 3)))


@pytest.mark.parametrize("img, kern", [((0, 1, 6, 6), (1, 1, 2, 2)), ((1, 0, 6, 6), (1, 0, 2, 2)),
                                       ((1, 1, 6, 6), (0, 1, 2, 2)), ((0, 2, 5, 4, 4), (2, 1, 2, 2, 2))],
                         ids=["no-image", "no-channel", "no-filter", "3d-no-image-groups"])
def test_empty_batches_channels_and_filters(img, kern):
    """Zero images, channels or filters give empty results and gradients that are empty or
    zero (sums over no image, channel or filter), as Theano's own tests expect."""
    nd = len(img) - 2
    case = Case("empty", img, kern, "valid", (1,) * nd, (1,) * nd, 2 if nd == 3 else 1)
    x, w, g = (tensor_of(len(s), "float64", n) for s, n in ((img, "x"), (kern, "w"), (img, "g")))
    y = conv(case, x, w)
    grad_x, grad_w = arignote.grad(None, [x, w], known_grads={y: g})
    top = np.ones(out_shape(case))
    out, gx, gw = run([x, w, g], [y, grad_x, grad_w], np.ones(img), np.ones(kern), top)
    assert out.shape == out_shape(case)
    assert_matches(gx, np.zeros(img))
    assert_matches(gw, np.zeros(kern))
