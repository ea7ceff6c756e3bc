"""arange and integer-array indexing on the device: values, gradients, bad indices."""
from __future__ import annotations

import numpy as np
import pytest

import arignote
from arignote import Out, config, function, shared, tensor as T
from arignote.backends.gpu.ops_advanced import GpuAdvancedIncSubtensor, GpuAdvancedSubtensor, GpuARange

INDEX_CASES = [
    ((6, 4), [np.array([0, 5, -1, 2]), np.array([3, 0, 1, -4])]),
    ((5, 3, 2), [np.array([[0, 1], [4, -5]]), np.array([2])]),
    ((4, 7, 3), [np.array([[3], [0]]), np.array([[0, 6, 1]])]),
]


def _on_device(f, *classes):
    return all(any(isinstance(n.op, c) for n in f.maker.fgraph.toposort()) for c in classes)


@pytest.mark.parametrize("shape, indices", INDEX_CASES)
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_gather_and_scatter_add_match_numpy(opencl, shape, indices, dtype):
    rng = np.random.RandomState(len(shape))
    data = (rng.rand(*shape) * 10).astype(dtype)
    x = shared(data)
    idx = [shared(i.astype("int64")) for i in indices]
    target = data[tuple(indices)]
    y = shared((rng.rand(*target.shape) * 5).astype(dtype))
    read = function([], Out(x[tuple(idx)].transfer(None), borrow=True))
    added = function([], T.inc_subtensor(x[tuple(idx)], y))
    assert _on_device(read, GpuAdvancedSubtensor) and _on_device(added, GpuAdvancedIncSubtensor)
    np.testing.assert_array_equal(np.asarray(read()), target)
    want = data.copy()
    np.add.at(want, tuple(indices), y.get_value())
    np.testing.assert_allclose(added(), want, rtol=1e-6)


def test_repeated_indices_add_up_and_a_broadcast_value_is_read_in_place(opencl):
    x = shared(np.zeros((3, 2), "float32"))
    rows, cols = shared(np.array([0, 2, 0, 0])), shared(np.array([1, 1, 1, 0]))
    f = function([], T.inc_subtensor(x[rows, cols], np.float32(1.5)))
    assert _on_device(f, GpuAdvancedIncSubtensor)
    np.testing.assert_array_equal(f(), [[1.5, 3.0], [0, 0], [0, 1.5]])


def test_an_index_out_of_range_raises_numpys_index_error_naming_the_variable(opencl):
    x = shared(np.arange(12, dtype="float32").reshape(4, 3), name="table")
    i = T.lvector("i")
    f = function([i], x[i, i])
    assert _on_device(f, GpuAdvancedSubtensor)
    np.testing.assert_array_equal(f(np.array([0, 2, -1])), [0, 8, 11])
    with pytest.raises(IndexError, match=r"'table'.*index 3 is out of bounds for axis 1 with size 3"):
        f(np.array([0, 3]))
    np.testing.assert_array_equal(f(np.array([1])), [4])  # the status was reset
    g = function([i], T.inc_subtensor(x[i, 0], np.float32(1)))
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 0 with size 4"):
        g(np.array([-5]))


def test_arange_sinks_to_the_device_where_a_device_node_reads_it(opencl):
    n = T.lscalar("n")
    table = shared(np.arange(30, dtype="float32").reshape(5, 6))
    f = function([n], Out(table[T.arange(n), T.arange(n) + 1].transfer(None), borrow=True))
    assert _on_device(f, GpuARange, GpuAdvancedSubtensor)
    assert not any(type(node.op).__name__ == "GpuFromHost" for node in f.maker.fgraph.toposort())
    np.testing.assert_array_equal(np.asarray(f(4)), [1, 8, 15, 22])
    host = function([n], T.arange(3, n, 2))  # read on the host: it stays there
    assert not _on_device(host, GpuARange)
    np.testing.assert_array_equal(host(10), [3, 5, 7, 9])


def test_the_log_likelihood_gradient_runs_on_the_device_and_checks_numerically(opencl):
    with config.change_flags(floatX="float64"):
        labels = shared(np.array([2, 0, 1, 2]))

        def nll(z):
            p = T.nnet.softmax(z)
            return -T.mean(T.log(p)[T.arange(labels.shape[0]), labels])

        z = T.matrix("z")
        g = function([z], arignote.grad(nll(z), z))
        assert _on_device(g, GpuAdvancedIncSubtensor)
        arignote.verify_grad(nll, [np.random.RandomState(3).randn(4, 3)], rng=np.random.RandomState(4))


def test_device_computed_indices_are_checked_on_the_device_and_name_their_axis(opencl):
    """Indices a kernel computes (no range known on the host) take the checking kernels;
    two index nodes of one function share one status, read once per call."""
    x = shared(np.arange(12, dtype="float32").reshape(4, 3), name="table")
    i, j = T.lvector("i"), T.lvector("j")
    rows, cols = i * 2, j + 1  # computed on the device
    f = function([i, j], [x[rows, cols], T.inc_subtensor(x[rows, cols], np.float32(1))])
    assert _on_device(f, GpuAdvancedSubtensor, GpuAdvancedIncSubtensor)
    got, added = f(np.array([0, 1, -1]), np.array([0, 1, 0]))
    np.testing.assert_array_equal(got, [1, 8, 7])
    with pytest.raises(IndexError, match=r"'table'.*index 3 is out of bounds for axis 1 with size 3"):
        f(np.array([0, 1]), np.array([0, 2]))
    with pytest.raises(IndexError, match=r"'table'.*index 4 is out of bounds for axis 0 with size 4"):
        f(np.array([2, 1]), np.array([0, 0]))
    np.testing.assert_array_equal(f(np.array([1]), np.array([-2]))[0], [8])  # the status was reset


def test_an_index_node_outside_a_function_checks_its_own_status(opencl):
    """perform called directly (no Function linked it): the node reads its status itself."""
    from arignote.backends.gpu import get_context
    from arignote.backends.gpu.array import to_gpu
    from arignote.backends.gpu.type import GpuArrayType
    ctx = get_context(None)
    x, i = GpuArrayType("float32", (False, False))(), GpuArrayType("int64", (False,))()
    node = GpuAdvancedSubtensor().make_node(x, T.vector().type, i)
    table = to_gpu(ctx, np.arange(6, dtype="float32").reshape(2, 3))
    cell = [None]
    node.op.perform(node, [table, to_gpu(ctx, np.array([1, -2]))], [cell])  # no range known
    np.testing.assert_array_equal(cell[0].get(), [[3, 4, 5], [0, 1, 2]])
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        node.op.perform(node, [table, to_gpu(ctx, np.array([0, 2]))], [cell])


def test_a_call_failing_after_a_bad_index_leaves_nothing_for_the_next(opencl):
    x = shared(np.arange(12, dtype="float32").reshape(4, 3), name="table")
    i, v = T.lvector("i"), T.fvector("v")
    f = function([i, v], x[i * 2, i * 0] + v)  # device-computed indices, then an addition
    with pytest.raises(ValueError):
        f(np.array([5, 0]), np.zeros(3, "float32"))  # the bad index seen, then shapes refused
    np.testing.assert_array_equal(f(np.array([1, 0]), np.zeros(2, "float32")), [6, 0])
