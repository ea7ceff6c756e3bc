"""The core's op tests, run on every backend through the device fixture.

The elementwise table of tests/tensor/test_elemwise.py is reused as it is:
its ``check`` compiles each op with function() and compares with numpy, so on
a GPU device it runs the generated kernel. A float32 op must actually have
been placed on the GPU there.
"""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.scalar.ops import TABLE
from arignote.tensor.elemwise import Elemwise
from tests.tensor.test_elemwise import DISCRETE, REFERENCE, accepted, check
from tests.utils import NUMPY_FP_WARNINGS_ONLY, assert_matches

pytestmark = NUMPY_FP_WARNINGS_ONLY

# Compiling a kernel takes about a second on PoCL, so each op runs in one float
# dtype, and in int32 where C's integer semantics differ from numpy's.
INT_SENSITIVE = {"add", "sub", "mul", "int_div", "mod", "maximum", "minimum", "abs", "sgn", "neg",
                 "invert", "lt", "eq", "clip", "switch", "and_", "or_", "xor", "true_div", "sqr"}


def kernel_dtypes(name: str) -> list[str]:
    ok = accepted(name)
    first = next(d for d in ("float32", "int16", "bool") if d in ok)
    return [first] + (["int32"] if name in INT_SENSITIVE and "int32" in ok and first != "int32" else [])


def on_gpu(fn) -> bool:
    return all("Gpu" in type(n.op).__name__ for n in fn.maker.fgraph.toposort()
               if isinstance(n.op, Elemwise) or "Gpu" in type(n.op).__name__)


def gpu_nodes(fn) -> list[str]:
    return [type(n.op).__name__ for n in fn.maker.fgraph.toposort() if "Gpu" in type(n.op).__name__]


@pytest.mark.parametrize("name", list(REFERENCE))
def test_elemwise_table(device, name):
    nin = TABLE[name].nin
    shapes = [(2, 3), (1, 3), (3,)][:nin] if nin > 1 else [(2, 3)]
    marks = [False, True, False][:nin]
    for dtype in kernel_dtypes(name):
        dtypes = [dtype] * nin
        if name == "switch":
            dtypes[0] = "bool"
        check(name, dtypes, shapes, marks, seed=7, special=dtype.startswith("float"))


@pytest.mark.parametrize("name", ["int_div", "mod"])
def test_integer_division_rounds_down_and_survives_zero(device, name):
    x, y = T.ivector("x"), T.ivector("y")
    a = np.array([7, -7, 7, -7, 5, -2**31, 3], "int32")
    b = np.array([2, 2, -2, -2, 0, -1, 1], "int32")
    with np.errstate(all="ignore"):
        expected = np.floor_divide(a, b) if name == "int_div" else np.mod(a, b)
    f = function([x, y], Elemwise(TABLE[name])(x, y))
    assert_matches(f(a, b), expected)


def test_float32_elemwise_runs_on_the_gpu(device):
    x = T.fmatrix("x")
    f = function([x], T.exp(x) * 2 + T.sin(x))
    value = np.linspace(-1, 1, 12, dtype="float32").reshape(3, 4)
    assert_matches(f(value), np.exp(value) * 2 + np.sin(value), rtol=1e-5)
    if device != "cpu":
        assert "GpuElemwise" in gpu_nodes(f)
        composite = [n for n in f.maker.fgraph.toposort() if type(n.op).__name__ == "GpuElemwise"]
        assert len(composite) == 1, "the fused chain must be one kernel"


@pytest.mark.parametrize("axis", [None, 0, 1, 2, (0, 2), (1, 2)])
@pytest.mark.parametrize("fn", ["sum", "prod", "max", "min", "any", "all", "mean"])
def test_reductions(device, fn, axis):
    x = T.ftensor3("x")
    value = np.random.default_rng(3).uniform(0.5, 1.5, (3, 4, 5)).astype("float32")
    f = function([x], getattr(T, fn)(x, axis=axis))
    expected = getattr(np, fn)(value, axis=axis)
    result = f(value)
    assert result.shape == np.shape(expected)
    np.testing.assert_allclose(result, expected, rtol=1e-4)
    if device != "cpu":
        assert "GpuCAReduce" in gpu_nodes(f)


def test_reductions_of_transposed_and_integer_inputs(device):
    x = T.imatrix("x")
    value = np.arange(-6, 6, dtype="int32").reshape(3, 4)
    f = function([x], [T.sum(x.T, axis=0), T.max(x.T, axis=1), T.min(x)])
    s, m, lo = f(value)
    assert_matches(s, value.T.sum(axis=0))
    assert_matches(m, value.T.max(axis=1))
    assert_matches(lo, value.min())


def test_max_of_an_empty_axis_raises(device):
    x = T.fmatrix("x")
    with pytest.raises(ValueError, match="no\\s+elements|undefined"):
        function([x], T.max(x, axis=0))(np.zeros((0, 3), "float32"))


@pytest.mark.parametrize("shapes", [((5, 7), (7, 3)), ((5, 7), (7,)), ((7,), (7, 3)), ((7,), (7,)),
                                    ((40, 33), (33, 17))])
def test_dot(device, shapes):
    rng = np.random.default_rng(0)
    a = rng.normal(size=shapes[0]).astype("float32")
    b = rng.normal(size=shapes[1]).astype("float32")
    x = T.tensor("float32", (False,) * a.ndim)
    y = T.tensor("float32", (False,) * b.ndim)
    f = function([x, y], [T.dot(x, y), T.dot(y.T, x.T) if a.ndim == 2 and b.ndim == 2 else T.dot(x, y)])
    first, second = f(a, b)
    np.testing.assert_allclose(first, a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(second, (a @ b).T if a.ndim == b.ndim == 2 else a @ b,
                               rtol=1e-4, atol=1e-4)
    if device != "cpu":
        assert "GpuDot" in gpu_nodes(f)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax(device, op, axis):
    from scipy.special import log_softmax, softmax
    x = T.fmatrix("x")
    value = np.random.default_rng(1).normal(size=(4, 300)).astype("float32") * 5
    f = function([x], getattr(T.nnet, op)(x, axis=axis))
    reference = (softmax if op == "softmax" else log_softmax)(value.astype("float64"), axis=axis)
    np.testing.assert_allclose(f(value), reference, rtol=1e-4, atol=1e-6)


def test_subtensor_and_alloc(device):
    x = T.fmatrix("x")
    i = T.iscalar("i")
    value = np.arange(20, dtype="float32").reshape(4, 5)
    f = function([x, i], [x[1:, ::2] * 2, x[i], x[::-1, -2], T.zeros((2, 3), "float32") + x[0, 0],
                          T.alloc(x[0], 3, 5)])
    a, b, c, d, e = f(value, 2)
    assert_matches(a, value[1:, ::2] * 2)
    assert_matches(b, value[2])
    assert_matches(c, value[::-1, -2])
    assert_matches(d, np.zeros((2, 3), "float32") + value[0, 0])
    assert_matches(e, np.broadcast_to(value[0], (3, 5)))


def test_dimshuffle_and_broadcasting(device):
    x, y = T.fmatrix("x"), T.fvector("y")
    value, row = np.ones((3, 4), "float32"), np.arange(3, dtype="float32")
    f = function([x, y], x.T + y + y.dimshuffle("x", 0))
    assert_matches(f(value, row), value.T + row + row[None, :])


def test_int_kernels_follow_numpy_wraparound(device):
    x = T.bvector("x")
    value = np.array([127, -128, 5], "int8")
    f = function([x], [x + x, -x, abs(x), x // 3])
    for got, want in zip(f(value), [value + value, -value, np.abs(value), value // 3]):
        assert_matches(got, want)
    assert DISCRETE  # the table's own dtype lists are the ones used above
