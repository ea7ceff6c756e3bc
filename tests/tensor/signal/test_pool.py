"""signal.pool against explicit loops over windows written here: every mode, ignore_border
both ways, strides smaller and larger than the window, padding, odd sizes, 2d and 3d,
extra leading axes, float32/float64, batch 1 and more; the max-pool gradient (ties get
the gradient, as in Theano), the average gradients, the gradient of the max-pool gradient,
Rop through max pooling, shapes inferred, Theano's keywords and warnings."""
from __future__ import annotations

import itertools
import warnings
from typing import NamedTuple

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.signal import pool
from tests.utils import assert_matches, check_infer_shape, run


class Case(NamedTuple):
    name: str
    shape: tuple
    ws: tuple
    ignore_border: bool = True
    stride: tuple | None = None
    pad: tuple | None = None


CASES = [
    Case("2x2", (2, 3, 6, 8), (2, 2)),
    Case("odd-keep-border", (1, 2, 5, 7), (2, 3), False),
    Case("odd-ignore-border", (2, 1, 5, 7), (2, 3), True),
    Case("overlap", (2, 2, 7, 6), (3, 3), True, (1, 2)),
    Case("overlap-keep-border", (1, 2, 7, 6), (3, 2), False, (2, 1)),
    Case("gaps", (2, 1, 9, 8), (2, 2), False, (3, 3)),
    Case("pad", (2, 2, 5, 6), (3, 2), True, (2, 1), (1, 1)),
    Case("pad-overlap", (1, 2, 6, 5), (3, 3), True, (1, 1), (2, 1)),
    Case("batch1-3d-input", (1, 5, 7), (2, 2), False),
    Case("5d-leading", (2, 1, 2, 5, 4), (2, 2), True, (1, 1)),
]
CASES_3D = [
    Case("3d", (2, 2, 4, 5, 6), (2, 2, 3)),
    Case("3d-keep-border-pad", (1, 1, 5, 4, 5), (3, 2, 2), True, (2, 1, 2), (1, 1, 1)),
    Case("3d-overlap", (1, 2, 5, 5, 4), (2, 3, 2), False, (1, 2, 1)),
]
MODES = ["max", "sum", "average_inc_pad", "average_exc_pad"]


# ------------------------------------------------------------ the references
def out_length(n: int, ws: int, stride: int, pad: int, ignore_border: bool) -> int:
    r = n + 2 * pad
    if ignore_border:
        return max(0, (r - ws) // stride + 1)
    if stride >= ws:
        return (r - 1) // stride + 1
    return max(0, (r - 1 - ws + stride) // stride) + 1


def windows(case: Case):
    """For each output position: the window's slice in the padded input, and its real part."""
    nd = len(case.ws)
    stride = case.stride or case.ws
    pad = case.pad or (0,) * nd
    lengths = [out_length(case.shape[-nd + i], case.ws[i], stride[i], pad[i], case.ignore_border)
               for i in range(nd)]
    for position in itertools.product(*map(range, lengths)):
        whole, real = [], []
        for i, j in enumerate(position):
            r = case.shape[-nd + i] + 2 * pad[i]
            start, end = j * stride[i], min(j * stride[i] + case.ws[i], r)
            whole.append(slice(start, end))
            real.append(slice(max(start, pad[i]), min(end, r - pad[i])))
        yield position, tuple(whole), tuple(real)


def padded(case: Case, x: np.ndarray) -> np.ndarray:
    nd = len(case.ws)
    pad = case.pad or (0,) * nd
    return np.pad(x, [(0, 0)] * (x.ndim - nd) + [(p, p) for p in pad])


def out_shape(case: Case) -> tuple:
    nd = len(case.ws)
    positions = [p for p, _, _ in windows(case)]
    return case.shape[:-nd] + tuple(max(p[i] for p in positions) + 1 for i in range(nd))


def reference_pool(case: Case, x: np.ndarray, mode: str) -> np.ndarray:
    xp = padded(case, x)
    out = np.zeros(out_shape(case), x.dtype)
    for lead in np.ndindex(*x.shape[:-len(case.ws)]):
        for position, whole, real in windows(case):
            region = xp[lead + real]
            if mode == "max":
                out[lead + position] = region.max()
            elif mode == "sum":
                out[lead + position] = region.sum()
            elif mode == "average_inc_pad":
                out[lead + position] = xp[lead + whole].sum() / xp[lead + whole].size
            else:
                out[lead + position] = region.mean()
    return out


def reference_max_grad(case: Case, x: np.ndarray, gz: np.ndarray) -> np.ndarray:
    """Every element equal to its window's maximum gets the window's gradient."""
    xp = padded(case, x)
    gx = np.zeros_like(xp)
    for lead in np.ndindex(*x.shape[:-len(case.ws)]):
        for position, _, real in windows(case):
            region = xp[lead + real]
            gx[lead + real] += np.where(region == region.max(), gz[lead + position], 0)
    nd = len(case.ws)
    pad = case.pad or (0,) * nd
    return gx[(Ellipsis,) + tuple(slice(p, p + n) for p, n in zip(pad, x.shape[-nd:]))]


def reference_max_rop(case: Case, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The directional derivative: ``v`` at each window's (unique) maximum."""
    xp, vp = padded(case, x), padded(case, v)
    out = np.zeros(out_shape(case))
    for lead in np.ndindex(*x.shape[:-len(case.ws)]):
        for position, _, real in windows(case):
            region = xp[lead + real]
            out[lead + position] = vp[lead + real][np.unravel_index(region.argmax(), region.shape)]
    return out


def op_for(case: Case, mode: str) -> pool.Pool:
    return pool.Pool(case.ignore_border, mode, len(case.ws))


def pooled(case: Case, x, mode: str):
    nd = len(case.ws)
    return op_for(case, mode)(x, case.ws, case.stride, case.pad or (0,) * nd)


def sample(case: Case, dtype: str, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(case.shape).astype(dtype)


def var(shape: tuple, dtype: str, name: str):
    return T.tensor(dtype, (False,) * len(shape), name=name)


# ---------------------------------------------------------------------- tests
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES + CASES_3D, ids=lambda c: c.name)
def test_pool_matches_explicit_loops(case, mode, dtype):
    xv = sample(case, dtype)
    x = var(case.shape, dtype, "x")
    y = pooled(case, x, mode)
    assert y.dtype == dtype
    assert_matches(run([x], y, xv), reference_pool(case, xv, mode), 1e-5 if dtype == "float32" else None)


@pytest.mark.parametrize("case", CASES + CASES_3D, ids=lambda c: c.name)
def test_pool_2d_and_pool_3d_take_the_table_by_keyword(case):
    """Theano's entry points, every mode, with ws/ignore_border/stride/pad as keywords."""
    nd = len(case.ws)
    xv = sample(case, "float64", 11)
    x = var(case.shape, "float64", "x")
    entry = pool.pool_2d if nd == 2 else pool.pool_3d
    outs = [entry(x, ws=case.ws, ignore_border=case.ignore_border, stride=case.stride,
                  pad=case.pad or (0,) * nd, mode=mode) for mode in MODES]
    for mode, got in zip(MODES, run([x], outs, xv)):
        assert_matches(got, reference_pool(case, xv, mode))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES + CASES_3D, ids=lambda c: c.name)
def test_max_pool_gradient_matches_explicit_loops(case, dtype):
    xv = sample(case, dtype, 1)
    x, gz = var(case.shape, dtype, "x"), var(out_shape(case), dtype, "gz")
    gzv = np.random.default_rng(2).standard_normal(out_shape(case)).astype(dtype)
    y = pooled(case, x, "max")
    grad = arignote.grad(None, x, known_grads={y: gz})
    assert grad.dtype == dtype
    assert_matches(run([x, gz], grad, xv, gzv), reference_max_grad(case, xv, gzv))


def test_max_pool_gradient_goes_to_every_tied_maximum():
    case = Case("ties", (1, 1, 4, 4), (2, 2), True, (1, 1))
    xv = np.array([[[[1, 1, 0, 2], [0, 1, 2, 2], [3, 0, 0, 0], [3, 3, 0, 0]]]], dtype="float64")
    x = T.tensor4("x")
    grad = arignote.grad(pooled(case, x, "max").sum(), x)
    assert_matches(run([x], grad, xv), reference_max_grad(case, xv, np.ones(out_shape(case))))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES[1::2] + CASES_3D[:2], ids=lambda c: c.name)
def test_verify_grad_of_pooling(case, mode):
    verify_grad(lambda x: pooled(case, x, mode), [sample(case, "float64", 3)], n_tests=1)


@pytest.mark.parametrize("mode", MODES[1:])
@pytest.mark.parametrize("case", [CASES[3], CASES[6], CASES_3D[1]], ids=lambda c: c.name)
def test_verify_grad_of_the_average_gradient(case, mode):
    rng = np.random.default_rng(4)
    nd = len(case.ws)

    def grad_of(x, gz):
        return pool.AveragePoolGrad(case.ignore_border, mode, nd)(x, gz, case.ws, case.stride,
                                                                  case.pad or (0,) * nd)
    verify_grad(grad_of, [sample(case, "float64", 5), rng.standard_normal(out_shape(case))], n_tests=1)


@pytest.mark.parametrize("case", [CASES[0], CASES[4], CASES[7], CASES_3D[2]], ids=lambda c: c.name)
def test_gradient_of_the_max_pool_gradient(case):
    """verify_grad through MaxPoolGrad (w.r.t. x: zero, as maxout follows x; w.r.t. gz: its
    DownsampleFactorMaxGradGrad), and through that op in turn."""
    nd = len(case.ws)
    params = (case.ws, case.stride, case.pad or (0,) * nd)
    rng = np.random.default_rng(6)
    xv, gzv, ggv = sample(case, "float64", 7), rng.standard_normal(out_shape(case)), rng.standard_normal(case.shape)

    def max_grad(x, gz):
        return pool.MaxPoolGrad(case.ignore_border, nd)(x, pooled(case, x, "max"), gz, *params)

    def grad_grad(x, ggx):
        return pool.DownsampleFactorMaxGradGrad(case.ignore_border, "max", nd)(
            x, pooled(case, x, "max"), ggx, *params)
    verify_grad(max_grad, [xv, gzv], n_tests=1)
    verify_grad(grad_grad, [xv, ggv], n_tests=1)
    x, gg = var(case.shape, "float64", "x"), var(case.shape, "float64", "gg")
    # DownsampleFactorMaxGradGrad is the adjoint of MaxPoolGrad in gz: <MPG(gz), gg> = <gz, DFMGG(gg)>.
    value = run([x, gg], grad_grad(x, gg), xv, ggv)
    assert np.isclose((reference_max_grad(case, xv, gzv) * ggv).sum(), (gzv * value).sum())


@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[6], CASES_3D[0]], ids=lambda c: c.name)
def test_rop_through_max_pooling(case):
    xv, v = sample(case, "float64", 8), sample(case, "float64", 9)
    x, ev = var(case.shape, "float64", "x"), var(case.shape, "float64", "v")
    rop = arignote.Rop(pooled(case, x, "max"), x, ev)
    assert_matches(run([x, ev], rop, xv, v), reference_max_rop(case, xv, v))
    avg = arignote.Rop(pooled(case, x, "average_exc_pad"), x, ev)  # linear: its own value at v
    assert_matches(run([x, ev], avg, xv, v), reference_pool(case, v, "average_exc_pad"))


@pytest.mark.parametrize("case", CASES[::2] + CASES_3D[1:2], ids=lambda c: c.name)
def test_shapes_are_inferred(case):
    xv = sample(case, "float64")
    x = var(case.shape, "float64", "x")
    y = pooled(case, x, "max")
    check_infer_shape([x], y, [xv])
    check_infer_shape([x], arignote.grad(y.sum(), x), [xv])
    assert tuple(pool.Pool.out_shape(case.shape, case.ws, case.ignore_border, case.stride,
                                     case.pad, len(case.ws))) == out_shape(case)


def test_symbolic_window_stride_and_pad():
    case = CASES[6]
    xv = sample(case, "float64")
    x, ws, st, pad = T.tensor4("x"), T.lvector("ws"), T.lvector("st"), T.lvector("pad")
    y = pool.pool_2d(x, ws, ignore_border=True, stride=st, pad=pad, mode="average_exc_pad")
    values = [xv, np.array(case.ws), np.array(case.stride), np.array(case.pad)]
    assert_matches(run([x, ws, st, pad], y, *values), reference_pool(case, xv, "average_exc_pad"))
    check_infer_shape([x, ws, st, pad], y, values)
    keep = pool.pool_2d(x, ws, ignore_border=False, stride=st)
    shape = arignote.function([x, ws, st], keep.shape)
    assert tuple(shape(xv, np.array([3, 2]), np.array([1, 3]))) == \
        out_shape(Case("", xv.shape, (3, 2), False, (1, 3)))


def test_max_pool_2d_same_size():
    rng = np.random.default_rng(10)
    xv = rng.standard_normal((2, 3, 5, 6))
    x = T.tensor4("x")
    out = run([x], pool.max_pool_2d_same_size(x, (2, 2)), xv)
    expected = np.zeros_like(xv)
    for b, c, i, j in itertools.product(range(2), range(3), range(2), range(3)):
        patch = xv[b, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
        expected[b, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2] = np.where(patch == patch.max(), patch, 0)
    assert_matches(out, expected)
    odd = rng.standard_normal((1, 2, 7, 5)).astype("float32")  # the ragged border is dropped
    f = T.ftensor4("f")
    got = run([f], pool.max_pool_2d_same_size(f, (3, 2)), odd)
    assert got.dtype == "float32" and got.shape == odd.shape
    keep = np.zeros_like(odd)
    for c, i, j in itertools.product(range(2), range(2), range(2)):
        patch = odd[0, c, 3 * i:3 * i + 3, 2 * j:2 * j + 2]
        keep[0, c, 3 * i:3 * i + 3, 2 * j:2 * j + 2] = np.where(patch == patch.max(), patch, 0)
    assert_matches(got, keep)
    verify_grad(lambda v: pool.max_pool_2d_same_size(v, (2, 3)), [xv], n_tests=1)


def test_theano_keywords_and_warnings():
    x = T.tensor4("x")
    with pytest.warns(UserWarning, match="ignore_border default value changed to True"):
        y = pool.pool_2d(x, (2, 2))
    assert y.owner.op.ignore_border is False
    for old, new in (("ds", "ws"), ("st", "stride"), ("padding", "pad")):
        kwargs = {"ws": (2, 2), old: (1, 1)} if old != "ds" else {old: (2, 2)}
        with pytest.warns(UserWarning, match=f"DEPRECATION: the '{old}' parameter .* '{new}'"):
            pool.pool_2d(x, ignore_border=True, **kwargs)
        with pytest.raises(ValueError, match=f"both '{new}' and '{old}'"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pool.pool_2d(x, ignore_border=True, **{**kwargs, new: (2, 2)} if old != "ds" else
                         {"ws": (2, 2), "ds": (2, 2)})
    with pytest.raises(ValueError, match="You must provide a tuple value for the window size"):
        pool.pool_2d(x, ignore_border=True)
    with pytest.raises(NotImplementedError, match="padding works only with ignore_border=True"):
        pool.pool_2d(x, (3, 3), ignore_border=False, pad=(1, 1))
    with pytest.raises(NotImplementedError, match="padding must be smaller"):
        pool.pool_2d(x, (2, 2), ignore_border=True, pad=(2, 0))
    with pytest.raises(ValueError, match="Pool mode parameter only support"):
        pool.pool_2d(x, (2, 2), ignore_border=True, mode="median")
    with pytest.raises(NotImplementedError, match="pool_3d requires a dimension >= 3"):
        pool.pool_3d(T.matrix("m"), (2, 2, 2), ignore_border=True)
    assert pool.Pool(True, "max_deterministic").mode == "max"
    # Theano's constructors take openmp (a switch for its C loops); the ops are the same.
    assert pool.Pool(True, "sum", 2, openmp=False) == pool.Pool(True, "sum", 2)
    assert pool.MaxPoolGrad(True, 3, openmp=True) == pool.MaxPoolGrad(True, 3)
    assert pool.DownsampleFactorMaxGradGrad(True, "max", 2, openmp=None).ndim == 2


def test_run_time_errors_name_the_problem():
    x, ws = T.tensor4("x"), T.lvector("ws")
    f = arignote.function([x, ws], pool.pool_2d(x, ws, ignore_border=True))
    with pytest.raises(ValueError, match="window sizes and strides must be >= 1"):
        f(np.zeros((1, 1, 4, 4)), np.array([0, 2]))
    with pytest.raises(ValueError, match="must each have 2 entries"):
        f(np.zeros((1, 1, 4, 4)), np.array([2, 2, 2]))


def test_integer_pooling_and_empty_outputs():
    xv = np.arange(2 * 5 * 5, dtype="int32").reshape(2, 5, 5)
    case = Case("ints", xv.shape, (2, 2), False)
    x = T.tensor("int32", (False,) * 3, name="x")
    for mode in ("max", "sum"):
        assert_matches(run([x], pooled(case, x, mode), xv), reference_pool(case, xv, mode))
    small = Case("tiny", (1, 1, 1, 3), (2, 2), True)
    t = T.tensor4("t")
    assert run([t], pooled(small, t, "max"), np.zeros(small.shape)).shape == (1, 1, 0, 1)


@pytest.mark.parametrize("mode", MODES)
def test_the_gradient_of_a_pooling_with_no_window_is_zero(mode):
    """A window larger than the (padded) input and ignore_border: no output, a zero gradient
    (it crashed in the gradient's accumulation before), and the second derivative too."""
    x = T.vector("x")
    y = pool.Pool(ndim=1, ignore_border=True, mode=mode)(x, (10,), (5,), (3,))
    gx = arignote.grad(y.sum(), x)
    out, grad = arignote.function([x], [y, gx])(np.array([1.0, 2.0]))
    assert out.shape == (0,)
    np.testing.assert_array_equal(grad, [0.0, 0.0])
    if mode == "max":
        ggz = arignote.grad((gx * x).sum(), x, disconnected_inputs="ignore")
        np.testing.assert_array_equal(arignote.function([x], ggz)(np.array([1.0, 2.0])), [0.0, 0.0])


LARGE_PADS = [
    Case("1d-pad-as-large-as-window", (2, 10), (3,), True, (2,), (3,)),
    Case("pad-beyond-window", (1, 2, 7, 5), (3, 2), True, (3, 2), (2, 2)),
    Case("3d-pad-beyond-window", (1, 1, 6, 5, 5), (5, 3, 2), True, (3, 2, 1), (2, 2, 2)),
]


@pytest.mark.parametrize("mode", ["sum", "average_inc_pad"])
@pytest.mark.parametrize("case", LARGE_PADS, ids=lambda c: c.name)
def test_average_gradient_takes_pads_as_large_as_the_window(case, mode):
    """Theano's AveragePoolGrad accepts such pads (its gradient is then a Pool given them
    symbolically): a window inside the padding adds zeros. Checked as the adjoint of the
    reference pooling, <grad(x, gz), v> = <gz, pool(v)>, and by finite differences."""
    nd = len(case.ws)
    rng = np.random.default_rng(8)
    x, v = sample(case, "float64", 6), rng.standard_normal(case.shape)
    gz = rng.standard_normal(out_shape(case))
    xs, gs = var(case.shape, "float64", "x"), var(gz.shape, "float64", "gz")
    op = pool.AveragePoolGrad(True, mode, nd)
    grad = run([xs, gs], op(xs, gs, case.ws, case.stride, case.pad), x, gz)
    np.testing.assert_allclose(np.sum(grad * v), np.sum(gz * reference_pool(case, v, mode)), rtol=1e-10)
    verify_grad(lambda a, b: op(a, b, case.ws, case.stride, case.pad), [x, gz], n_tests=1)
    pads = T.lvector("pads")  # a symbolic pad reaches Pool's perform, as in that gradient
    f = arignote.function([xs, pads], op_for(case, mode)(xs, case.ws, case.stride, pads))
    assert_matches(f(x, np.array(case.pad)), reference_pool(case, x, mode))


def test_pads_as_large_as_the_window_are_refused_where_windows_would_be_empty():
    x, pads = T.tensor4("x"), T.lvector("pads")
    with pytest.raises(NotImplementedError, match="padding must be smaller"):
        pool.Pool(True, "sum")(x, (2, 2), (1, 1), (2, 0))  # Theano's make_node refuses them
    for mode in ("max", "average_exc_pad"):
        f = arignote.function([x, pads], pool.Pool(True, mode)(x, (2, 2), (1, 1), pads))
        with pytest.raises(ValueError, match=rf"pad \(2, 0\) must be smaller than the window "
                                             rf"\(2, 2\) in mode '{mode}'"):
            f(np.zeros((1, 1, 4, 4)), np.array([2, 0]))
    gz = T.tensor4("gz")
    g = arignote.function([x, gz], pool.AveragePoolGrad(True, "average_exc_pad")(x, gz, (2, 2), (1, 1), (2, 0)))
    with pytest.raises(ValueError, match="must be smaller than the window"):
        g(np.zeros((1, 1, 4, 4)), np.zeros((1, 1, 7, 3)))
