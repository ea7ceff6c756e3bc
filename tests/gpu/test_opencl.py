"""The OpenCL runtime's own contract (PoCL here and in CI): an allocation the device
cannot hold is a MemoryError saying how much, where, and what to do."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, shared
from arignote import tensor as T
from arignote.backends.gpu import get_context


def test_a_huge_allocation_is_a_memory_error_with_the_size_and_the_device(opencl):
    x = T.fscalar("x")
    f = function([x], T.alloc(x, 2 ** 20, 2 ** 20))  # 4 TiB of float32
    with pytest.raises(MemoryError) as info:
        f(1)
    text = str(info.value)
    device = get_context(None).device
    assert "cannot allocate 4398046511104 bytes (4.0 TiB)" in text
    assert device.name in text and device.description in text
    assert f"at most {device.cl_device.max_mem_alloc_size} bytes" in text
    assert "INVALID_BUFFER_SIZE" not in text and "smaller" in text


def test_the_device_refusing_memory_is_a_memory_error_too(opencl, monkeypatch):
    from arignote.backends.gpu import opencl as runtime
    cl = runtime.cl
    record = getattr(getattr(cl, "_cl", None), "_ErrorRecord", None)
    if record is None:
        pytest.skip("this pyopencl builds its errors differently")
    code = cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE

    def refuse(*args, **kwargs):
        raise cl.MemoryError(record(msg="clCreateBuffer failed", code=code, routine="clCreateBuffer"))

    s = shared(np.zeros(4, "float32"), "s")
    monkeypatch.setattr(cl, "Buffer", refuse)
    with pytest.raises(MemoryError, match=r"cannot allocate \d+ bytes? on .*the driver refused it"):
        function([], s * 2)()
    monkeypatch.undo()
    np.testing.assert_array_equal(s.get_value(), np.zeros(4))
