"""MRG31k3p on the GPU: the same numbers as on the CPU, bit for bit, with the
stream states kept on the device; the CUDA kernel compiles with nvcc."""
from __future__ import annotations

import shutil
import subprocess
import warnings

import numpy as np
import pytest

from arignote import config, function, tensor as T
from arignote.backends.gpu import GpuArraySharedVariable, explain
from arignote.backends.kernels import render
from arignote.backends.gpu.mrg import GpuMRGUniform, uniform_kernel
from arignote.backends.gpu.type import GpuFromHost, HostFromGpu
from arignote.sandbox.rng_mrg import MRG_RandomStreams

SEEDS = [1, 12345, 2147462578, (7, 8, 9, 10, 11, 12)]
SIZES = [(1,), (5, 7), (1000,), (3, 4, 5)]


def draws(device: str, dtype: str, seed, build, calls: int = 3):
    """Each call's values and the streams' states after the calls, on ``device``."""
    with config.change_flags(device=device, floatX=dtype):
        rng = MRG_RandomStreams(seed)
        f = function([], build(rng))
        values = [f() for _ in range(calls)]
        states = [state.get_value() for state, _ in rng.updates()]
    return f, values, states


def assert_same(a, b):
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            assert u.dtype == v.dtype and u.shape == v.shape
            assert np.array_equal(u, v)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", SEEDS)
def test_uniform_is_bit_identical_to_the_cpu(opencl, dtype, seed):
    def build(rng):
        return [rng.uniform(size) for size in SIZES] + [rng.uniform((40,), nstreams=7),
                                                       rng.uniform((3,), nstreams=10)]
    f, gpu_values, gpu_states = draws("opencl", dtype, seed, build)
    _, cpu_values, cpu_states = draws("cpu", dtype, seed, build)
    assert_same(gpu_values, cpu_values)
    assert_same([gpu_states], [cpu_states])
    assert all(0 < v.min() and v.max() < 1 for call in gpu_values for v in call)
    assert not np.array_equal(gpu_values[0][2], gpu_values[1][2])  # each call draws anew


def test_the_draw_runs_on_the_gpu_and_its_state_never_leaves_it(opencl):
    f, _, _ = draws("opencl", "float32", 42, lambda rng: rng.uniform((4, 6)), calls=1)
    nodes = f.maker.fgraph.toposort()
    draw = [n for n in nodes if isinstance(n.op, GpuMRGUniform)]
    assert len(draw) == 1
    state = draw[0].inputs[0]
    assert isinstance(state, GpuArraySharedVariable)
    # the only transfer is the sample's copy back: the state is read and updated on the device
    transfers = [n for n in nodes if isinstance(n.op, (GpuFromHost, HostFromGpu))]
    assert [type(n.op) for n in transfers] == [HostFromGpu]
    assert transfers[0].inputs[0] is draw[0].outputs[1]
    assert "GpuMRGUniform" in explain(f, file=open("/dev/null", "w"))
    before = state.get_value(borrow=True, return_internal_type=True)
    f()
    after = state.get_value(borrow=True, return_internal_type=True)
    assert after is not before and not np.array_equal(np.asarray(after), np.asarray(before))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bounded_uniform_and_binomial_match_and_normal_is_within_ulps(opencl, dtype):
    def build(rng):
        return [rng.uniform((30, 7), low=-2.5, high=3.75), rng.binomial((50,), p=0.3),
                rng.normal((101,), avg=1.5, std=0.3)]
    _, gpu_values, _ = draws("opencl", dtype, 99, build, calls=2)
    _, cpu_values, _ = draws("cpu", dtype, 99, build, calls=2)
    assert_same([v[:2] for v in gpu_values], [v[:2] for v in cpu_values])
    # Box-Muller uses log, sqrt, cos and sin, whose device versions may differ from numpy's
    # in the last bits; the uniforms feeding them are identical.
    for g, c in zip(gpu_values, cpu_values):
        np.testing.assert_allclose(g[2], c[2], rtol=8 * np.finfo(dtype).eps, atol=8 * np.finfo(dtype).eps)


def test_a_symbolic_size_draws_the_same_numbers(opencl):
    def build(rng):
        n = T.lscalar("n")
        return n, rng.uniform(T.stack([n, 3]), ndim=2)
    results = {}
    for device in ("cpu", "opencl"):
        with config.change_flags(device=device, floatX="float32"):
            n, u = build(MRG_RandomStreams(5))
            f = function([n], u)
            results[device] = [f(4), f(9)]
    assert_same([results["opencl"]], [results["cpu"]])


def test_float16_stays_on_the_cpu_with_its_reason(opencl):
    with config.change_flags(device="opencl"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = function([], MRG_RandomStreams(3).uniform((8,), dtype="float16"))
    text = explain(f, file=open("/dev/null", "w"))
    assert "MRGUniform" in text and "float16 is not supported" in text
    assert f().dtype == np.float16


@pytest.mark.parametrize("d", [render.OPENCL, render.CUDA], ids=["opencl", "cuda"])
def test_kernel_source_in_both_dialects(d):
    single, double = uniform_kernel(d, "float32"), uniform_kernel(d, "float64")
    assert "double" not in single.source and "double" in double.source
    assert ("cl_khr_fp64" in double.source) == (d is render.OPENCL)
    with pytest.raises(render.UnsupportedDtype):
        uniform_kernel(d, "float16")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_mrg_kernels_compile_with_nvcc(tmp_path):
    unit = "\n".join("namespace k{} {{\n{}}}\n".format(i, uniform_kernel(render.CUDA, dt).source.replace(
        'extern "C" ', "")) for i, dt in enumerate(("float32", "float64")))
    path = tmp_path / "mrg.cu"
    path.write_text(unit)
    result = subprocess.run(["nvcc", "--ptx", "-o", str(tmp_path / "mrg.ptx"), str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]


def test_every_device_draws_the_cpu_numbers(device):
    build = lambda rng: [rng.uniform((6, 11)), rng.uniform((2,))]  # noqa: E731
    _, values, states = draws(device, "float32", 777, build)
    _, cpu_values, cpu_states = draws("cpu", "float32", 777, build)
    assert_same(values, cpu_values)
    assert_same([states], [cpu_states])
