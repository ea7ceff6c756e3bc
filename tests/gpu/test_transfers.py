"""Transfers per call of the tutorial training steps on a device: only the minibatch inputs
and the requested outputs move; the values are the CPU's."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import arignote
from arignote import config, function, shared, tensor as T
from arignote.backends.gpu import get_context
from arignote.backends.gpu.ops import GpuOp
from arignote.backends.gpu.ops_blas import GpuGemm
from arignote.backends.gpu.placement import TRANSFERS
from arignote.backends.gpu.ops import GpuElemwise
from arignote.backends.gpu.type import GpuArrayType, GpuFromHost, HostFromGpu
from arignote.tensor.elemwise import Elemwise
from arignote.graph.basic import Apply

N, BATCH, N_IN, N_HIDDEN, N_OUT = 60, 20, 12, 8, 5


def _data(seed=0):
    rng = np.random.RandomState(seed)
    return rng.rand(N, N_IN).astype("float32"), rng.randint(0, N_OUT, N)


def _classifier(x, y, hidden: bool):
    """The tutorials' graphs: dot, tanh, softmax, the L2 term, the negative log-likelihood of
    integer labels as ``log(p)[arange(n), y]``; their parameters."""
    rng = np.random.RandomState(1)
    if hidden:
        W1 = shared(rng.uniform(-0.3, 0.3, (N_IN, N_HIDDEN)).astype("float32"), name="W1")
        b1 = shared(np.zeros(N_HIDDEN, "float32"), name="b1")
        inputs, params, n_in = T.tanh(T.dot(x, W1) + b1), [W1, b1], N_HIDDEN
    else:
        inputs, params, n_in = x, [], N_IN
    W = shared(rng.uniform(-0.3, 0.3, (n_in, N_OUT)).astype("float32"), name="W")
    b = shared(np.zeros(N_OUT, "float32"), name="b")
    params += [W, b]
    p = T.nnet.softmax(T.dot(inputs, W) + b)
    cost = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
    if hidden:
        cost = cost + 0.001 * ((params[0] ** 2).sum() + (W ** 2).sum())
    return cost, params


def _step(hidden: bool, givens: bool):
    """An SGD step; with ``givens`` the data sets are shared variables sliced by the
    minibatch index (labels stored as floats and cast, as the tutorials do)."""
    data, labels = _data()
    x, y = T.matrix("x"), T.ivector("y")
    cost, params = _classifier(x, y, hidden)
    updates = [(q, q - 0.1 * g) for q, g in zip(params, arignote.grad(cost, params))]
    if givens:
        set_x = shared(data, name="set_x")
        set_y = T.cast(shared(labels.astype("float32"), name="set_y"), "int32")
        i = T.lscalar("i")
        f = function([i], cost, updates=updates, profile=True, givens={
            x: set_x[i * BATCH:(i + 1) * BATCH], y: set_y[i * BATCH:(i + 1) * BATCH]})
        calls = [(k,) for k in range(N // BATCH)]
    else:
        f = function([x, y], cost, updates=updates, profile=True)
        calls = [(data[k * BATCH:(k + 1) * BATCH], labels[k * BATCH:(k + 1) * BATCH].astype("int32"))
                 for k in range(N // BATCH)]
    return f, calls, params


@contextlib.contextmanager
def counted(device):
    """Every copy between host and device; ``status``: how many of the downloads were the
    bounds-status reads of index kernels."""
    moved = {"up": 0, "down": 0, "status": 0}
    upload, download = device.upload, device.download
    ctx = get_context(None)
    read_status = ctx.read_status

    def up(*args, **kwargs):
        moved["up"] += 1
        return upload(*args, **kwargs)

    def down(*args, **kwargs):
        moved["down"] += 1
        return download(*args, **kwargs)

    def status(array):
        moved["status"] += 1
        return read_status(array)

    device.upload, device.download, ctx.read_status = up, down, status
    try:
        yield moved
    finally:
        del device.upload, device.download, ctx.read_status


def _run(hidden, givens):
    f, calls, params = _step(hidden, givens)
    costs = [float(f(*args)) for args in calls]
    return f, calls, costs, [np.asarray(q.get_value()) for q in params]


@pytest.mark.parametrize("hidden", [False, True], ids=["logistic_regression", "mlp"])
@pytest.mark.parametrize("givens", [True, False], ids=["shared_data", "host_minibatches"])
def test_a_training_step_moves_only_its_minibatch_and_its_outputs(opencl, hidden, givens):
    with config.change_flags(floatX="float32"):
        f, calls, costs, params = _run(hidden, givens)
        with config.change_flags(device="cpu"):
            _, _, cpu_costs, cpu_params = _run(hidden, givens)
        np.testing.assert_allclose(costs, cpu_costs, rtol=1e-5)
        for got, want in zip(params, cpu_params):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
        nodes = f.maker.fgraph.toposort()
        uploads = [n for n in nodes if isinstance(n.op, GpuFromHost)]
        downloads = [n for n in nodes if isinstance(n.op, HostFromGpu)]
        assert len(downloads) == 1 and downloads[0].outputs[0] in f.maker.fgraph.outputs
        assert sorted(n.inputs[0].name for n in uploads) == ([] if givens else ["x", "y"])
        assert all(isinstance(n.op, (GpuOp, *TRANSFERS)) or _host_arithmetic(n) for n in nodes)
        per_call = f.profile.transfers
        assert per_call["to the host"] == (1, 4)
        assert per_call.get("to the device", (0, 0))[0] == (0 if givens else 2)
        assert {"GpuAdvancedSubtensor", "GpuAdvancedIncSubtensor"} <= {type(n.op).__name__ for n in nodes}
        with counted(get_context(None).device) as moved:
            for args in calls:
                f(*args)
        # The labels' range is known on the host (uploaded minibatches; the shared label
        # vector set from the host, sliced and cast): no bounds status comes back.
        assert moved == {"up": 0 if givens else 2 * len(calls), "down": len(calls), "status": 0}


def _host_arithmetic(node: Apply) -> bool:
    """A host node computing one element (shape and index arithmetic)."""
    return all(all(v.type.broadcastable) for v in node.outputs) and not isinstance(node.op, GpuOp)


def test_the_mlp_step_has_the_two_gemm_of_the_cpu_graph_on_the_device(opencl):
    with config.change_flags(floatX="float32"):
        f, _, _ = _step(hidden=True, givens=True)
        with config.change_flags(device="cpu"):
            cpu, _, _ = _step(hidden=True, givens=True)
    cpu_gemms = [n for n in cpu.maker.fgraph.toposort() if "Gemm" in type(n.op).__name__]
    gpu_gemms = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, GpuGemm)]
    assert len(cpu_gemms) == len(gpu_gemms) == 2


def _values(params):
    return [np.asarray(q.get_value()) for q in params]


@pytest.mark.parametrize("hidden", [False, True], ids=["logistic_regression", "mlp"])
def test_a_bad_host_label_raises_before_any_kernel_and_changes_no_shared_variable(opencl, hidden):
    with config.change_flags(floatX="float32"):
        f, calls, params = _step(hidden, givens=False)
        x, y = calls[0]
        before = _values(params)
        for bad in (N_OUT, -N_OUT - 1):
            labels = y.copy()
            labels[3] = bad
            with counted(get_context(None).device) as moved, pytest.raises(
                    IndexError, match=rf"\by\b.*index {bad} is out of bounds for axis 1 with size {N_OUT}"):
                f(x, labels)
            assert moved["down"] == 0  # found on the host: nothing read back
            for got, want in zip(_values(params), before):
                np.testing.assert_array_equal(got, want)
        # Negative labels count from the end, as numpy's: the same step as with their positive twins.
        labels = y.copy()
        labels[:4] -= N_OUT
        negative = float(f(x, labels))
        for q, v in zip(params, before):
            q.set_value(v)
        assert negative == pytest.approx(float(f(x, (labels % N_OUT).astype("int32"))), rel=1e-6)


@pytest.mark.parametrize("hidden", [False, True], ids=["logistic_regression", "mlp"])
def test_a_bad_label_in_the_shared_vector_is_found_by_the_device_in_its_minibatch(opencl, hidden):
    """The vector's range (set from the host) no longer proves a slice in range: the kernels
    check on the device, one status read per call, and the minibatch holding the bad label
    raises before any update."""
    with config.change_flags(floatX="float32"):
        f, calls, params = _step(hidden, givens=True)
        set_y = next(v for v in f.maker.fgraph.inputs if v.name == "set_y")
        labels = set_y.get_value()
        labels[BATCH + 3] = N_OUT + 2
        set_y.set_value(labels)
        with counted(get_context(None).device) as moved:
            f(0)
        assert moved == {"up": 0, "down": 2, "status": 1}
        before = _values(params)
        with pytest.raises(IndexError, match=rf"index {N_OUT + 2} is out of bounds for axis 1 with size {N_OUT}"):
            f(1)
        for got, want in zip(_values(params), before):
            np.testing.assert_array_equal(got, want)
        labels[BATCH + 3] = 1
        set_y.set_value(labels)  # the range known again: no status read
        with counted(get_context(None).device) as moved:
            f(1)
        assert moved == {"up": 0, "down": 1, "status": 0}


def test_an_index_the_device_updates_is_checked_there_once_per_call(opencl):
    """A label vector a device update writes has no host-known range: the gather and its
    gradient's scatter check on the device, their statuses read back as one."""
    with config.change_flags(floatX="float32"):
        W = shared(np.random.RandomState(2).rand(N_IN, N_OUT).astype("float32"), name="W")
        labels = shared(np.arange(BATCH, dtype="int32") % N_OUT, name="labels")
        x = T.matrix("x")
        p = T.nnet.softmax(T.dot(x, W))
        cost = -T.mean(T.log(p)[T.arange(labels.shape[0]), labels])
        f = function([x], cost, updates=[(W, W - 0.1 * arignote.grad(cost, W)),
                                         (labels, (labels + 1) % N_OUT)])
        data = _data()[0][:BATCH]
        f(data)  # from now on the labels come from the device
        with counted(get_context(None).device) as moved:
            f(data)
        assert moved == {"up": 1, "down": 2, "status": 1}
        want = (np.arange(BATCH) + 2) % N_OUT
        np.testing.assert_array_equal(labels.get_value(), want)


def test_a_bad_index_met_by_a_later_index_node_is_reported_as_that_nodes(opencl):
    """The Function's index nodes share one status, read after the thunks: the report names
    the node whose kernel met the bad index, not the first of them."""
    with config.change_flags(floatX="float32"):
        good = shared(np.arange(BATCH, dtype="int32") % N_OUT, name="good")
        rising = shared(np.full(BATCH, N_OUT - 2, dtype="int32"), name="rising")
        x = T.matrix("x")
        rows = T.arange(BATCH)
        first = x[rows, good].sum()  # labels a device update writes: checked on the device
        second = x[rows, rising].sum()
        f = function([x], [first, second], updates=[(good, (good + 1) % N_OUT), (rising, rising + 1)])
        data = _data()[0][:BATCH, :N_OUT]
        f(data)
        f(data)  # rising was N_OUT - 1: in range; now N_OUT
        with pytest.raises(IndexError, match=f"index {N_OUT} is out of bounds for axis 1") as info:
            f(data)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert f"the node was built at {second.owner.inputs[0].tag.trace}" in notes, notes
    assert f"the node was built at {first.owner.inputs[0].tag.trace}" not in notes, notes
    np.testing.assert_array_equal(rising.get_value(), np.full(BATCH, N_OUT))


def test_integer_arithmetic_only_the_host_reads_stays_there(opencl):
    """``x[i * 2 + 1]``: the take reads its index vector on the host, so the index arithmetic
    runs there (no upload of i, no kernel, no download of its result); float arithmetic and
    an integer result the caller gets stay on the device, as Theano would place them."""
    x, i = T.matrix("x"), T.ivector("i")
    taken = x[i * 2 + 1]
    f = function([x, i], [taken, T.exp(x[i]), i * 3])
    data = np.arange(24, dtype=config.floatX).reshape(8, 3)
    index = np.array([0, 3, 1], "int32")
    with counted(get_context(None).device) as moved:
        got = f(data, index)
    for g, want in zip(got, [data[index * 2 + 1], np.exp(data[index]), index * 3]):
        np.testing.assert_allclose(g, want, rtol=1e-6)
    # x and i (for i * 3 on the device) up, the two takes' index vectors up from the host;
    # the three results down: nothing more
    assert moved == {"up": 4, "down": 3, "status": 0}
    nodes = f.maker.fgraph.toposort()
    host_math = [n for n in nodes if isinstance(n.op, Elemwise)]
    assert sorted(str(n.op.scalar_op) for n in host_math) in (["add", "mul"], ["Composite{add(mul(i0, i1), i2)}"])
    assert all(not isinstance(n.inputs[0].type, GpuArrayType) for n in host_math)
    assert sum(isinstance(n.op, GpuElemwise) for n in nodes) == 2  # exp and i * 3
    text = arignote.explain(f)
    assert "its integer result is read only on the host (index arithmetic)" in text
