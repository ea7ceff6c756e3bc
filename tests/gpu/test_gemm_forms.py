"""Both forms of the GEMM kernel (tiled for a GPU, the row form for an OpenCL device that
is the CPU) against numpy on the OpenCL device here: transposed operands, edges that are
not a multiple of the tile or row, batches, and beta."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.backends.gpu import get_context, ops
from arignote.backends.kernels import render
from arignote.tensor.gemm import gemm


@pytest.fixture(params=[True, False], ids=["tiled", "row"])
def form(request, opencl, monkeypatch):
    monkeypatch.setattr(ops, "gemm_tiled", lambda ctx: request.param)
    return request.param


def test_the_form_follows_the_device(opencl):
    ctx = get_context(None)
    kernel = ops.gemm_kernel(ctx, "float32")
    assert ("__local" in kernel.source) == (not ctx.device.on_cpu)
    assert render.gemm(render.CUDA, "float32", tiled=False) == render.gemm(render.CUDA, "float32")


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (17, 33, 70), (65, 16, 3)])
def test_dot_and_transposes(form, m, k, n):
    rng = np.random.default_rng(m * k * n)
    a, b = rng.normal(size=(m, k)).astype("float32"), rng.normal(size=(k, n)).astype("float32")
    x, y = T.fmatrix("x"), T.fmatrix("y")
    f = function([x, y], [T.dot(x, y), T.dot(y.T, x.T)])
    got, got_t = f(a, b)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_t, b.T @ a.T, rtol=1e-5, atol=1e-5)


def test_batches_and_beta(form):
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(3, 5, 7)).astype("float32"), rng.normal(size=(7, 66)).astype("float32")
    x, y = T.ftensor3("x"), T.fmatrix("y")
    np.testing.assert_allclose(function([x, y], T.matmul(x, y))(a, b), a @ b, rtol=1e-5, atol=1e-5)
    z, u, v = T.fmatrix("z"), T.fmatrix("u"), T.fmatrix("v")
    vz, vu, vv = (rng.normal(size=s).astype("float32") for s in ((9, 70), (9, 4), (4, 70)))
    g = function([z, u, v], gemm(z, np.float32(2), u, v, np.float32(0.5)))
    np.testing.assert_allclose(g(vz, vu, vv), 0.5 * vz + 2 * vu @ vv, rtol=1e-5, atol=1e-5)
