"""Both forms of the kernels that have one for a GPU and one for an OpenCL device that is
the CPU, against numpy on the OpenCL device here: the GEMM (tiled, or a row form:
transposed operands, edges that are not a multiple of the tile or row, batches, beta) and
(log)softmax (a work-group or a work-item per slice)."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.backends.gpu import get_context, ops
from arignote.backends.kernels import render
from arignote.tensor.gemm import gemm


@pytest.fixture(params=[True, False], ids=["gpu form", "cpu form"])
def form(request, opencl, monkeypatch):
    monkeypatch.setattr(ops, "gemm_tiled", lambda ctx: request.param)
    monkeypatch.setattr(ops, "softmax_per_thread", lambda ctx: not request.param)
    return request.param


def test_the_form_follows_the_device(opencl):
    ctx = get_context(None)
    x = T.fmatrix("x")
    f = function([x], [T.dot(x, x), T.nnet.softmax(x)])
    sources = [k.source for node in f.maker.fgraph.toposort() if hasattr(node.op, "gpu_kernels")
               for k in node.op.gpu_kernels(node)]
    assert len(sources) == 2 and all(("__local" in s) == (not ctx.device.on_cpu) for s in sources)
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


@pytest.mark.parametrize("shape, axis", [((5, 300), -1), ((70, 3), -1), ((4, 6, 9), 1)])
def test_softmax_and_logsoftmax(form, shape, axis):
    rng = np.random.default_rng(len(shape))
    v = (rng.normal(size=shape) * 10).astype("float32")
    x = T.tensor("float32", (False,) * len(shape))
    f = function([x], [T.nnet.softmax(x, axis=axis), T.nnet.log_softmax(x, axis=axis)])
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    expected = e / e.sum(axis=axis, keepdims=True)
    got, got_log = f(v)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got_log, np.log(expected), rtol=1e-5, atol=1e-5)
