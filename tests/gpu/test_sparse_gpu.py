"""Sparse ops under a GPU device: they stay on the host (explain() says why), the dense ops
around them move, and a training step mixing both gives the CPU's result."""
import numpy as np
import scipy.sparse as sp

import arignote
from arignote import config, function, shared, sparse as S, tensor as T
from arignote.backends.gpu.placement import reason_for


def _step(x_value, labels):
    w = shared(np.zeros((x_value.shape[1], 1), dtype="float32"), name="W")
    x, t = S.csr_fmatrix("x"), T.fvector("t")
    z = S.structured_dot(x, w).flatten()
    cost = T.nnet.binary_crossentropy(T.nnet.sigmoid(z), t).mean()
    step = function([x, t], cost, updates=[(w, w - np.float32(0.5) * arignote.grad(cost, w))])
    return step, w


def test_sparse_host_ops_beside_device_ops(device):
    rng = np.random.RandomState(0)
    x_value = sp.csr_matrix(rng.poisson(0.2, (32, 16)).astype("float32"))
    labels = (rng.uniform(size=32) > 0.5).astype("float32")
    step, w = _step(x_value, labels)
    costs = [float(step(x_value, labels)) for _ in range(5)]
    with config.change_flags(device="cpu"):
        cpu_step, cpu_w = _step(x_value, labels)
        cpu_costs = [float(cpu_step(x_value, labels)) for _ in range(5)]
    np.testing.assert_allclose(costs, cpu_costs, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(w.get_value()), cpu_w.get_value(), rtol=1e-4, atol=1e-6)
    nodes = step.maker.fgraph.toposort()
    sparse_nodes = [n for n in nodes if isinstance(n.op, S.convert.SparseOp)]
    assert sparse_nodes and not any("Gpu" in type(n.op).__name__ for n in sparse_nodes)
    if device != "cpu":
        assert all("scipy.sparse runs it on the host" in reason_for(step.maker.fgraph, n)
                   for n in sparse_nodes)
        assert any(type(n.op).__name__.startswith("Gpu") for n in nodes)  # the dense part moved
