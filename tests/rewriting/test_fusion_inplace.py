"""Fusion, in-place rewrites with the aliasing promises, and the size of rewritten graphs.

The aliasing tests of tests/compile run under FAST_RUN (the default mode of the
test suite), so every in-place rewrite is on there; the tests below add graphs
where the in-place rewrites do fire.
"""
import numpy as np
import pytest

from arignote import In, Out, config, function, shared
from arignote import tensor as T
from arignote.compile.mode import FAST_COMPILE, FAST_RUN
from arignote.gradient import grad
from arignote.graph.rewriting.db import rewrites
from arignote.graph.traversal import io_toposort
from arignote.tensor.rewrites.fusion import MAX_INPUTS
from tests.rewriting.rewrite_utils import NO_REWRITES, check_same_values, op_names

rng = np.random.default_rng(0)


def test_exp_times_2_plus_1_is_one_fused_node_under_fast_run_only():
    x = T.dvector("x")
    fast = function([x], T.exp(x) * 2 + 1, mode=FAST_RUN)
    slow = function([x], T.exp(x) * 2 + 1, mode=FAST_COMPILE)
    assert len(fast.maker.fgraph.apply_nodes) == 1
    assert op_names(slow) == ["exp", "mul", "add"]
    v = rng.standard_normal(10)
    np.testing.assert_array_equal(fast(v), slow(v))
    np.testing.assert_allclose(fast(v), np.exp(v) * 2 + 1)


def _inplace_nodes(f):
    return [n for n in f.maker.fgraph.toposort() if n.op.destroy_map]


def test_in_place_ops_overwrite_intermediates_only():
    x, w = T.dmatrix("x"), T.dmatrix("w")
    out = T.tanh(x.dot(w))
    f = check_same_values([x, w], out, FAST_RUN, [rng.standard_normal((3, 4)), rng.standard_normal((4, 2))])
    assert _inplace_nodes(f)
    xv, wv = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    xc, wc = xv.copy(), wv.copy()
    first = f(xv, wv)
    second = f(xv, wv)
    np.testing.assert_array_equal(xv, xc)
    np.testing.assert_array_equal(wv, wc)
    assert not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, second)


def test_in_place_never_overwrites_an_input_a_shared_value_or_a_value_needed_later():
    x = T.dvector("x")
    s = shared(np.arange(3.0), name="s")
    e = T.exp(x)
    outs = [T.tanh(e), e * 2, T.sqrt(s) + x]
    f = function([x], outs, updates={s: s + T.sin(x)}, mode=FAST_RUN)
    v = np.array([0.1, 0.2, 0.3])
    got = f(v.copy())
    np.testing.assert_allclose(got[0], np.tanh(np.exp(v)))
    np.testing.assert_allclose(got[1], np.exp(v) * 2)
    np.testing.assert_allclose(got[2], np.sqrt(np.arange(3.0)) + v)
    np.testing.assert_allclose(s.get_value(), np.arange(3.0) + np.sin(v))


def test_borrowed_outputs_of_in_place_graphs_follow_their_promise():
    x = T.dvector("x")
    f = function([x], Out(T.tanh(T.exp(x) + x.sum()), borrow=True), mode=FAST_RUN)
    first = f(np.zeros(3))
    kept = first.copy()
    f(np.ones(3))
    assert not np.array_equal(first, kept)  # the internal buffer, overwritten by the next call
    g = function([In(x, borrow=True)], T.tanh(T.exp(x) + x.sum()), mode=FAST_RUN)
    a, b = g(np.zeros(3)), g(np.zeros(3))
    assert not np.shares_memory(a, b)


def _chain(x, w, b, n):
    v = x
    for i in range(n):
        k = i % 5
        if k == 0:
            v = T.exp(v) * 0.5
        elif k == 1:
            v = v + b
        elif k == 2:
            v = T.tanh(v).dot(w)
        elif k == 3:
            v = (v * 1) - T.log(1 + v ** 2)
        else:
            v = v.T.T / 3.0
    return v


def test_a_1000_node_graph_shrinks_under_every_mode():
    x, w, b = T.dmatrix("x"), T.dmatrix("w"), T.dvector("b")
    y = _chain(x, w, b, 270)
    start = len(io_toposort([x, w, b], [y]))
    assert start >= 1000
    values = [rng.uniform(-0.1, 0.1, (4, 6)), rng.uniform(-0.3, 0.3, (6, 6)), rng.uniform(-0.1, 0.1, 6)]
    reference = function([x, w, b], y, mode=NO_REWRITES)(*values)
    for mode in (FAST_COMPILE, FAST_RUN):
        f = function([x, w, b], y, mode=mode)
        assert len(f.maker.fgraph.apply_nodes) <= start
        np.testing.assert_allclose(f(*values), reference, rtol=1e-10)
    assert len(function([x, w, b], y, mode=FAST_RUN).maker.fgraph.apply_nodes) < start // 5


@pytest.mark.parametrize("phase", ["canonicalize", "stabilize", "specialize", "fusion"])
def test_no_phase_grows_the_gradient_graph_of_a_3_layer_mlp(phase):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    params = [shared(rng.standard_normal((5, 5)) * 0.3, name=f"w{i}") for i in range(3)]
    h = x
    for w in params:
        h = T.tanh(h.dot(w))
    cost = T.mean(T.sqr(h - y))
    grads = grad(cost, params)
    start = len(io_toposort([x, y] + params, [cost] + grads))
    f = function([x, y], [cost] + grads, mode=NO_REWRITES.including(phase))
    assert len(f.maker.fgraph.apply_nodes) <= start
    values = [rng.standard_normal((4, 5)), rng.standard_normal((4, 5))]
    for got, expected in zip(f(*values), function([x, y], [cost] + grads, mode=NO_REWRITES)(*values)):
        np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_fast_run_is_the_default_and_includes_in_place_rewrites():
    assert config.mode == "FAST_RUN"
    names = {e.name for e in rewrites.entries.values() if e.phase == "inplace" and "fast_run" in e.tags}
    assert {"inplace_elemwise", "inplace_gemm"} <= names


def test_a_transpose_is_lifted_up_a_1000_deep_chain_in_one_pass():
    x = T.dmatrix("x")
    v = x
    for i in range(1000):
        v = T.tanh(v) if i % 2 else v * 1.0001
    f = function([x], v.T, mode=FAST_RUN)
    assert len(f.maker.fgraph.apply_nodes) <= 10
    value = rng.standard_normal((2, 3))
    np.testing.assert_allclose(f(value), function([x], v.T, mode=NO_REWRITES)(value), rtol=1e-12)


def test_a_chain_with_more_inputs_than_a_kernel_takes_is_fused_in_pieces():
    xs = [T.dvector(f"x{i}") for i in range(3 * MAX_INPUTS)]
    out = xs[0]
    for x in xs[1:]:
        out = T.tanh(out) + x
    f = check_same_values(xs, out, FAST_RUN, [rng.standard_normal(3) for _ in xs], rtol=1e-12)
    nodes = f.maker.fgraph.toposort()
    assert len(nodes) <= 8
    assert all(len(n.inputs) <= MAX_INPUTS for n in nodes)


def test_in_place_passes_ask_the_graphs_features_no_output_from_inplace_refuses():
    from arignote.compile.mode import AddFeatureOptimizer, Mode
    from arignote.graph.features import NoOutputFromInplace
    x, y = T.matrix("x"), T.matrix("y")
    out = T.tanh(T.dot(T.exp(T.dot(x, y)), y))
    plain = function([x, y], out, mode=FAST_RUN)
    assert plain.maker.fgraph.outputs[0].owner.op.destroy_map  # tanh overwrites the dot's result
    mode = Mode(optimizer="fast_run").register((AddFeatureOptimizer(NoOutputFromInplace()), 49.9))
    guarded = function([x, y], out, mode=mode)
    last = guarded.maker.fgraph.outputs[0].owner
    assert not last.op.destroy_map
    assert any(n.op.destroy_map for n in guarded.maker.fgraph.toposort() if n is not last)  # others still in place
    a = np.ones((2, 2), config.floatX)
    np.testing.assert_allclose(guarded(a, a), plain(a, a))
