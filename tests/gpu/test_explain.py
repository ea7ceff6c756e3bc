"""explain(): totals first (nodes per device, transfers and bytes per call, the largest
transfers and why), then only the nodes off the requested device; verbose lists all."""
from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import arignote
from arignote import Mode, config, function, shared, tensor as T
from arignote.backends.gpu import get_context
from arignote.backends.gpu.placement import TRANSFERS
from arignote.backends.gpu.ops import GpuOp


def _step():
    rng = np.random.default_rng(0)
    X, y = T.fmatrix("X"), T.ivector("y")
    w = shared(rng.normal(size=(5, 3)).astype("float32"), name="w")
    cost = T.nnet.categorical_crossentropy(T.nnet.softmax(T.dot(X, w)), y).mean()
    step = function([X, y], cost, updates=[(w, w - np.float32(0.1) * arignote.grad(cost, w))])
    return step, rng.normal(size=(8, 5)).astype("float32"), rng.integers(0, 3, 8).astype("int32")


def _explain(f, **kwargs):
    return arignote.explain(f, file=io.StringIO(), **kwargs)


def test_totals_count_the_nodes_of_each_kind_and_only_cpu_nodes_are_listed(opencl):
    with config.change_flags(floatX="float32"):
        step, data, labels = _step()
    nodes = step.maker.fgraph.toposort()
    on_gpu = [n for n in nodes if isinstance(n.op, GpuOp)]
    moves = [n for n in nodes if isinstance(n.op, TRANSFERS)]
    on_cpu = [n for n in nodes if n not in on_gpu and n not in moves]
    text = _explain(step)
    assert (f"nodes: {len(nodes)} in all, {len(on_gpu)} on the device, {len(on_cpu)} on the CPU, "
            f"{len(moves)} transfers") in text
    listed = text.split("nodes on the CPU:\n")[1]
    assert all(str(n) in listed for n in on_cpu)
    assert "device: gpu" not in text and listed.count("    reason: ") == len(on_cpu)
    verbose = _explain(step, verbose=True)
    assert all(str(n) in verbose for n in nodes) and "device: gpu (opencl" in verbose


def test_transfers_per_call_with_their_bytes_and_reasons(opencl):
    with config.change_flags(floatX="float32"):
        x = T.fmatrix("x")
        f = function([x], T.exp(x).sum(axis=1))
    before = _explain(f)
    assert "transfers per call: 1 to the device, 1 to the host" in before  # sizes not known yet
    f(np.ones((100, 20), "float32"))
    text = _explain(f)
    assert "transfers per call: 1 to the device (8.0 kB), 1 to the host (400 B)" in text
    upload = next(line for line in text.splitlines() if line.strip().startswith("GpuFromHost"))
    assert "(8.0 kB): input 'x' comes as a host array" in upload
    assert "output 0 is returned as a host array" in text


def test_a_transfer_made_for_a_cpu_node_gives_that_nodes_reason(opencl):
    with config.change_flags(floatX="float32"):
        x, i = T.fvector("x"), T.lvector("i")
        f = function([x, i], T.exp(x[i > 0]) * 2)  # boolean indexing has no GPU kernel
    text = _explain(f)
    assert "AdvancedBooleanSubtensor" in text and ("runs on the CPU (only integer index arrays have a GPU "
                                            "kernel (a boolean mask: no))") in text


def test_an_opencl_device_on_the_cpu_says_so(opencl):
    device = get_context(None).device
    x = T.fvector("x")
    text = _explain(function([x], T.exp(x)))
    assert text.startswith(f"device: {device.name}, {device.description}")
    if device.on_cpu:
        assert "runs on the CPU" in text.splitlines()[0] and "not a GPU" in text.splitlines()[0]


def test_after_a_device_fallback_the_real_reason_is_given():
    with config.change_flags(device="opencl7:7"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = T.vector("x")
        f = function([x], T.exp(x) * 2)
        text = _explain(f)
        verbose = _explain(f, verbose=True)
    assert "opencl7:7 was requested but cannot be used" in text and "no OpenCL platform 7" in text
    assert "placed after" not in verbose and "reason: device opencl7:7 cannot be used" in verbose
    assert "nodes on the CPU" not in text  # the first line has said it for every node


def test_the_cpu_device_and_a_mode_without_placement(opencl):
    x = T.fvector("x")
    with config.change_flags(device="cpu"):
        text = _explain(function([x], T.exp(x)))
    assert text.startswith("device: cpu") and "nodes: 1 in all, 0 on the device, 1 on the CPU" in text
    text = _explain(function([x], T.exp(x), mode=Mode(optimizer=None)))
    assert "did not run the placement pass" in text


@pytest.mark.parametrize("verbose", [False, True])
def test_explain_returns_what_it_prints(opencl, verbose, capsys):
    x = T.fvector("x")
    text = arignote.explain(function([x], T.exp(x)), verbose=verbose)
    assert capsys.readouterr().out == text + "\n"
