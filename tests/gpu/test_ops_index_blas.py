"""The GPU kernels added beyond elementwise/reduce/softmax/GEMM, on every backend
against numpy, with the nodes checked to be ``Gpu*`` on a device: argmax and
argmin (ties, NaN), take and set/inc of rows with repeated indices, basic
set/inc, join and stack, batched matmul, dot and tensordot of any rank, Gemm,
and shape ops as metadata."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.graph.basic import Apply
from arignote.tensor.gemm import gemm, gemv
from arignote.tensor.subtensor import inc_subtensor, set_subtensor
from tests.utils import assert_matches


def gpu_ops(fn) -> set[str]:
    return {type(n.op).__name__ for n in fn.maker.fgraph.toposort()}


def expect_on_gpu(device: str, fn, *names: str) -> None:
    if device != "cpu":
        found = gpu_ops(fn)
        assert set(names) <= found, f"{names} not all in {found}"


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_argmax_argmin_ties_and_axes(device, dtype):
    x = T.tensor(dtype, (False,) * 3)
    value = np.random.default_rng(0).integers(0, 3, (3, 4, 5)).astype(dtype)  # many ties
    outs = [T.argmax(x, axis=1), T.argmin(x, axis=(0, 2)), T.argmax(x), *T.max_and_argmax(x, axis=2)]
    f = function([x], outs)
    got = f(value)
    assert_matches(got[0], value.argmax(axis=1))
    assert_matches(got[1], value.transpose(1, 0, 2).reshape(4, -1).argmin(axis=1))
    assert_matches(got[2], np.asarray(value.argmax()))
    assert_matches(got[3], value.max(axis=2))
    assert_matches(got[4], value.argmax(axis=2))
    expect_on_gpu(device, f, "GpuArgmax", "GpuArgmin")


def test_argmax_of_nan_and_long_axis(device):
    x = T.fmatrix("x")
    value = np.random.default_rng(1).normal(size=(3, 1000)).astype("float32")
    value[1, 700] = np.nan
    value[1, 900] = np.nan
    value[2, :] = 1.0
    f = function([x], [T.argmax(x, axis=1), T.argmin(x, axis=1)])
    big, small = f(value)
    assert_matches(big, value.argmax(axis=1))
    assert_matches(small, value.argmin(axis=1))


def test_take_rows(device):
    x, i = T.fmatrix("x"), T.lvector("i")
    value = np.arange(20, dtype="float32").reshape(5, 4)
    rows = np.array([3, 0, -1, 2, 2])  # in range of x (5 rows) and of x.T (4 rows)
    f = function([x, i], [x[i], x.T[i], x[i][:, 1:]])
    a, b, c = f(value, rows)
    assert_matches(a, value[rows])
    assert_matches(b, value.T[rows])
    assert_matches(c, value[rows][:, 1:])
    expect_on_gpu(device, f, "GpuAdvancedSubtensor1")
    with pytest.raises(IndexError, match="'x'.*out of bounds"):
        f(value, np.array([5]))


@pytest.mark.parametrize("set_", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_set_and_inc_rows_with_repeated_indices(device, set_, dtype):
    x, y, i = T.tensor(dtype, (False, False)), T.tensor(dtype, (False, False)), T.lvector("i")
    value = np.arange(24, dtype=dtype).reshape(6, 4)
    rows = np.array([1, 3, 1, -5, 0, 1])
    update = (np.arange(24, dtype=dtype).reshape(6, 4) * 3 + 1).astype(dtype)
    op = set_subtensor if set_ else inc_subtensor
    f = function([x, y, i], [op(x[i], y), op(x[i], y[0])])
    expected, broadcast = value.copy(), value.copy()
    if set_:
        expected[rows] = update
        broadcast[rows] = update[0]
    else:
        np.add.at(expected, rows, update)
        np.add.at(broadcast, rows, update[0])
    got, got_broadcast = f(value, update, rows)
    assert_matches(got, expected)
    assert_matches(got_broadcast, broadcast)
    assert_matches(value, np.arange(24, dtype=dtype).reshape(6, 4))  # the input is untouched
    expect_on_gpu(device, f, "GpuAdvancedIncSubtensor1")


def test_inc_rows_of_a_vector_accumulates_in_order(device):
    x, y, i = T.fvector("x"), T.fvector("y"), T.lvector("i")
    rows = np.array([2] * 50 + [0, 2])
    update = np.linspace(0.1, 5, len(rows)).astype("float32")
    f = function([x, y, i], inc_subtensor(x[i], y))
    expected = np.zeros(3, "float32")
    np.add.at(expected, rows, update)
    assert_matches(f(np.zeros(3, "float32"), update, rows), expected)


@pytest.mark.parametrize("set_", [False, True])
def test_set_and_inc_basic_slices(device, set_):
    x, y = T.fmatrix("x"), T.fvector("y")
    value = np.arange(20, dtype="float32").reshape(4, 5)
    row = np.array([10, 20, 30], "float32")
    op = set_subtensor if set_ else inc_subtensor
    f = function([x, y], [op(x[1:, ::2], y), op(x[::-1, 1:4], y), op(x[2, 1:4], y)])
    for got, index in zip(f(value, row), [(slice(1, None), slice(None, None, 2)),
                                          (slice(None, None, -1), slice(1, 4)), (2, slice(1, 4))]):
        expected = value.copy()
        if set_:
            expected[index] = row
        else:
            expected[index] += row
        assert_matches(got, expected)
    expect_on_gpu(device, f, "GpuIncSubtensor")
    with pytest.raises(ValueError, match="'x'.*broadcast"):
        f(value, np.ones(4, "float32"))


def test_join_and_stack(device):
    a, b, c = T.fmatrix("a"), T.fmatrix("b"), T.imatrix("c")
    va = np.arange(6, dtype="float32").reshape(2, 3)
    vb = np.arange(9, dtype="float32").reshape(3, 3) + 100
    vc = np.arange(6, dtype="int32").reshape(2, 3) - 50
    f = function([a, b, c], [T.concatenate([a, b, a.T[:, :2].T], axis=0), T.concatenate([a, c], axis=1),
                             T.stack([a, c * 2], axis=1)])
    first, second, third = f(va, vb, vc)
    assert_matches(first, np.concatenate([va, vb, va.T[:, :2].T], axis=0))
    assert_matches(second, np.concatenate([va, vc], axis=1).astype(second.dtype))
    assert_matches(third, np.stack([va, vc * 2], axis=1).astype(third.dtype))
    expect_on_gpu(device, f, "GpuJoin")
    with pytest.raises(ValueError, match="join along axis 0"):
        f(va, np.ones((3, 2), "float32"), vc)


def test_join_along_a_variable_axis_stays_on_the_host(device):
    """GpuJoin's axis is fixed, so a join whose axis is a variable runs on the host, correctly."""
    a, b, axis = T.fmatrix("a"), T.fmatrix("b"), T.lscalar("axis")
    va, vb = np.arange(6, dtype="float32").reshape(2, 3), np.ones((2, 3), "float32")
    f = function([a, b, axis], T.exp(T.join(axis, a, b)))
    for k in (0, 1, -1):
        assert_matches(f(va, vb, k), np.exp(np.concatenate([va, vb], axis=k)))
    assert not any("GpuJoin" in str(node.op) for node in f.maker.fgraph.toposort())


@pytest.mark.parametrize("sa, sb", [((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                                    ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((2, 0, 3), (3, 2))])
def test_matmul_batched(device, sa, sb):
    rng = np.random.default_rng(2)
    va, vb = rng.normal(size=sa).astype("float32"), rng.normal(size=sb).astype("float32")
    a, b = T.tensor("float32", (False,) * len(sa)), T.tensor("float32", (False,) * len(sb))
    f = function([a, b], T.matmul(a, b))
    np.testing.assert_allclose(f(va, vb), np.matmul(va, vb), rtol=1e-5, atol=1e-5)
    expect_on_gpu(device, f, "GpuMatMul")


@pytest.mark.parametrize("sa, sb", [((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (6, 4, 2)),
                                    ((2, 3, 4), (4,))])
def test_dot_of_higher_rank(device, sa, sb):
    rng = np.random.default_rng(3)
    va, vb = rng.normal(size=sa), rng.normal(size=sb)
    a, b = T.tensor("float64", (False,) * len(sa)), T.tensor("float64", (False,) * len(sb))
    f = function([a, b], [T.dot(a, b), T.dot(a.dimshuffle(*reversed(range(len(sa)))).T, b)])
    first, second = f(va, vb)
    np.testing.assert_allclose(first, np.dot(va, vb), rtol=1e-10)
    np.testing.assert_allclose(second, np.dot(va, vb), rtol=1e-10)
    expect_on_gpu(device, f, "GpuDotNd")


@pytest.mark.parametrize("axes", [((1, 2), (0, 1)), ((0, 2), (1, 0)), ((2,), (0,))])
def test_tensordot_over_several_axes(device, axes):
    rng = np.random.default_rng(4)
    va, vb = rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 4, 5))
    if axes == ((0, 2), (1, 0)):
        vb = rng.normal(size=(4, 2, 5))
    if axes == ((2,), (0,)):
        vb = rng.normal(size=(4, 5))
    a, b = T.dtensor3("a"), T.tensor("float64", (False,) * vb.ndim)
    f = function([a, b], T.tensordot(a, b, axes))
    np.testing.assert_allclose(f(va, vb), np.tensordot(va, vb, axes), rtol=1e-10)
    expect_on_gpu(device, f, "GpuTensorDot")


def test_gemm_op(device):
    z, x, y = T.fmatrix("z"), T.fmatrix("x"), T.fmatrix("y")
    alpha, beta = T.fscalar("alpha"), T.fscalar("beta")
    rng = np.random.default_rng(5)
    vz, vx, vy = (rng.normal(size=s).astype("float32") for s in ((3, 5), (3, 4), (4, 5)))
    f = function([z, alpha, x, y, beta], gemm(z, alpha, x, y, beta))
    np.testing.assert_allclose(f(vz, 2.0, vx, vy, 0.5), 0.5 * vz + 2 * vx @ vy, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(f(vz * np.nan, 1.0, vx, vy, 0.0), vx @ vy, rtol=1e-5, atol=1e-5)
    expect_on_gpu(device, f, "GpuGemm")


@pytest.mark.parametrize("transposed", [False, True])
def test_gemv_op(device, transposed):
    y, a, v = T.fvector("y"), T.fmatrix("a"), T.fvector("v")
    alpha, beta = T.fscalar("alpha"), T.fscalar("beta")
    rng = np.random.default_rng(6)
    vy, va, vv = (rng.normal(size=s).astype("float32") for s in ((3,), (4, 3) if transposed else (3, 4), (4,)))
    f = function([y, alpha, a, v, beta], gemv(y, alpha, a.T if transposed else a, v, beta))
    m = va.T if transposed else va
    np.testing.assert_allclose(f(vy, 2.0, va, vv, 0.5), 0.5 * vy + 2 * m @ vv, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(f(vy * np.nan, 1.0, va, vv, 0.0), m @ vv, rtol=1e-5, atol=1e-5)
    expect_on_gpu(device, f, "GpuGemv")


def test_shape_ops_are_metadata_on_the_gpu(device):
    x = T.fmatrix("x")
    value = np.arange(12, dtype="float32").reshape(3, 4)
    y = T.exp(x)
    f = function([x], [y.reshape((2, -1)) * 2, y.T.reshape((12,)) + 1, y.shape, y.shape[1] * 1])
    a, b, shape, width = f(value)
    assert_matches(a, np.exp(value).reshape(2, -1) * 2)
    assert_matches(b, np.exp(value).T.reshape(12) + 1)
    assert_matches(shape, np.array([3, 4]))
    assert int(width) == 4
    if device != "cpu":
        names = gpu_ops(f)
        assert "GpuReshape" in names and "Reshape" not in names
        transfers = [n for n in f.maker.fgraph.toposort() if type(n.op).__name__ == "HostFromGpu"]
        assert len(transfers) == 2, "only the two array outputs come back; shapes need no transfer"


def test_shape_of_a_host_value_stays_on_the_cpu_with_a_reason(device):
    from arignote.backends.gpu.placement import reason_for
    x = T.fmatrix("x")
    f = function([x], x.reshape((-1,)))
    if device != "cpu":
        node = next(n for n in f.maker.fgraph.toposort() if isinstance(n, Apply))
        assert "host value" in reason_for(f.maker.fgraph, node)
    assert_matches(f(np.ones((2, 3), "float32")), np.ones(6, "float32"))
