"""Scan on a GPU device: the loop's buffers on the device, its inner graph (and
its gradient's) placed there, the same results as on the CPU, and explain()
saying where the inner nodes ran."""
from __future__ import annotations

import io

import numpy as np
import pytest

import arignote
from arignote import config, function, shared, tensor as T
from arignote.backends.gpu import GpuArrayType, explain
from arignote.backends.gpu.ops import GpuOp
from arignote.backends.gpu.scan import GpuScan
from arignote.gradient import grad, verify_grad
from arignote.sandbox.rng_mrg import MRG_RandomStreams
from arignote.scan_module import until
from arignote.tensor.shared_randomstreams import RandomStreams


def on(device: str, build, *args, calls: int = 1, dtype: str = "float32"):
    """``build()`` -> (inputs, outputs, updates, shared values to read back), compiled
    and called on ``device``: (function, results of each call, shared values after)."""
    with config.change_flags(device=device, floatX=dtype):
        inputs, outputs, updates, watched = build()
        f = function(inputs, outputs, updates=updates)
        results = [f(*args) for _ in range(calls)]
        return f, results, [s.get_value() for s in watched]


def same_on_cpu_and_opencl(build, *args, calls: int = 1, exact: bool = False, dtype: str = "float32"):
    f, gpu, gpu_shared = on("opencl", build, *args, calls=calls, dtype=dtype)
    _, cpu, cpu_shared = on("cpu", build, *args, calls=calls, dtype=dtype)
    for g, c in zip(gpu + [gpu_shared], cpu + [cpu_shared]):
        for a, b in zip(g, c):
            assert a.dtype == b.dtype and a.shape == b.shape
            if exact or a.dtype.kind not in "f":
                assert np.array_equal(a, b)
            else:
                np.testing.assert_allclose(a, b, rtol=2e-5 if a.dtype == np.float32 else 1e-12,
                                           atol=1e-6 if a.dtype == np.float32 else 1e-12)
    return f


def rnn():
    x = T.fmatrix("x")
    W = shared(np.linspace(-1, 1, 12).reshape(3, 4).astype("float32"), name="W")
    U = shared(np.linspace(0.5, -0.5, 16).reshape(4, 4).astype("float32"), name="U")
    hs, _ = arignote.scan(lambda xt, h: T.tanh(T.dot(xt, W) + T.dot(h, U)), sequences=x,
                          outputs_info=T.zeros(4, dtype="float32"), name="rnn")
    cost = (hs ** 2).sum()
    return [x], [hs] + grad(cost, [W, U, x]), None, []


X = np.sin(np.arange(15, dtype="float32")).reshape(5, 3)


def loops(f) -> list:
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, arignote.scan_module.Scan)]


def test_an_rnn_and_its_gradient_run_on_the_device_and_match_the_cpu(opencl):
    f = same_on_cpu_and_opencl(rnn, X)
    forward, backward = loops(f)
    for node in (forward, backward):
        assert isinstance(node.op, GpuScan)
        assert all(isinstance(v.type, GpuArrayType) for v in node.inputs[1:] + node.outputs)
        inner = node.op.inner_function().maker.fgraph.toposort()
        assert inner and all(isinstance(n.op, GpuOp) for n in inner)  # no transfer per step


def test_explain_shows_where_the_inner_nodes_ran(opencl):
    f, _, _ = on("opencl", rnn, X)
    assert "inner graph:" not in explain(f, file=io.StringIO())  # the whole body is on the device
    text = explain(f, file=io.StringIO(), verbose=True)
    assert "GpuScan{rnn}" in text and "inner graph:" in text
    body = text.split("inner graph:")[1]
    assert "GpuDot" in body and "device: gpu" in body and "device: cpu" not in body.split("GpuScan")[0]


def test_taps_plain_outputs_updates_and_random_draws_match_the_cpu(opencl):
    def build():
        acc = shared(np.zeros(3, "float32"), name="acc")
        mrg, streams = MRG_RandomStreams(7), RandomStreams(3)
        x, idx = T.fmatrix("x"), T.lvector("idx")

        def step(x_prev, x_next, i, h2, h1, scale):
            noise = mrg.uniform((3,)) + T.cast(streams.uniform((3,)), "float32")
            new = h2 * 0.5 + h1 + x_next * scale - x_prev + noise
            return [new, i * 2, x_next.sum()], {acc: acc + new}

        outs, updates = arignote.scan(
            step, sequences=[dict(input=x, taps=[-1, 1]), idx],
            outputs_info=[dict(initial=T.zeros((2, 3), dtype="float32"), taps=[-2, -1]), None, None],
            non_sequences=[T.constant(np.float32(2.0))])
        return [x, idx], outs, updates, [acc]

    xv = np.arange(18, dtype="float32").reshape(6, 3)
    f = same_on_cpu_and_opencl(build, xv, np.arange(4), calls=2, exact=True)
    node, = loops(f)
    assert isinstance(node.op, GpuScan)
    # the MRG state is carried on the device, numpy's generator and the int index on the host
    kinds = [type(v.type).__name__ for v in node.inputs]
    assert "RandomStateType" in kinds and kinds.count("GpuArrayType") >= 4
    inner = [type(n.op).__name__ for n in node.op.inner_function().maker.fgraph.toposort()]
    assert "GpuMRGUniform" in inner and "RandomFunction" in inner


def test_go_backwards_n_steps_and_until_match_the_cpu(opencl):
    def build():
        x = T.fvector("x")
        back, _ = arignote.scan(lambda xt, acc: acc * 0.9 + xt, sequences=x,
                                outputs_info=T.constant(np.float32(0)), go_backwards=True)
        powers, _ = arignote.scan(lambda p: p * np.float32(1.5), outputs_info=x[2:4],
                                  n_steps=6)
        capped, _ = arignote.scan(lambda p: (p * 2, until(p.sum() > 20)),
                                  outputs_info=x[:2], n_steps=50)
        return [x], [back, powers, capped], None, []

    f = same_on_cpu_and_opencl(build, np.linspace(1, 2, 7).astype("float32"))
    assert len(loops(f)) == 3 and all(isinstance(n.op, GpuScan) for n in loops(f))
    assert len(f(np.linspace(1, 2, 7).astype("float32"))[2]) < 50


def test_float64_loops_match_the_cpu(opencl):
    def build():
        x = T.dmatrix("x")
        W = shared(np.eye(3) * 0.5 + 0.1, name="W")
        hs, _ = arignote.scan(lambda xt, h: T.sin(T.dot(h, W)) + xt, sequences=x,
                              outputs_info=T.zeros(3, dtype="float64"))
        return [x], [hs, grad(hs.sum(), W)], None, []

    same_on_cpu_and_opencl(build, X.astype("float64"), dtype="float64")


@pytest.mark.parametrize("kind", ["rnn", "taps"])
def test_verify_grad_through_scan_on_the_device(opencl, kind):
    nrng = np.random.RandomState(7)
    with config.change_flags(device="opencl"):
        if kind == "rnn":
            def fn(x, h0, W):
                hs, _ = arignote.scan(lambda xt, h, W_: T.tanh(T.dot(h, W_) + xt), sequences=x,
                                      outputs_info=h0, non_sequences=W)
                return hs
            pt = [nrng.normal(size=(5, 3)), nrng.normal(size=3), nrng.normal(size=(3, 3)) * 0.5]
        else:
            def fn(s, x0):
                out, _ = arignote.scan(lambda a, b, c, p2, p1: a * b + c + p1 * p2 * 0.5,
                                       sequences=dict(input=s, taps=[-2, 0, 1]),
                                       outputs_info=dict(initial=x0, taps=[-2, -1]))
                return out
            pt = [nrng.normal(size=8), nrng.normal(size=3)]
        verify_grad(fn, pt, rng=nrng)
        # and the loops it checked ran on the device
        syms = [T.TensorType("float64", (False,) * p.ndim)() for p in pt]
        g = function(syms, grad(fn(*syms).sum(), syms))
        assert loops(g) and all(isinstance(n.op, GpuScan) for n in loops(g))


def test_a_loop_of_host_scalars_stays_on_the_cpu_with_its_reason(opencl):
    with config.change_flags(device="opencl"):
        n = T.lscalar("n")
        counts, _ = arignote.scan(lambda c: c + 1, outputs_info=T.constant(np.int64(0)), n_steps=n)
        f = function([n], counts)
        text = explain(f, file=io.StringIO())
    assert "none of the loop's values can live on the device" in text
    assert np.array_equal(f(4), [1, 2, 3, 4])


def test_every_device_runs_scan_like_numpy(device):
    with config.change_flags(floatX="float32"):
        _, results, _ = on(device, rnn, X)
    h, expected = np.zeros(4, "float32"), []
    W = np.linspace(-1, 1, 12).reshape(3, 4).astype("float32")
    U = np.linspace(0.5, -0.5, 16).reshape(4, 4).astype("float32")
    for xt in X:
        h = np.tanh(xt @ W + h @ U)
        expected.append(h)
    np.testing.assert_allclose(results[0][0], np.array(expected), rtol=1e-5, atol=1e-6)


def test_gpu_shared_variables_as_sequences_and_initial_states(opencl):
    """Shared variables living on the device are the loop's sequence, initial state (one
    row or several taps) and gradient target, as host ones are (they once failed with
    'is float32 vector, but the inner graph expects float32 vector on GPU default')."""
    rng = np.random.RandomState(5)
    seq, h0, H0 = rng.rand(4, 3), rng.rand(3), rng.rand(2, 3)

    def build():
        X = shared(seq.astype("float32"), name="X")
        h = shared(h0.astype("float32"), name="h0")
        H = shared(H0.astype("float32"), name="H0")
        rnn, _ = arignote.scan(lambda xt, prev: T.tanh(xt + prev), sequences=X, outputs_info=h)
        taps, _ = arignote.scan(lambda a, b: a * 0.5 + b, outputs_info=[dict(initial=H, taps=[-2, -1])],
                                n_steps=3)
        gx, gh = arignote.grad(rnn.sum() + taps.sum(), [X, h])
        return [], [rnn, taps, gx, gh], [], []

    got, want = on("opencl", build)[1][0], on("cpu", build)[1][0]
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5)


def test_shared_variables_updated_in_the_loop_are_differentiated_on_every_device(device):
    sv = shared(np.float32(1), name="sv")
    w = shared(np.float32(0.5), name="w")
    x = T.fvector("x")
    out, up = arignote.scan(lambda xt: (xt * w, {sv: sv + 1, w: w * 2}), sequences=x)
    if device != "cpu":
        assert isinstance(sv.type, GpuArrayType)
    cost = out.sum() + up[w]
    f = function([x], [grad(up[sv], sv)] + grad(cost, [x, w]))
    g_sv, gx, gw = f(np.arange(1, 4, dtype="float32"))
    assert g_sv == np.float32(1.0)  # Theano's answer; it was 0.0
    np.testing.assert_allclose(gx, [0.5, 1.0, 2.0])
    assert np.isclose(gw, 1 + 2 * 2 + 3 * 4 + 8)  # d/dw of sum x_t w 2^t, plus d(8 w)/dw


def test_an_error_inside_the_step_names_the_outer_variables_on_every_device(device):
    x, b = T.fmatrix("x"), T.fvector("b")
    out, _ = arignote.scan(lambda xt, b_: T.tanh(xt) + b_, sequences=x, non_sequences=b)
    f = function([x, b], out)
    with pytest.raises(ValueError) as info:
        f(np.ones((4, 3), "float32"), np.ones(2, "float32"))
    assert "'x[t+0]' has shape (3,) and 'b' has shape (2,)" in str(info.value)
    assert "GpuFromHost" not in str(info.value)
    assert "in step 0 of " in "\n".join(info.value.__notes__)


def test_a_loop_keeping_its_last_rows_runs_on_the_device(opencl):
    """scan_save_mem's kept rows (written round-robin) survive the lowering to GpuScan."""
    def build():
        x = T.fvector("x")
        h, _ = arignote.scan(lambda v, acc: acc * np.float32(0.5) + v, sequences=x,
                             outputs_info=T.constant(np.float32(0)))
        doubled, _ = arignote.scan(lambda v: v * 2, sequences=x)
        return [x], [h[-1], h[-3:], doubled[-2:]], None, []

    f = same_on_cpu_and_opencl(build, np.arange(7, dtype="float32"))
    assert [n.op.kept_rows for n in loops(f)] == [(4, 2)]  # merged: 1 initial row + 3, and 2
    assert isinstance(loops(f)[0].op, GpuScan)
