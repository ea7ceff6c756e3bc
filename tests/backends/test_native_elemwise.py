"""The scalar op table through the native path, for every dtype C has, in every layout.

For each dtype one function computes every op that accepts it (one compiler
run), called on contiguous arrays, transposed, strided and reversed views,
broadcast rows, 0-d and empty arrays, with NaN, inf, -0.0,
overflowing and extreme integer values. The same graph on the numpy path
(``cxx=``) is the oracle: exact ops must agree bit for bit (NaN where it has
NaN, the sign of zero too); transcendental ones within ``ULP`` units in the
last place of a float64 reference (float32) or of numpy (float64), with NaN,
inf and overflow of the same kind.
"""
from __future__ import annotations

import numpy as np
import pytest

from arignote import config, function, tensor
from arignote.backends.cpu import native
from arignote.compile.mode import get_default_mode
from arignote.scalar.ops import TABLE
from arignote.tensor.elemwise import Elemwise
from tests.utils import NUMPY_FP_WARNINGS_ONLY

pytestmark = [*NUMPY_FP_WARNINGS_ONLY, pytest.mark.skipif(not native.available(), reason="no working C compiler")]

ULP = 4
TRANSCENDENTAL = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
                  "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
                  "arctanh", "sigmoid", "softplus", "erf", "erfc", "gammaln", "gamma", "pow", "arctan2"}
# Measured exceptions: op -> (dtype -> largest error in ulp); see docs/architecture.md.
EXCEPTIONS: dict[str, dict[str, float]] = {"gammaln": {"float64": 64}}
NO_KERNEL = {"erfinv", "erfcinv", "psi", "tri_gamma", "chi2sf", "real", "imag", "angle", "conj", "complex",
             "complex_from_polar", "erfcx", "j0", "j1", "jv", "i0", "i1", "iv"}
DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float32", "float64"]
SHAPE = (6, 9)


def values(dtype: str, shape: tuple, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        out = rng.integers(max(info.min, -9), 10, size=shape).astype(dtype)
        flat = out.reshape(-1)
        flat[:4] = [info.min, info.max, 0, 1][: flat.size]
        return out
    finfo = np.finfo(dtype)
    out = rng.uniform(-3, 3, size=shape)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, np.nan, np.inf, -np.inf, float(finfo.max) / 4,
               -float(finfo.max) / 2, float(finfo.tiny) / 8, 80.0, -100.0, 700.0, 1e-30]
    flat = out.reshape(-1)
    flat[:len(special)] = special[: flat.size]
    return out.astype(dtype)


def accepted(dtype: str) -> list[str]:
    """The ops defined on ``dtype`` (integer pow has no kernel and refuses negative exponents)."""
    names = []
    for name, op in TABLE.items():
        if name == "pow" and dtype[0] in "biu":
            continue
        dtypes = ["bool"] + [dtype] * 2 if name == "switch" else [dtype] * op.nin
        try:
            op.output_dtype(*dtypes)
        except TypeError:
            continue
        names.append(name)
    return names


def build(dtype: str, broadcast: bool = False):
    """inputs, {op name: output} of every op accepting ``dtype``; y is a row when ``broadcast``."""
    x = tensor.matrix("x", dtype=dtype)
    y = tensor.row("y", dtype=dtype) if broadcast else tensor.matrix("y", dtype=dtype)
    z = tensor.matrix("z", dtype=dtype)
    cond = tensor.matrix("c", dtype="bool")
    args = {1: [x], 2: [x, y], 3: [x, y, z]}
    outs = {}
    for name in accepted(dtype):
        op = TABLE[name]
        outs[name] = Elemwise(op)(*([cond, x, y] if name == "switch" else args[op.nin]))
    return [x, y, z, cond], outs


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between same-dtype float arrays (0 where both NaN)."""
    ints = {4: np.int32, 8: np.int64}[a.dtype.itemsize]
    big = np.iinfo(ints).min

    def ordered(v):
        i = v.view(ints).astype(np.int64)
        return np.where(i < 0, np.int64(big) - i, i)
    dist = np.abs(ordered(a) - ordered(b)).astype(np.float64)
    return np.where(np.isnan(a) & np.isnan(b), 0, dist)


def check(name: str, got: np.ndarray, want: np.ndarray, reference: np.ndarray | None) -> float:
    """Compare one op's native result with the numpy path's; the error in ulp."""
    assert got.dtype == want.dtype and got.shape == want.shape, name
    if name == "gammaln" and got.dtype == "float64":
        # scipy's gammaln is inf below 1 / DBL_MAX (subnormals); C's lgamma gives -log(x) ~ 710.
        subnormal = np.isposinf(want) & (got > 700) & (got < 745)
        got, want = got[~subnormal], want[~subnormal]
    if got.dtype.kind != "f" or name not in TRANSCENDENTAL:
        np.testing.assert_array_equal(got, want, err_msg=name)
        if got.dtype.kind == "f":
            assert np.array_equal(np.signbit(got), np.signbit(want)), f"{name}: sign of zero"
        return 0.0
    same_kind = (np.isnan(got) == np.isnan(want)) & (np.isposinf(got) == np.isposinf(want)) \
        & (np.isneginf(got) == np.isneginf(want))
    assert same_kind.all(), f"{name}: special values differ: {got[~same_kind]} vs {want[~same_kind]}"
    oracle = want if reference is None else reference
    finite = np.isfinite(got) & np.isfinite(oracle)
    return float(ulps(got[finite], oracle[finite]).max(initial=0))


def numpy_path(inputs, outs, *arrays):
    with config.change_flags(cxx=""):
        return function(inputs, list(outs.values()), on_unused_input="ignore")(*arrays)


def layouts(dtype: str):
    """(label, arrays) for the matrix inputs x, y, z and the condition."""
    n, m = SHAPE
    base = [values(dtype, (m, n), s).T for s in (1, 2, 3)] + [values("bool", (n, m), 4)]
    yield "transposed", base
    yield "contiguous", [np.ascontiguousarray(a) for a in base]
    wide = [values(dtype, (n, 2 * m), s) for s in (5, 6, 7)] + [values("bool", (n, 2 * m), 8)]
    yield "strided", [a[:, ::2] for a in wide]
    yield "reversed", [a[::-1, ::-1] for a in base]
    yield "empty", [np.zeros((0, m), dtype)] * 3 + [np.zeros((0, m), bool)]


# ``identity(x)`` is removed by canonicalize (a copy of x, or nothing): keep it, to run its kernel.
EVERY_OP = get_default_mode().excluding("local_useless_elemwise")


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_op_natively_matches_numpy(dtype):
    inputs, outs = build(dtype)
    with config.change_flags(native_min_size=0):
        f = function(inputs, list(outs.values()), on_unused_input="ignore", mode=EVERY_OP)
    worst: dict[str, float] = {}
    for label, arrays in layouts(dtype):
        got = f(*arrays)
        assert_native(f, len([n for n in outs if n not in NO_KERNEL]))
        want = numpy_path(inputs, outs, *arrays)
        reference = None
        if dtype == "float32":
            wide = [a.astype("float64") if a.dtype == dtype else a for a in arrays]
            narrow = {"f": "float32", "c": "complex64"}  # complex(x, y) of floats is complex
            reference = [r.astype(narrow.get(r.dtype.kind, r.dtype)) for r in numpy_path(*build("float64"), *wide)]
        for k, name in enumerate(outs):
            try:
                err = check(name, got[k], want[k], None if reference is None else reference[k])
            except AssertionError as failure:
                raise AssertionError(f"{name} {dtype} {label}: {failure}") from None
            worst[name] = max(worst.get(name, 0.0), err)
    for name, err in worst.items():
        allowed = EXCEPTIONS.get(name, {}).get(dtype, ULP)
        assert err <= allowed, f"{name} {dtype}: {err} ulp"


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
def test_static_broadcast_and_zero_d(dtype):
    inputs, outs = build(dtype, broadcast=True)
    with config.change_flags(native_min_size=0):
        f = function(inputs, list(outs.values()), on_unused_input="ignore")
    n, m = SHAPE
    arrays = [values(dtype, SHAPE, 1), values(dtype, (1, m), 2), values(dtype, SHAPE, 3),
              values("bool", SHAPE, 4)]
    for got, want, name in zip(f(*arrays), numpy_path(inputs, outs, *arrays), outs):
        if name not in TRANSCENDENTAL:
            np.testing.assert_array_equal(got, want, err_msg=name)
    s = tensor.scalar("s", dtype=dtype)
    with config.change_flags(native_min_size=0):
        g = function([s], [tensor.exp(s) if dtype == "float32" else s * s, s + s])
    one = values(dtype, (), 9)
    got = g(one)
    assert got[1].shape == () and got[1] == one + one


def assert_native(f, at_least: int) -> None:
    """At least ``at_least`` of ``f``'s thunks have a built native kernel (after a call:
    kernels are built when first needed)."""
    built = [t for t in f._thunks if getattr(t, "__globals__", {}).get("K", native.refuse)
             is not native.refuse]
    assert len(built) >= at_least, f"{len(built)} native thunks, expected {at_least}"


def test_in_place_writes_the_destroyed_buffer():
    x = tensor.fvector("x")
    with config.change_flags(native_min_size=0):
        f = function([x], tensor.exp(tensor.exp(x) * 2) + 1)
    ops = [n.op for n in f.maker.fgraph.toposort()]
    assert any(getattr(op, "inplace_pattern", None) for op in ops) or len(ops) == 1
    v = np.linspace(-2, 2, 50).astype("float32")
    np.testing.assert_allclose(f(v), np.exp(np.exp(v) * 2) + 1, rtol=1e-5)


def test_below_the_size_threshold_numpy_runs():
    x = tensor.dvector("x")
    with config.change_flags(native_min_size=100):
        f = function([x], tensor.exp(x) * 2)
    assert "x0.size >= 100" in f._thunks[-1].source
    small, large = np.arange(5.0), np.linspace(0, 1, 500)
    np.testing.assert_array_equal(f(small), np.exp(small) * 2)
    np.testing.assert_allclose(f(large), np.exp(large) * 2, rtol=1e-15)
