"""The OpenCL runtime's own contract (PoCL here and in CI): an allocation the device
cannot hold is a MemoryError saying how much, where, and what to do; a kernel's arguments,
kept between launches, are set again whenever they change."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import Out, function, shared
from arignote import tensor as T
from arignote.backends.gpu import get_context
from arignote.backends.gpu.type import GpuArrayType


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


def test_a_kernel_shared_by_nodes_gets_each_nodes_arguments(opencl):
    # exp(x) and exp(y) are one kernel object: each launch whose arguments differ from the
    # kernel's last sets them again; new buffers (a new input size) are seen as new.
    x, y = T.fvector("x"), T.fvector("y")
    f = function([x, y], [T.exp(x), T.exp(y)])
    for n in (3, 3, 5, 2):
        a, b = np.linspace(-1, 0, n).astype("float32"), np.linspace(0, 1, n).astype("float32")
        got = f(a, b)
        np.testing.assert_allclose(got[0], np.exp(a), rtol=1e-6)
        np.testing.assert_allclose(got[1], np.exp(b), rtol=1e-6)


def test_a_negative_zero_argument_is_not_taken_for_a_zero(opencl):
    # A host scalar (integer arithmetic stays on the host) goes to the kernel by value, the
    # other arguments (a shared variable, the reused output) staying the same: 0.0 and
    # then -0.0 are two arguments, though they compare equal.
    x, i, j = shared(np.ones(2, "float32")), T.lscalar("i"), T.lscalar("j")
    f = function([i, j], 1 / (x * (T.cast(i, "float32") * T.cast(j, "float32"))))
    assert any("Gpu" in type(n.op).__name__ and not isinstance(n.inputs[-1].type, GpuArrayType)
               for n in f.maker.fgraph.toposort() if n.inputs)
    with np.errstate(divide="ignore"):
        assert list(f(0, 1)) == [np.inf, np.inf]
        assert list(f(0, -1)) == [-np.inf, -np.inf]


def test_a_node_launching_again_on_the_same_arrays_gets_its_own_arguments(opencl):
    # Two nodes of one kernel object on the same arrays each call: a node relaunches with
    # nothing set only when its launch was the kernel's last; new values come in.
    s, t = shared(np.float32([1, 2, 3]), "s"), shared(np.float32([-1, 0, 1]), "t")
    outs = [Out(T.exp(v).transfer(None), borrow=True) for v in (s, t)]
    f, g = function([], outs), function([], outs[0])
    for _ in range(3):
        got = [np.asarray(a) for a in f()]
        np.testing.assert_allclose(got[0], np.exp(s.get_value()), rtol=1e-6)
        np.testing.assert_allclose(got[1], np.exp(t.get_value()), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(g()), np.exp(s.get_value()), rtol=1e-6)
        s.set_value(s.get_value() + 1)


def test_an_output_handed_out_and_dropped_is_not_launched_into_again(opencl):
    # The caller owns each result (no borrow): the next call must not take the dropped
    # result's freed buffer for the same launch.
    s = shared(np.float32([0, 1, 2]), "s")
    f = function([], T.exp(s).transfer(None))
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f()), np.exp([0, 1, 2]), rtol=1e-6)
    kept = [f() for _ in range(2)]
    assert kept[0] is not kept[1]
