"""Device reductions in every form the plan can pick (group or thread, one or two stages),
against numpy, and the plan's choice by shape and device."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from arignote import Out, config, function, shared, tensor as T
from arignote.backends.gpu import get_context
from arignote.backends.gpu.ops import GpuCAReduce, reduction_plan

CPU_DEVICE = SimpleNamespace(on_cpu=True, compute_units=2)
GPU_DEVICE = SimpleNamespace(on_cpu=False, compute_units=80)


def test_the_plan_picks_by_shape_and_device():
    # A CPU device: one thread per unit, enough units for its cores, shares of at most 2**15.
    assert reduction_plan(CPU_DEVICE, 1, 4_000_000, 1, []) == (True, 123)
    assert reduction_plan(CPU_DEVICE, 2000, 2000, 1, [2000]) == (True, 1)
    assert reduction_plan(CPU_DEVICE, 1, 100, 1, []) == (True, 1)
    # A GPU: a full sum in two stages of work-groups; rows over a contiguous axis: a group
    # per row; columns (outputs side by side, a strided reduced axis): a thread per column.
    per_thread, splits = reduction_plan(GPU_DEVICE, 1, 4_000_000, 1, [])
    assert not per_thread and splits == 320
    assert reduction_plan(GPU_DEVICE, 2000, 2000, 1, [2000]) == (False, 1)
    assert reduction_plan(GPU_DEVICE, 4000, 4000, 4000, [1]) == (True, 1)
    assert reduction_plan(GPU_DEVICE, 100, 4000, 4000, [1])[0] is False


CASES = [((2000, 3), (0, 1)), ((7, 5000), (1,)), ((5000, 7), (0,)), ((3, 4, 5), (0, 2)),
         ((6, 1, 9), (0, 1, 2)), ((40, 300), (0,)), ((0, 4), (0,)), ((3, 0), (1,)), ((5, 6), ())]


@pytest.mark.parametrize("as_gpu", [False, True], ids=["cpu_device_plan", "gpu_plan"])
@pytest.mark.parametrize("shape, axis", CASES)
def test_every_form_matches_numpy(opencl, monkeypatch, as_gpu, shape, axis):
    """On PoCL, pretending the device is a GPU runs the GPU plan's kernels (groups, trees,
    two stages), so both plans are checked for values here."""
    device = get_context(None).device
    monkeypatch.setattr(device, "on_cpu", not as_gpu)
    if as_gpu:
        monkeypatch.setattr(device, "compute_units", 40)
    rng = np.random.RandomState(sum(shape))
    data = rng.uniform(-1, 1, shape).astype("float32")
    x = shared(data)
    ints = shared((data * 100).astype("int32"))
    exprs = {"sum": (T.sum(x, axis=axis), data.sum(axis=axis, dtype="float64"), 2e-5),
             "sumsq": ((x ** 2).sum(axis=axis), (data.astype("float64") ** 2).sum(axis=axis), 2e-5),
             "int": (T.sum(ints, axis=axis), (data * 100).astype("int32").sum(axis=axis), 0)}
    if all(shape[a] for a in axis):
        exprs["max"] = (T.max(x, axis=axis), data.max(axis=axis), 0)
    for name, (expr, want, rtol) in exprs.items():
        f = function([], Out(expr.transfer(None), borrow=True))
        reductions = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, GpuCAReduce)]
        assert reductions or axis == (), name  # over no axes the canonicalizer leaves only the map
        got = np.asarray(f())
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.sqrt(max(data.size, 1)),
                                   err_msg=f"{name} over {axis} of {shape}")
        np.testing.assert_allclose(np.asarray(f()), got, rtol=0)  # reused partial buffers


def test_sum_of_squares_runs_on_the_device(opencl):
    with config.change_flags(floatX="float32"):
        W = shared(np.arange(12, dtype="float32").reshape(3, 4))
        f = function([], (W ** 2).sum())
    nodes = f.maker.fgraph.toposort()
    assert any(isinstance(n.op, GpuCAReduce) and n.op.square for n in nodes)
    assert float(f()) == float((np.arange(12.0) ** 2).sum())


def test_accumulators_on_the_device_follow_theanos_rule(opencl, monkeypatch):
    """Theano's GPU rule: float32 in and out accumulates in float32 on the device (its tree
    and two-stage reductions lose little, and float64 is slow or absent on GPUs), where the
    CPU accumulates in float64; other sums keep their accumulator (int32 in int64), and one
    in float64 stays off a device without fp64."""
    data = np.random.RandomState(3).uniform(-1, 1, (300, 7)).astype("float32")
    x = shared(data)
    ints = shared((data * 100).astype("int32"))
    cases = {"float32": (x.sum(axis=0), "float32"), "mean": (x.mean(), "float32"),
             "int32": (ints.sum(axis=1), "int64"), "to float64": (x.sum(dtype="float64"), "float64"),
             "prod": (x.prod(axis=1), "float32")}
    for name, (expr, acc) in cases.items():
        f = function([], expr)
        nodes = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, GpuCAReduce)]
        assert [n.op.acc_dtype for n in nodes] == [acc], name
    np.testing.assert_allclose(function([], cases["float32"][0])(), data.sum(axis=0, dtype="float64"),
                               rtol=1e-5)
    monkeypatch.setattr(get_context(None), "fp64", False)
    f = function([], x.sum(dtype="float64"))
    assert not any(isinstance(n.op, GpuCAReduce) for n in f.maker.fgraph.toposort())
    np.testing.assert_allclose(f(), data.sum(dtype="float64"), rtol=1e-12)
    g = function([], x.sum())
    assert any(isinstance(n.op, GpuCAReduce) for n in g.maker.fgraph.toposort())
