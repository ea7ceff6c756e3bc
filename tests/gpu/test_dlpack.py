"""GpuArray speaks DLPack (and __cuda_array_interface__ on CUDA): arrays of other libraries
come in and go out without a copy. On PoCL (an OpenCL device that is the CPU) that is host
memory, shared with numpy; the CUDA tests run where CuPy and a GPU are, and skip elsewhere."""
from __future__ import annotations

import numpy as np
import pytest

from arignote.backends.gpu import get_context
from arignote.backends.gpu.array import from_dlpack
from tests.gpu.conftest import use


@pytest.fixture
def cpu_opencl(opencl):
    ctx = get_context(None)
    if not ctx.device.on_cpu:
        pytest.skip("the OpenCL device is a GPU: its buffers are not host memory")
    return ctx


def test_numpy_arrays_round_trip_through_a_cpu_opencl_device_sharing_memory(cpu_opencl):
    ctx = cpu_opencl
    host = np.arange(12, dtype="float32").reshape(3, 4)
    g = from_dlpack(ctx, host)
    assert g.shape == (3, 4) and g.dtype == np.float32 and g.__dlpack_device__() == (1, 0)
    back = np.from_dlpack(g)
    assert np.shares_memory(back, host) and back.shape == (3, 4)
    ctx.copy_into(g, np.asarray(7, "float32"))  # a kernel writes the producer's memory
    ctx.device.synchronize()
    assert (host == 7).all() and (back == 7).all()
    view = g.view((4, 3), (1, 4), 0)  # a transposed view goes out as one
    np.testing.assert_array_equal(np.from_dlpack(view), host.T)
    assert np.shares_memory(np.from_dlpack(view), host)


def test_a_device_array_exports_after_the_work_queued_before(cpu_opencl):
    from arignote.backends.gpu.array import to_gpu
    ctx = cpu_opencl
    g = to_gpu(ctx, np.zeros(1000, "float64"))
    ctx.copy_into(g, np.asarray(2.5))
    np.testing.assert_array_equal(np.from_dlpack(g), np.full(1000, 2.5))


def test_an_opencl_gpu_refuses_dlpack_clearly(opencl, monkeypatch):
    from arignote.backends.gpu.array import to_gpu
    ctx = get_context(None)
    g = to_gpu(ctx, np.ones(3, "float32"))
    monkeypatch.setattr(ctx.device, "on_cpu", False)
    with pytest.raises(BufferError, match="not host memory.*numpy.asarray"):
        np.from_dlpack(g)
    with pytest.raises(AttributeError, match="not a CUDA device"):
        g.__cuda_array_interface__  # noqa: B018


@pytest.fixture
def cuda():
    with use("cuda0"):
        yield get_context(None)


def test_cupy_arrays_round_trip_through_a_cuda_device_sharing_memory(cuda):
    cupy = pytest.importorskip("cupy")
    source = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
    g = from_dlpack(cuda, source)
    assert g.__dlpack_device__() == (2, cuda.device.index)
    back = cupy.from_dlpack(g)
    assert back.data.ptr == source.data.ptr
    assert g.__cuda_array_interface__["data"][0] == source.data.ptr
    cuda.copy_into(g, np.asarray(3, "float32"))
    cuda.device.synchronize()
    assert bool((source == 3).all())
    torch = pytest.importorskip("torch")
    t = torch.from_dlpack(g)
    assert t.data_ptr() == source.data.ptr
