"""Fused chains on the CPU backend: tiles, threads, broadcasting and casts agree with numpy."""
import numpy as np
import pytest

from arignote import Out, function, tensor as T
from arignote.backends.cpu import tiling
from tests.utils import assert_matches

SIZES = [0, 1, 7, tiling.TILE - 1, tiling.TILE + 3, tiling.PARALLEL_MIN + 5]


def _fused(f):
    (node,) = f.maker.fgraph.toposort()
    assert "Composite" in str(node.op)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_chain_matches_numpy_at_every_size(n, dtype, rng):
    x = T.vector("x", dtype=dtype)
    f = function([x], T.tanh(x * 2 + 1) * 0.5 + T.exp(-x * x))
    _fused(f)
    v = rng.standard_normal(n).astype(dtype)
    expected = (np.tanh(v * 2 + 1) * 0.5 + np.exp(-v * v)).astype(dtype)
    assert_matches(f(v), expected)
    assert_matches(f(v), expected)  # the reused output buffer gives the same answer


@pytest.mark.parametrize("rows", [1, 3, 200])
def test_broadcast_row_against_a_large_matrix(rows, rng):
    m, r = T.matrix("m"), T.row("r")
    f = function([m, r], T.exp(m) * r + 1)
    _fused(f)
    M = rng.standard_normal((rows, tiling.TILE // 7 + 11))
    R = rng.standard_normal((1, M.shape[1]))
    assert_matches(f(M, R), np.exp(M) * R + 1)


def test_non_contiguous_input_takes_the_broadcasting_path(rng):
    m = T.matrix("m")
    f = function([m], T.sqrt(abs(m)) + m * 3)
    big = rng.standard_normal((2 * tiling.PARALLEL_MIN // 500, 1000))
    view = big[:, ::2]
    assert_matches(f(view), np.sqrt(abs(view)) + view * 3)


def test_integer_inputs_are_cast_inside_the_chain(rng):
    x = T.bvector("x")
    f = function([x], T.exp(x) * 2 - 1)
    _fused(f)
    v = rng.integers(-5, 5, tiling.TILE + 9).astype("int8")
    assert_matches(f(v), (np.exp(v.astype("float32")) * 2 - 1).astype("float32"))


def test_single_thread_and_pool_agree(monkeypatch, rng):
    x = T.vector("x")
    f = function([x], T.sin(x) * T.cos(x) + x)
    v = rng.standard_normal(tiling.PARALLEL_MIN * 2)
    parallel = f(v)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert tiling.thread_count() == 1
    assert_matches(f(v), parallel)


def test_borrowed_output_buffer_is_reused_and_overwritten(rng):
    x = T.vector("x")
    f = function([x], Out(T.exp(x) * 2 + 1, borrow=True))
    first = f(np.zeros(10))
    second = f(np.ones(10))
    assert second is first  # the fast path hands back the same buffer
    assert_matches(first, np.exp(np.ones(10)) * 2 + 1)


def test_fresh_output_is_never_overwritten(rng):
    x = T.vector("x")
    f = function([x], T.exp(x) * 2 + 1)
    first = f(np.zeros(10))
    f(np.ones(10))
    assert_matches(first, np.full(10, 3.0))
