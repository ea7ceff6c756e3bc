"""A function's kernels built at function() time as one program, kept in the disk cache
(corrupt entries rebuilt), with scalar argument types read from the kernel signatures."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from arignote import config, function, tensor as T
from arignote.backends.gpu import binaries, get_context
from arignote.backends.kernels import program, render
from arignote.compile.profiling import kernel_builds
from arignote.scalar.ops import TABLE


def test_argument_types_come_from_the_parameter_list():
    k = render.elemwise(render.OPENCL, TABLE["mul"], ["float32", "int16"], "float32", 2, False,
                        by_value=[1])
    assert program.arg_dtypes(render.OPENCL, k) == (
        None, "int64", None, "int64", "int16", "int64", "int64", "int64", "int64", "int64", "int64", "int64")
    g = render.gemm(render.CUDA, "float64")
    types = program.arg_dtypes(render.CUDA, g)
    assert types[:2] == (None, "int64") and types[-2:] == ("float64", "float64")
    assert program.arg_dtypes(render.CUDA, render.reduce(render.CUDA, "add", "bool", "int64", "int64", 1, 1)
                              )[:4] == (None, "int64", None, "int64")
    # A uint8 host value by value is a uchar, passed as uint8: as bool, 252 would arrive as 1.
    k = render.elemwise(render.OPENCL, TABLE["sub"], ["uint8", "float64"], "float64", 0, True, by_value=[0])
    assert program.arg_dtypes(render.OPENCL, k)[2] == "uint8"


def test_a_uint8_host_value_passed_by_value_keeps_its_value(opencl):
    x = T.tensor(dtype="uint8", broadcastable=())
    f = function([x], T.cast(x, "float64") - x.mean())
    assert f(np.asarray(252, "uint8")) == 0


def test_joined_kernels_keep_their_own_entry_and_defines():
    a = render.gemm(render.OPENCL, "float32")
    b = render.gemm(render.OPENCL, "float32", 1)
    source = program.join(render.OPENCL, [a, b])
    assert source.count("typedef long index_t;") == 1 and source.count("#undef TILE") == 2
    assert program.entry_name(a) != program.entry_name(b)
    assert f"void {program.entry_name(a)}(" in source and f"void {program.entry_name(b)}(" in source


def _graph():
    x, y = T.fmatrix("x"), T.fmatrix("y")
    return [x, y], [T.exp(x) * y, x.sum(axis=1), T.nnet.softmax(y), T.dot(x, y)]


def _counting_builds(monkeypatch) -> tuple[list[int], int]:
    """An empty kernel memo on the device, and the list its program builds append their
    kernel counts to; with the build count before."""
    device = get_context(None).device
    monkeypatch.setattr(device, "_kernels", {})
    builds: list[int] = []
    build = device._build_program
    monkeypatch.setattr(device, "_build_program", lambda group, options: (
        builds.append(len(group)), build(group, options))[1])
    return builds, kernel_builds()[1]


def test_the_kernels_of_a_function_are_one_program_and_built_at_function_time(opencl, monkeypatch):
    builds, before = _counting_builds(monkeypatch)
    with config.change_flags(floatX="float32"):
        f = function(*_graph())
    assert builds == [4]  # elementwise, reduction, softmax, GEMM
    assert kernel_builds()[1] - before == 4
    data = np.random.RandomState(0).rand(2, 8, 8).astype("float32")
    np.testing.assert_allclose(f(*data)[3], data[0] @ data[1], rtol=1e-5)
    assert builds == [4]  # the first call built nothing
    # The same graph again: every kernel is found, none built or counted as built.
    g = function(*_graph())
    np.testing.assert_allclose(g(*data)[0], np.exp(data[0]) * data[1], rtol=1e-6)
    assert builds == [4] and kernel_builds()[1] - before == 4


def test_the_twelve_kernel_graph_of_the_benchmark_is_one_program(opencl, monkeypatch):
    """benchmarks/gpu.py G4: one program build for every kernel; the first call builds none."""
    builds, before = _counting_builds(monkeypatch)
    with config.change_flags(floatX="float32"):
        x, y = T.matrix("x"), T.matrix("y")
        f = function([x, y], [T.exp(x), T.sin(y) * 2, x.sum(axis=0), x.sum(axis=1), y.max(axis=1),
                              T.argmax(x, axis=1), T.nnet.softmax(y), T.nnet.logsoftmax(x), T.dot(x, y),
                              T.sqrt(abs(x)) + 1, y.prod(axis=0), T.maximum(x, y) - T.log1p(abs(y))])
    assert len(builds) == 1 and builds[0] >= 10 and kernel_builds()[1] - before == builds[0]
    data = np.random.RandomState(1).rand(2, 64, 64).astype("float32")
    results = f(*data)
    np.testing.assert_allclose(results[8], data[0] @ data[1], rtol=1e-5)
    np.testing.assert_array_equal(results[5], data[0].argmax(axis=1))
    assert len(builds) == 1 and kernel_builds()[1] - before == builds[0]


def _small():
    x = T.fvector("x")
    return [x], [T.tanh(x) * 3, x.sum()]


@pytest.fixture
def fresh(opencl, tmp_path, monkeypatch):
    """The device with an empty in-memory memo, a disk cache in ``tmp_path`` (on PoCL too,
    which has its own: serialising a PoCL program is slow, so these graphs are small),
    its builds counted."""
    device = get_context(None).device
    monkeypatch.setattr(device, "_kernels", {})
    monkeypatch.setattr(device, "cache_binaries", True)
    builds, stored = [], []
    build, store = device._build_program, binaries.store
    monkeypatch.setattr(device, "_build_program", lambda group, options: (
        builds.append(len(group)), build(group, options))[1])
    monkeypatch.setattr(binaries, "store", lambda name, data: (stored.append(name), store(name, data))[1])
    with config.change_flags(compiledir=str(tmp_path), floatX="float32"):
        yield device, builds, stored, tmp_path


@pytest.mark.parametrize("damage", ["truncated", "refused"])
def test_a_corrupt_or_refused_entry_is_rebuilt_and_written_again(fresh, monkeypatch, damage):
    """Truncated: its digest differs. Refused: whole, but not a program the driver takes."""
    device, builds, stored, cache_dir = fresh
    function(*_small())
    entry = cache_dir / f"gpu-{stored[0]}.bin"
    good = entry.read_bytes()
    entry.write_bytes(good[:-10] if damage == "truncated" else
                      hashlib.sha256(b"not a program").digest() + b"not a program")
    monkeypatch.setattr(device, "_kernels", {})
    f = function(*_small())
    assert builds == [2, 2] and len(stored) == 2 and stored[0] == stored[1]
    assert binaries.load(stored[0]) is not None and not list(cache_dir.glob("*.tmp"))
    np.testing.assert_allclose(f(np.ones(3, "float32"))[1], 3)


def test_an_unwritable_cache_only_costs_the_next_process_a_build(fresh, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with config.change_flags(compiledir=str(blocker / "cache")):
        x = T.fvector("x")
        f = function([x], T.tanh(x) * 7)
    np.testing.assert_allclose(f(np.zeros(3, "float32")), [0, 0, 0])
