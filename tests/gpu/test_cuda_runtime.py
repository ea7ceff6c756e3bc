"""The CUDA runtime's host side, run here against a stand-in for CuPy that records what it
is asked (no NVIDIA GPU is needed): one stream for copies, kernels and cuDNN, grids within
CUDA's limits, scalar arguments of the declared types, one NVRTC module per build, and a
clear error at device open when NVRTC is missing. The kernels themselves compile with nvcc
and NVRTC in test_render.py and test_op_suite.py; on a real GPU the cuda legs of the suite run."""
from __future__ import annotations

import importlib
import sys
import types

import numpy as np
import pytest

from arignote.backends import gpu as gpu_package
from arignote.backends.gpu.context import DeviceUnavailable, open_device
from arignote.backends.kernels import program, render
from arignote.scalar.ops import TABLE


class _Log(list):
    def add(self, *event):
        self.append(event)


class _Memory:
    """A device pointer: ``+ offset``, and copies from and to host memory (recorded)."""

    def __init__(self, log, array, offset=0):
        self.log, self.array, self.offset = log, array, offset

    def __add__(self, n):
        return _Memory(self.log, self.array, self.offset + n)

    def copy_from_host_async(self, ptr, nbytes, stream):
        self.log.add("upload", nbytes, stream)

    def copy_to_host_async(self, ptr, nbytes, stream):
        self.log.add("download", nbytes, stream)


def _fake_cupy(log: _Log, nvrtc: bool = True) -> types.ModuleType:
    cupy = types.ModuleType("cupy")
    cupy.__version__ = "0-stand-in"

    class Device:
        def __init__(self, index):
            self.index = index

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class Stream(Device):
        def __init__(self, non_blocking=False):
            self.non_blocking = non_blocking

        def __enter__(self):
            log.current = self
            return self

        def __exit__(self, *exc):
            log.current = None
            return False

        def synchronize(self):
            log.add("synchronize", self)

    class Array:
        def __init__(self, n):
            self.data = _Memory(log, np.zeros(n, np.uint8))

    class RawModule:
        def __init__(self, code, backend):
            log.add("module", code, backend)

        def get_function(self, name):
            def launch(grid, block, args, stream=None):
                log.add("launch", name, grid, block, args, stream)
            return launch

    def get_version():
        if not nvrtc:
            raise OSError("libnvrtc.so.12: cannot open shared object file")
        return (12, 4)

    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1, runtimeGetVersion=lambda: 12040,
        getDeviceProperties=lambda i: {"name": b"Stand-in GPU", "major": 9, "minor": 0,
                                       "multiProcessorCount": 132, "totalGlobalMem": 1 << 30})
    cupy.cuda = types.SimpleNamespace(Device=Device, Stream=Stream, runtime=runtime,
                                      nvrtc=types.SimpleNamespace(getVersion=get_version))
    cupy.empty = lambda n, dtype: Array(n)
    cupy.RawModule = RawModule
    cupy.ndarray = lambda shape, dtype, memptr, strides=None: ("view", shape, memptr.offset)
    return cupy


def _fake_cudnn(log: _Log) -> types.ModuleType:
    cudnn = types.ModuleType("cupyx.cudnn")
    for name in ("convolution_forward", "convolution_backward_filter", "convolution_backward_data"):
        def call(*args, _name=name, **kwargs):
            log.add("cudnn", _name, getattr(log, "current", None))
        setattr(cudnn, name, call)
    return cudnn


def _forget_runtime() -> None:
    """No trace of a cuda module imported against a stand-in: the next import is a real one."""
    sys.modules.pop("arignote.backends.gpu.cuda", None)
    vars(gpu_package).pop("cuda", None)


@pytest.fixture
def cuda_runtime(monkeypatch):
    """The cuda module imported against the stand-in, and the stand-in's log."""
    log = _Log()
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(log))
    cupyx = types.ModuleType("cupyx")
    cupyx.cudnn = _fake_cudnn(log)
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    monkeypatch.setitem(sys.modules, "cupyx.cudnn", cupyx.cudnn)
    _forget_runtime()
    try:
        yield importlib.import_module("arignote.backends.gpu.cuda"), log
    finally:
        _forget_runtime()


def test_copies_and_kernels_go_to_the_devices_own_stream(cuda_runtime):
    runtime, log = cuda_runtime
    device = runtime.Device(0)
    assert device.stream.non_blocking  # not the legacy default stream
    buffer = device.alloc(40)
    device.upload(buffer, np.zeros(10, "float32"))
    device.download(np.empty(10, "float32"), buffer, 0)
    k = render.elemwise(render.CUDA, TABLE["exp"], ["float32"], "float32", 1, True)
    (compiled,) = device.build([k])
    device.launch(compiled, (1000,), (256,), [buffer, 0, buffer, 0, 10])
    streams = [e[2] for e in log if e[0] in ("upload", "download")] + [e[5] for e in log if e[0] == "launch"]
    assert len(streams) == 3 and all(s is device.stream for s in streams)
    # a download returns when its data is there: the stream is waited for
    assert ("synchronize", device.stream) in log


def test_cudnn_convolutions_run_on_the_devices_stream_too(cuda_runtime):
    runtime, log = cuda_runtime
    device = runtime.Device(0)
    arrays = [types.SimpleNamespace(shape=(1, 1, 4, 4), dtype=np.dtype("float32"), buffer=device.alloc(64),
                                    offset=0, strides=(16, 16, 4, 1)) for _ in range(3)]
    for kind in ("forward", "weights", "inputs"):
        device.conv(kind, *arrays, ((1, 1), (1, 1)), (1, 1), (1, 1), 1)
    calls = [e for e in log if e[0] == "cudnn"]
    assert len(calls) == 3 and all(e[2] is device.stream for e in calls)


def test_grids_stay_within_cudas_limits(cuda_runtime):
    runtime, _ = cuda_runtime
    assert runtime.grid((1 << 20, 16 * 200_000, 100_000), (16, 16, 1)) == (65536, 65535, 65535)
    assert runtime.grid((300,), (256,)) == (2,)
    # The GEMM puts row blocks in grid.y and batches in grid.z: it loops over the rest.
    source = render.gemm(render.CUDA, "float32", 1).source
    assert "by += gridDim.y" in source and "bz += gridDim.z" in source


def test_scalar_arguments_take_the_types_of_the_parameter_list(cuda_runtime):
    runtime, log = cuda_runtime
    device = runtime.Device(0)
    k = render.gemm(render.CUDA, "float32")
    (compiled,) = device.build([k])
    buffer = device.alloc(64)
    args = [buffer, 0, 4, 1, buffer, 0, 4, 1, buffer, 0, 4, 1, 4, 4, 4, 1.0, 0.0]
    device.launch(compiled, (16, 16, 1), (16, 16, 1), args)
    passed = log[-1][4]
    assert [type(a) for a in passed[12:]] == [np.int64] * 3 + [np.float32] * 2
    assert passed[0] is buffer and passed[15] == np.float32(1.0)


def test_a_build_is_one_nvrtc_module_and_built_kernels_are_not_built_again(cuda_runtime):
    runtime, log = cuda_runtime
    device = runtime.Device(0)
    ks = [render.elemwise(render.CUDA, TABLE[name], ["float32"], "float32", 1, True) for name in ("exp", "tanh")]
    assert device.missing(ks) == ks
    first = device.build(ks)
    modules = [e for e in log if e[0] == "module"]
    assert len(modules) == 1 and modules[0][2] == "nvrtc"
    assert all(f"void {program.entry_name(k)}(" in modules[0][1] for k in ks)
    assert device.missing(ks) == [] and device.build(ks[::-1]) == first[::-1]
    assert len([e for e in log if e[0] == "module"]) == 1


def test_a_device_without_nvrtc_is_refused_at_open_with_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(_Log(), nvrtc=False))
    _forget_runtime()
    try:
        with pytest.raises(DeviceUnavailable) as info:
            open_device("cuda0")
    finally:
        _forget_runtime()
    text = str(info.value)
    assert "cannot load NVRTC" in text and 'pip install "arignote[cuda]"' in text
    assert "cupy-cuda12x[ctk]" in text and "libnvrtc.so.12" in text
