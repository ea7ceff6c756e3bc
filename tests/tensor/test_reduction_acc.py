"""Accumulator dtypes of sum, prod and mean (Theano's table: float32 sums in float64, small
ints in int64/uint64, float16 in float32, complex64 in complex128), rounded once to the
output dtype, on the native kernels and on numpy's path (``cxx=''``) alike."""
from __future__ import annotations

import io

import numpy as np
import pytest

from arignote import config, function, printing, tensor as T
from arignote.backends.cpu import native
from arignote.tensor.fused_reduce import ElemwiseReduce
from arignote.tensor.gemm import SumOfSquares
from arignote.tensor.reduction import THEANO_ACC

# input dtype -> (sum's output dtype, accumulator): Theano 1.0's, as real Theano prints them.
TABLE = {"bool": ("int64", "int64"), "int8": ("int64", "int64"), "int16": ("int64", "int64"),
         "int32": ("int64", "int64"), "int64": ("int64", "int64"), "uint8": ("uint64", "uint64"),
         "uint16": ("uint64", "uint64"), "uint32": ("uint64", "uint64"),
         "uint64": ("uint64", "uint64"), "float16": ("float16", "float32"),
         "float32": ("float32", "float64"), "float64": ("float64", "float64"),
         "complex64": ("complex64", "complex128"), "complex128": ("complex128", "complex128")}

PATHS = ["native", "numpy"]


def compiled(path: str, inputs, outputs):
    """``function(inputs, outputs)`` on the native kernels or on numpy's path."""
    if path == "native" and not native.available():
        pytest.skip("no working C compiler")
    flags = {"native_build": "wait"} if path == "native" else {"cxx": ""}
    with config.change_flags(**flags):
        return function(inputs, outputs)


def sample(dtype: str, shape: tuple) -> np.ndarray:
    rng = np.random.default_rng(7)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(dtype)  # int8 sums overflow int8: acc matters
    v = rng.uniform(0.5, 1.5, shape)
    return (v + 1j * v[::-1] if dtype.startswith("complex") else v).astype(dtype)


def test_the_table_is_theanos():
    assert THEANO_ACC == {k: acc for k, (_, acc) in TABLE.items() if k != acc}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", list(TABLE))
def test_every_dtype_accumulates_by_the_table(path, dtype):
    out_dtype, acc = TABLE[dtype]
    x = T.matrix("x", dtype=dtype)
    outs = [x.sum(), x.sum(axis=0), x.sum(axis=1, keepdims=True), x.prod(axis=1)]
    for out in outs[:2] + outs[3:]:
        assert (out.dtype, out.owner.op.acc_dtype) == (out_dtype, acc)
    assert f"acc_dtype={acc}" in str(outs[0].owner.op) and f"acc_dtype='{acc}'" in str(outs[3].owner.op)
    v = sample(dtype, (300, 7)) if dtype != "float16" else np.ones((4100, 3), "float16")
    want = [v.sum(dtype=acc), v.sum(axis=0, dtype=acc), v.sum(axis=1, dtype=acc, keepdims=True),
            v.prod(axis=1, dtype=acc)]
    for g, w in zip(compiled(path, [x], outs)(v), want):
        w = np.asarray(w).astype(out_dtype)
        assert g.dtype == out_dtype
        if dtype.startswith(("float", "complex")):
            np.testing.assert_allclose(g, w, rtol=1e-6 if out_dtype != "float16" else 1e-3)
        else:
            np.testing.assert_array_equal(g, w)


def test_float16_sums_in_float32():
    """4100 ones: float16 counting stops at 2048; the float32 accumulator reaches 4100
    (4100 rounds to float16's 4100)."""
    x = T.vector("x", dtype="float16")
    assert float(compiled("numpy", [x], x.sum())(np.ones(4100, "float16"))) == 4100


@pytest.mark.parametrize("path", PATHS)
def test_a_float32_vector_sum_accumulates_in_float64(path):
    """Measured on the old code: 10**7 times 0.1 summed to 1010791.9 (1% off) on the native
    kernel; 2**22 of them miss by ~0.1% there. In float64 the sum is right to float32's last
    bit; ``1e8 + 1 - 1e8`` is 0 in float32 on every path, 1 in float64."""
    x = T.fvector("x")
    f = compiled(path, [x], x.sum())
    v = np.full(2 ** 22, 0.1, "float32")
    assert f(v) == np.float32(v.sum(dtype="float64"))
    assert f(np.array([1e8, 1, -1e8], "float32")) == 1


@pytest.mark.parametrize("path", PATHS)
def test_a_kept_last_axis_accumulates_in_float64(path):
    """``X.sum(axis=0)``: the native kernel accumulates rows into memory (now a double
    buffer), numpy's strided reduction row by row; float32 there counted ones only to 2**24
    and drifts on 0.1 (4% over 2**20 rows)."""
    X = T.fmatrix("X")
    outs = [X.sum(axis=0), X.sum(axis=0, keepdims=True), X.mean(axis=0)]
    f = compiled(path, [X], outs)
    v = np.full((2 ** 20, 3), 0.1, "float32")
    total = np.float32(v[:, 0].astype("float64").sum())
    s, kept, m = f(v)
    assert s.dtype == "float32" and kept.shape == (1, 3)
    np.testing.assert_array_equal(s, np.full(3, total))
    np.testing.assert_array_equal(kept, np.full((1, 3), total))
    np.testing.assert_allclose(m, np.full(3, 0.1), rtol=1e-7)
    cancel = np.array([[1e8, 1, 3], [1, 1e8, 4], [-1e8, -1e8, -7]], "float32")
    np.testing.assert_array_equal(f(cancel)[0], [1, 1, 0])


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), (0, 2), 2])
def test_every_axis_and_layout_rounds_once(path, axis):
    """Sums of a 3-d float32 over every axis choice, C and strided layouts, keepdims: the
    float64 sum rounded to float32, to float64's error beside the 1e8s (a float32
    accumulator misses by float32's: whole units)."""
    x = T.ftensor3("x")
    f = compiled(path, [x], [x.sum(axis=axis), x.sum(axis=axis, keepdims=True), x.mean(axis=axis)])
    base = np.full((4, 5, 6), 0.1, "float32")
    base[:, :, 0] = 1e8
    base[:, :, 1] = -1e8
    base[0, :, 2] = 1e8
    base[1, :, 2] = -1e8
    for v in (base, np.asfortranarray(base), np.repeat(base, 2, axis=-1)[..., ::2]):
        ref = v.astype("float64")
        got_sum, got_kept, got_mean = f(v)
        want = ref.sum(axis=axis).astype("float32")
        np.testing.assert_allclose(got_sum, want, rtol=1e-6, atol=1e-5)
        np.testing.assert_allclose(got_kept, ref.sum(axis=axis, keepdims=True).astype("float32"),
                                   rtol=1e-6, atol=1e-5)
        np.testing.assert_allclose(got_mean, ref.mean(axis=axis).astype("float32"), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("path", PATHS)
def test_fused_reductions_accumulate_in_float64(path):
    """sum(exp(x)), ((x - y) ** 2).sum(axis), (x * y).sum(axis=0), sum(x ** 2) (SumOfSquares):
    the map in float32, the sum in float64."""
    x = T.fvector("x")
    X, Y = T.fmatrix("X"), T.fmatrix("Y")
    outs = [T.exp(x).sum(), ((X - Y) ** 2).sum(axis=1), (X * Y).sum(axis=0), (x ** 2).sum(),
            T.sqr(X).sum(axis=0)]
    f = compiled(path, [x, X, Y], outs)
    kinds = {type(n.op) for n in f.maker.fgraph.toposort()}
    assert SumOfSquares in kinds
    if path == "native":
        assert ElemwiseReduce in kinds
    sqr_nodes = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, SumOfSquares)]
    assert all(n.op.acc_dtype == "float64" for n in sqr_nodes)
    d = T.dvector("d")  # in its own dtype: BLAS's dot, as before
    assert [n.op for n in compiled(path, [d], (d ** 2).sum()).maker.fgraph.toposort()] == [SumOfSquares((0,))]
    n = 2 ** 21
    v = np.full(n, np.float32(np.log(np.float32(0.1))), "float32")
    a = np.full((2, n), 0.4, "float32")
    b = np.full((2, n), 0.1, "float32")
    tall_a, tall_b = np.ascontiguousarray(a.T[: n // 2]), np.ascontiguousarray(b.T[: n // 2])
    got = f(v, a, b)
    ref_v, ref_a, ref_b = (w.astype("float64") for w in (v, a, b))
    wants = [np.exp(v).astype("float64").sum(), ((a - b).astype("float64") ** 2).sum(axis=1),
             (ref_a * ref_b).sum(axis=0), (ref_v ** 2).sum(), (ref_a ** 2).sum(axis=0)]
    for g, w in zip(got, wants):
        np.testing.assert_allclose(g, np.asarray(w).astype("float32"), rtol=2e-7)
    got_tall = compiled(path, [X, Y], [(X * Y).sum(axis=0), T.sqr(X).sum(axis=0)])(tall_a, tall_b)
    np.testing.assert_allclose(got_tall[0], (tall_a.astype("float64") * tall_b).sum(axis=0).astype("float32"),
                               rtol=2e-7)
    np.testing.assert_allclose(got_tall[1], (tall_a.astype("float64") ** 2).sum(axis=0).astype("float32"),
                               rtol=2e-7)


@pytest.mark.parametrize("path", PATHS)
def test_mean_var_and_norm_of_float32(path):
    x = T.fvector("x")
    f = compiled(path, [x], [x.mean(), T.var(x), T.std(x), x.norm(2), x.norm(1)])
    v = np.full(2 ** 22, 0.1, "float32")
    v[::2] = 0.3
    ref = v.astype("float64")
    wants = [ref.mean(), ref.var(), ref.std(), np.sqrt((ref ** 2).sum()), np.abs(ref).sum()]
    for g, w in zip(f(v), wants):
        assert g.dtype == "float32"
        np.testing.assert_allclose(g, np.float32(w), rtol=1e-6)


@pytest.mark.parametrize("path", PATHS)
def test_an_explicit_accumulator_is_honoured(path):
    """acc_dtype='float32' asks for float32 accumulation (Theano allows it): the sum of
    1e8, 1 and -1e8 is then 0; dtype='float64' of a float32 sum is precise and float64."""
    x = T.fvector("x")
    cancel = np.array([1e8, 1, -1e8], "float32")
    f = compiled(path, [x], [x.sum(acc_dtype="float32"), x.sum(dtype="float64"),
                             x.sum(dtype="float16")])
    assert [o.dtype for o in f.maker.fgraph.outputs] == ["float32", "float64", "float16"]
    lossy, wide, half = f(cancel)
    assert (lossy, wide, half) == (0, 1, 1)
    X = T.fmatrix("X")  # rows into memory, in a float64 buffer, to a float16 output C lacks
    g = compiled(path, [X], [X.sum(axis=0, dtype="float16"), X.sum(axis=0, acc_dtype="float32")])
    half, lossy = g(cancel.reshape(3, 1))
    assert half.dtype == "float16" and (half, lossy) == ([1], [0])
    i = T.ivector("i")
    g = compiled(path, [i], [i.sum(dtype="int32"), i.sum(acc_dtype="float64")])
    big = np.full(3, 2 ** 30, "int32")
    narrow, as_float = g(np.array([2 ** 30, 2 ** 30, -2 ** 30], "int32"))
    assert narrow.dtype == "int32" and narrow == 2 ** 30  # int64 inside: no overflow on the way
    assert as_float.dtype == "int64" and as_float == 2 ** 30
    assert g(big)[0] == np.int32(np.int64(3 * 2 ** 30).astype("int32"))


@pytest.mark.parametrize("in_dtype, acc", [("float64", "float32"), ("int32", "int8"),
                                           ("float32", "float16"), ("complex128", "complex64"),
                                           ("int64", "int32"), ("uint32", "uint16")])
def test_a_lossy_accumulator_is_a_type_error_saying_how_to_fix_it(in_dtype, acc):
    v = T.vector("v", dtype=in_dtype)
    for build in (lambda: v.sum(acc_dtype=acc), lambda: v.prod(acc_dtype=acc),
                  lambda: v.mean(acc_dtype=acc)):
        with pytest.raises(TypeError) as info:
            build()
        text = str(info.value)
        assert "'v'" in text and "would lose precision" in text and "leave acc_dtype unset" in text
        assert f"dtype={acc!r} instead" in text and f"cast 'v' to {acc}" in text


@pytest.mark.parametrize("in_dtype", ["bool", "int8", "uint32", "int64"])
def test_a_discrete_input_may_take_a_float_accumulator(in_dtype):
    v = T.vector("v", dtype=in_dtype)
    assert v.sum(acc_dtype="float16").owner.op.acc_dtype == "float16"
    assert v.sum(acc_dtype="complex64").owner.op.acc_dtype == "complex64"


def test_printed_as_theano_prints_it():
    """Real Theano 1.0.5: ``Sum{acc_dtype=float64}``, ``Sum{axis=[0], acc_dtype=float64}``,
    ``Prod{axis=(0,), dtype='float32', acc_dtype='float64'}``, ``Reduce{maximum}{0}``,
    ``Any{1}``, ``All``; Theano's own CAReduce of add prints ``Reduce{add}{0}``."""
    from arignote import scalar
    from arignote.tensor.elemwise import CAReduce, Sum
    x, X = T.fvector("x"), T.fmatrix("X")
    out = io.StringIO()
    printing.debugprint([x.sum(), X.sum(axis=0)], file=out)
    assert out.getvalue().splitlines()[0].startswith("Sum{acc_dtype=float64} [id A]")
    assert "Sum{axis=[0], acc_dtype=float64} [id" in out.getvalue()
    assert str(X.sum(axis=1).owner.op) == "Sum{axis=[1], acc_dtype=float64}"
    assert str(T.imatrix().sum(axis=1).owner.op) == "Sum{axis=[1], acc_dtype=int64}"
    assert str(X.prod(axis=0).owner.op) == "Prod{axis=(0,), dtype='float32', acc_dtype='float64'}"
    node = X.prod().owner
    assert node.op.node_text(node) == "Prod{axis=None, dtype='float32', acc_dtype='float64'}"
    assert str(X.max(axis=0).owner.op) == "Reduce{maximum}{0}"
    assert str(X.any(axis=1).owner.op) == "Any{1}"
    node = X.all().owner
    assert node.op.node_text(node) == "All"
    assert str(CAReduce(scalar.add, axis=(0,))(X).owner.op) == "Reduce{add}{0}"
    assert str(Sum()) == "Sum{acc_dtype=None}" and str(CAReduce(scalar.add)) == "Reduce{add}"


def test_reductions_pickle_with_their_accumulator():
    import pickle
    X = T.fmatrix("X")
    for out in (X.sum(axis=0), X.prod(), X.mean(axis=1)):
        node = out.owner if out.owner.op.__class__.__name__ != "Elemwise" else out.owner.inputs[0].owner
        op = pickle.loads(pickle.dumps(node.op))
        assert op == node.op and op.acc_dtype == "float64"
    op = pickle.loads(pickle.dumps(SumOfSquares((0,), "float64")))
    assert op == SumOfSquares((0,), "float64") and op != SumOfSquares((0,))
    old = SumOfSquares.__new__(SumOfSquares)
    old.__dict__.update(axis=(0,))  # pickled before SumOfSquares had an accumulator
    assert old.acc_dtype is None
