"""Devices, transfers, the aliasing promises on a GPU, placement reasons, the seed
script, and training on the CPU and on OpenCL to the same weights."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import pytest

import arignote
from arignote import In, Out, config, function, shared, tensor as T
from arignote.backends.gpu import GpuArray, GpuArraySharedVariable, get_context
from arignote.backends.gpu.context import DeviceUnavailable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_device_flag_syntax():
    for ok in ("cpu", "cuda", "cuda1", "opencl", "opencl0:1"):
        with config.change_flags(device=ok):
            assert config.device == ok
    for bad in ("gpu", "opencl0", "cuda:1"):
        with pytest.raises(ValueError, match="openclP:D"):
            config.device = bad


def test_unusable_device_falls_back_with_a_warning_or_raises_when_forced():
    with config.change_flags(device="opencl7:7"):
        with pytest.warns(UserWarning, match="running on the CPU"):
            assert get_context(None) is None
        x = shared(np.ones(3, "float32"))
        assert not isinstance(x, GpuArraySharedVariable)
        with config.change_flags(force_device=True), pytest.raises(DeviceUnavailable, match="opencl7:7"):
            get_context(None)


def test_shared_variables_live_on_the_device(opencl):
    value = np.arange(4, dtype="float32")
    s = shared(value, borrow=True)
    assert isinstance(s, GpuArraySharedVariable)
    value[0] = 100  # the GPU cannot alias host memory, even with borrow=True
    host = s.get_value(borrow=True)
    assert isinstance(host, np.ndarray) and host[0] == 0
    host[1] = 100  # and the host array handed out is not the device buffer
    assert s.get_value()[1] == 1
    internal = s.get_value(borrow=True, return_internal_type=True)
    assert isinstance(internal, GpuArray) and internal is s.get_value(borrow=True, return_internal_type=True)
    copy = s.get_value(return_internal_type=True)
    assert copy is not internal and np.array_equal(np.asarray(copy), np.arange(4))
    new = np.full(4, 5, "float32")
    s.set_value(new)
    new[:] = 0
    assert np.array_equal(s.get_value(), np.full(4, 5))
    kept = shared(np.ones(2, "float32"), target="cpu")
    assert not isinstance(kept, GpuArraySharedVariable)


def test_outputs_and_inputs_keep_their_promises(opencl):
    x = T.fvector("x")
    value = np.arange(5, dtype="float32")
    f = function([In(x)], T.exp(x))
    first, second = f(value), f(value)
    assert isinstance(first, np.ndarray) and first is not second
    assert np.array_equal(value, np.arange(5))  # the caller's input is untouched
    on_device = function([x], Out(T.exp(x).transfer(None), borrow=True))
    a, b = on_device(value), on_device(value)
    assert isinstance(a, GpuArray) and a is b  # the internal buffer, no copy back
    fresh = function([x], T.exp(x).transfer(None))
    c, d = fresh(value), fresh(value)
    assert isinstance(c, GpuArray) and c is not d
    np.testing.assert_allclose(np.asarray(c), np.exp(value), rtol=1e-6)
    assert not any(type(n.op).__name__ == "HostFromGpu" for n in fresh.maker.fgraph.toposort())


def test_updates_of_a_device_shared_variable_stay_on_the_device(opencl):
    s = shared(np.zeros(3, "float32"), name="s")
    step = function([], s.sum(), updates=[(s, s + 1)])
    assert step() == 0 and step() == 3
    assert np.array_equal(s.get_value(), np.full(3, 2))
    names = [type(n.op).__name__ for n in step.maker.fgraph.toposort()]
    assert "GpuFromHost" not in names and all("Gpu" in n for n in names)


def test_float64_on_a_device_without_fp64_is_explained(opencl, monkeypatch, capsys):
    monkeypatch.setattr(get_context(None), "fp64", False)
    x = T.dvector("x")
    f = function([x], T.exp(x))
    text = arignote.explain(f)
    assert "reason: float64" in text and "no fp64" in text and "floatX=float32" in text
    with config.change_flags(warn_float64="warn"), pytest.warns(UserWarning, match="'x'"):
        function([x], T.exp(x))
    np.testing.assert_allclose(f(np.ones(2)), np.exp(np.ones(2)))


def test_explain_names_the_device_of_every_node_when_verbose(opencl):
    x = T.fvector("x")
    text = arignote.explain(function([x], T.exp(x)), verbose=True)
    assert "device: gpu (opencl" in text and "device: transfer" in text


def test_seed_script_uses_the_gpu():
    from tests.gpu.conftest import unavailable
    if unavailable("opencl"):
        pytest.skip(unavailable("opencl"))
    script = (
        "from arignote import function, config, shared, tensor\nimport numpy\n"
        "x = shared(numpy.asarray(numpy.random.RandomState(22).rand(10 * 30 * 768), config.floatX))\n"
        "f = function([], tensor.exp(x))\nprint(f.maker.fgraph.toposort())\nr = f()\n"
        "assert numpy.allclose(r, numpy.exp(x.get_value()))\n"
        "if numpy.any([isinstance(x.op, tensor.Elemwise) and ('Gpu' not in type(x.op).__name__)\n"
        "              for x in f.maker.fgraph.toposort()]):\n    print('Used the cpu')\n"
        "else:\n    print('Used the gpu')\n")
    env = dict(os.environ, ARIGNOTE_FLAGS="device=opencl0:0,floatX=float32,"
               "opencl.background_binaries=False",
               PYTHONPATH=os.path.join(ROOT, "src"))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().endswith("Used the gpu")
    graph = out.splitlines()[0]
    assert graph.startswith("[GpuElemwise{exp}(") and graph.endswith(", HostFromGpu(GpuElemwise{exp}.0)]")


def _train(device: str):
    with config.change_flags(device=device, floatX="float32"):
        rng = np.random.default_rng(0)
        data = rng.normal(size=(64, 5)).astype("float32")
        labels = (data @ np.arange(5) > 0).astype("float32")
        x, t = T.fmatrix("x"), T.fvector("t")
        w = shared(np.zeros(5, "float32"), name="w")
        b = shared(np.float32(0), name="b")
        p = T.nnet.sigmoid(T.dot(x, w) + b)
        cost = T.mean(-t * T.log(p) - (1 - t) * T.log(1 - p))
        gw, gb = arignote.grad(cost, [w, b])
        train = function([x, t], cost, updates=[(w, w - 0.5 * gw), (b, b - 0.5 * gb)])
        for _ in range(30):
            train(data, labels)
        return w.get_value(), b.get_value(), train


def test_logistic_regression_gives_the_same_weights_on_cpu_and_opencl(opencl):
    w_cpu, b_cpu, _ = _train("cpu")
    w_cl, b_cl, train = _train("opencl")
    np.testing.assert_allclose(w_cl, w_cpu, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b_cl, b_cpu, rtol=1e-4, atol=1e-5)
    assert "GpuDot" in [type(n.op).__name__ for n in train.maker.fgraph.toposort()]


def test_no_driver_is_imported_without_a_gpu_device():
    code = ("import sys, arignote, numpy\nf = arignote.function([], arignote.shared(numpy.ones(2)) * 2)\n"
            "f()\nprint('pyopencl' in sys.modules, 'cupy' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), ARIGNOTE_FLAGS="device=cpu")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]


def test_device_opencl_prefers_a_gpu_then_an_accelerator_and_says_which_it_took():
    cl = pytest.importorskip("pyopencl")
    from arignote.backends.gpu.opencl import choose
    CPU, GPU, ACC = cl.device_type.CPU, cl.device_type.GPU, cl.device_type.ACCELERATOR
    assert choose([[CPU], [CPU, GPU]]) == (1, 1, "the first GPU-type device")
    assert choose([[CPU, ACC], [CPU]]) == (0, 1, "the first accelerator-type device")
    assert choose([[ACC], [GPU]])[:2] == (1, 0)
    p, d, why = choose([[CPU]])
    assert (p, d) == (0, 0) and "no GPU-type OpenCL device" in why
    with pytest.raises(RuntimeError, match="no OpenCL device"):
        choose([[]])


def test_explain_names_the_device_opencl_took(opencl):
    from arignote.backends.gpu import get_context
    x = T.fvector("x")
    line = arignote.explain(function([x], T.exp(x)), file=io.StringIO()).splitlines()[0]
    device = get_context(None).device
    assert f"(device=opencl took {device.chosen})" in line
    if device.on_cpu:
        assert "not a GPU" in line


def test_info_names_the_driver_to_install_for_a_gpu_opencl_cannot_see(tmp_path):
    from arignote.devices import gpus_present, no_gpu_driver
    for card, vendor in (("card0", "0x8086"), ("card0-DP-1", "0x1002"), ("card1", "0x1002")):
        (tmp_path / card / "device").mkdir(parents=True)
        (tmp_path / card / "device" / "vendor").write_text(vendor + "\n")
    assert gpus_present(str(tmp_path)) == ["0x8086", "0x1002"]
    text = no_gpu_driver(["0x8086", "0x1002"])
    assert "an Intel GPU is present but has no usable OpenCL driver: install intel-opencl-icd" in text
    assert "an AMD GPU is present" in text and "rocm-opencl-runtime" in text
    assert no_gpu_driver([]).startswith("no GPU-type OpenCL device: install your GPU's driver "
                                        "(intel-opencl-icd, Mesa rusticl, ROCm)")
    assert gpus_present(str(tmp_path / "missing")) == []


def _float64_inside(x):
    """float32 in and out, a float64 step in between (one fused composite)."""
    return T.cast(T.sqrt(T.exp(T.cast(x, "float64")) * np.float32(0.25)), "float32")


def test_a_composite_computing_in_float64_inside_gets_the_fp64_pragma():
    from arignote.backends.kernels import render
    from arignote.scalar.composite import Composite
    from arignote.scalar.ops import TABLE, Cast
    chain = Composite(1, ["float32"], [(Cast("float64"), (0,)), (TABLE["exp"], (1,)),
                                       (Cast("float32"), (2,))], 3)
    kernel = render.elemwise(render.OPENCL, chain, ["float32"], "float32", 1, True)
    assert "float64" in kernel.dtypes and "cl_khr_fp64" in kernel.source
    assert "cl_khr_fp64" not in render.elemwise(render.OPENCL, TABLE["exp"], ["float32"], "float32",
                                                1, True).source


def test_float64_inside_a_fused_composite_keeps_it_off_a_device_without_fp64(opencl, monkeypatch):
    x = T.fvector("x")
    data = np.linspace(0.5, 3, 101).astype("float32")
    want = np.sqrt(np.exp(data.astype("float64")) * 0.25).astype("float32")
    on_device = function([x], _float64_inside(x))
    assert any("Gpu" in type(n.op).__name__ and "Composite" in str(n.op) for n in on_device.maker.fgraph.toposort())
    np.testing.assert_array_equal(on_device(data), want)
    monkeypatch.setattr(get_context(None), "fp64", False)
    kept = function([x], _float64_inside(x))
    fused = [n for n in kept.maker.fgraph.toposort() if "Composite" in str(n.op)]
    assert fused and all("Gpu" not in type(n.op).__name__ for n in fused)
    text = arignote.explain(kept, file=io.StringIO())
    assert "computes in float64 inside" in text and "no fp64" in text
    np.testing.assert_array_equal(kept(data), want)
