"""Ops with no GPU kernel (linear algebra, sorting, extra_ops) under a GPU device: the same
values as numpy, and explain() says why each stays on the CPU."""
import numpy as np

from arignote import function, tensor as T
from arignote.backends.gpu.placement import reason_for
from arignote.tensor import extra_ops, nlinalg, slinalg


def test_host_ops_run_and_say_why(opencl):
    x = T.fmatrix("x")
    a = (np.eye(3) * 3 + 0.1).astype("float32")
    outputs = [slinalg.cholesky(x), nlinalg.matrix_inverse(x), T.sort(x), extra_ops.cumsum(x, 0),
               T.diagonal(x)]
    f = function([x], [o * 2 for o in outputs])
    got = f(a)
    want = [np.linalg.cholesky(a), np.linalg.inv(a), np.sort(a), np.cumsum(a, 0), np.diagonal(a)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, 2 * w, rtol=1e-5)
    reasons = {type(n.op).__name__: reason_for(f.maker.fgraph, n) for n in f.maker.fgraph.toposort()}
    assert "LAPACK" in reasons["Cholesky"] and "LAPACK" in reasons["MatrixInverse"]
    assert "numpy runs it on the host" in reasons["SortOp"] and "host" in reasons["CumOp"]
    assert any(name.startswith("Gpu") for name in reasons)  # the doubling still runs on the device
