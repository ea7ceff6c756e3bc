"""The stabilize phase runs before placement, so a device runs the stable forms: the
written-out sigmoid's logs are the softplus kernels there too, with the CPU's values."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from arignote import function, grad
from arignote import tensor as T
from tests.rewriting.test_stabilize import op_names_of_fused


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logs_of_a_written_out_sigmoid_run_stably_on_the_device(device, dtype):
    z = T.vector("z", dtype=dtype)
    p = 1 / (1 + T.exp(-z))
    cost = T.log(1 - p)
    f = function([z], [T.log(p), cost, grad(cost.sum(), z)])
    nodes = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    if device != "cpu" and (dtype == "float32" or "GpuElemwise" in nodes):
        assert "GpuElemwise" in nodes and "Elemwise" not in nodes
    names = op_names_of_fused(f)
    assert "softplus" in names and {"true_div", "inv", "exp"}.isdisjoint(names)
    values = np.array([30.0, 1000.0, -1000.0, 0.0], dtype)
    log_p, log_q, g = f(values)
    z64 = values.astype("float64")
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(log_p, -np.logaddexp(0, -z64), rtol=tol)
    np.testing.assert_allclose(log_q, -np.logaddexp(0, z64), rtol=tol)
    np.testing.assert_allclose(g, -special.expit(z64), rtol=tol)
    assert all(a.dtype == dtype and np.all(np.isfinite(a)) for a in (log_p, log_q, g))
