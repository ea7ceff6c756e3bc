"""Native reductions (with their elementwise producers fused in), softmax, log_softmax,
their gradients and the softmax cross-entropy, against numpy, in several layouts."""
from __future__ import annotations

import numpy as np
import pytest

import arignote
from arignote import config, function, tensor as T
from arignote.backends.cpu import native
from arignote.tensor.fused_reduce import ElemwiseReduce
from tests.utils import NUMPY_FP_WARNINGS_ONLY

pytestmark = [*NUMPY_FP_WARNINGS_ONLY,
              pytest.mark.skipif(not native.available(), reason="no working C compiler")]


def native_count(f) -> int:
    """Thunks whose native kernel is built (after a call: kernels are built when first needed)."""
    return sum(getattr(t, "__globals__", {}).get("K", native.refuse) is not native.refuse
               for t in f._thunks)


def layouts(a: np.ndarray):
    yield a
    yield np.asfortranarray(a)
    wide = np.repeat(a, 2, axis=-1)
    yield wide[..., ::2]
    yield a[:0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), 2])
def test_reductions_and_fused_producers(dtype, axis):
    x = T.tensor3("x", dtype=dtype)
    y = T.tensor3("y", dtype=dtype)
    numeric = dtype != "bool"
    outs = {"sum": T.sum(x, axis), "max": T.max(x, axis), "min": T.min(x, axis),
            "any": T.any(T.gt(x, y), axis), "all": T.all(T.neq(x, 0), axis)}
    if numeric:
        outs.update({"sum of squares": T.sum(T.sqr(x - y), axis), "prod": T.prod(x * 1, axis),
                     "max abs": T.max(abs(x - y), axis)})
    if dtype.startswith("float"):
        outs["sum exp"] = T.sum(T.exp(x), axis)
    with config.change_flags(native_min_size=0):
        f = function([x, y], list(outs.values()))
    assert any(isinstance(n.op, ElemwiseReduce) for n in f.maker.fgraph.toposort())
    with config.change_flags(cxx=""):
        g = function([x, y], list(outs.values()))
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((4, 5, 6)) * 3).astype(dtype)
    b = (rng.standard_normal((4, 5, 6)) * 3).astype(dtype)
    if dtype.startswith("float"):
        a[0, 0, 0] = np.nan
    for va in layouts(a):
        vb = b[: va.shape[0]]
        if va.size == 0 and (axis is None or axis == 0 or axis == (0, 2)):
            continue  # max of nothing: an error on both paths, tested below
        for name, got, want in zip(outs, f(va, vb), g(va, vb)):
            assert native_count(f) >= len(outs) - 1
            tol = 1e-5 if dtype == "float32" else 1e-12
            assert got.dtype == want.dtype, name
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)


def test_max_of_nothing_raises_as_numpy_does():
    x = T.matrix("x")
    with config.change_flags(native_min_size=0):
        f = function([x], T.max(T.exp(x), axis=0))
    with pytest.raises(ValueError, match="undefined"):
        f(np.zeros((0, 3)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_family_and_crossentropy(dtype):
    x = T.matrix("x", dtype=dtype)
    y = T.ivector("y")
    z = T.tensor3("z", dtype=dtype)
    sm, lsm = T.nnet.softmax(x), T.nnet.log_softmax(x)
    cost = T.nnet.categorical_crossentropy(sm, y).mean()
    upstream = T.matrix("g", dtype=dtype)
    outs = [sm, lsm, T.nnet.softmax(z, axis=1), T.nnet.log_softmax(z, axis=0), cost,
            arignote.grad(cost, x), arignote.grad((sm * upstream).sum(), x),
            arignote.grad((lsm * upstream).sum(), x)]
    with config.change_flags(native_min_size=0):
        f = function([x, y, z, upstream], outs)
    with config.change_flags(cxx=""):
        g = function([x, y, z, upstream], outs)
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((30, 10)) * 4).astype(dtype)
    a[0, 0], a[1, :] = 1e4, -np.inf
    a[2, 3] = np.nan
    c = rng.standard_normal((3, 4, 5)).astype(dtype)
    labels = rng.integers(0, 10, 30).astype("int32")
    up = rng.standard_normal((30, 10)).astype(dtype)
    for va in (a, np.asfortranarray(a)):
        for got, want in zip(f(va, labels, c.transpose(1, 0, 2), up), g(va, labels, c.transpose(1, 0, 2), up)):
            tol = 1e-5 if dtype == "float32" else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert native_count(f) >= 6


def test_a_fused_reduction_broadcasts_by_the_types_only():
    """The native sum of x * m stretches a dimension only where the type says broadcastable:
    a (1, 3) value of a matrix is refused, naming it, as the numpy path refuses it; a row
    stretches."""
    m = T.fmatrix("m")
    mv = np.arange(6, dtype="float32").reshape(2, 3)
    x = T.fmatrix("x")
    f = function([x, m], (x * m).sum())
    assert any(isinstance(n.op, ElemwiseReduce) for n in f.maker.fgraph.toposort())
    f(mv, mv)
    assert native_count(f) == 1
    with pytest.raises(ValueError, match="'x' has shape \\(1, 3\\).*not broadcastable"):
        f(np.ones((1, 3), "float32"), mv)
    r = T.frow("r")
    g = function([r, m], (r * m).sum())
    rv = np.array([[1, 2, 3]], "float32")
    np.testing.assert_allclose(g(rv, mv), (rv * mv).sum(), rtol=1e-6)
    assert native_count(g) == 1


def test_softmax_sums_in_double():
    """The native softmax sums exp(x - max) in double, as Theano's C softmax did: over a
    row of 2**20 logits (0 and 0.3) the float32 sum was 7e-4 off, and every output with it;
    in double each output is float32's nearest."""
    x = T.fmatrix("x")
    f = function([x], [T.nnet.softmax(x), T.nnet.log_softmax(x)])
    row = np.zeros((1, 2 ** 20), "float32")
    row[0, ::3] = 0.3
    sm, lsm = f(row)
    assert native_count(f) == 2
    ref = row.astype("float64")
    e = np.exp(ref - ref.max())
    np.testing.assert_allclose(sm, (e / e.sum()).astype("float32"), rtol=1e-6)
    np.testing.assert_allclose(lsm, (ref - ref.max() - np.log(e.sum())).astype("float32"), rtol=1e-6)
