"""NanGuardMode: the first NaN, inf or huge value stops the call at the node that made it,
naming the node and the user's variable, on the CPU and on OpenCL (checked on the device)."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from arignote import Out, config, function, shared, tensor as T
from arignote.backends.gpu import GpuArray, get_context
from arignote.backends.gpu.array import to_gpu
from arignote.compile.mode import get_mode
from arignote.compile.nanguardmode import NanGuardError, NanGuardMode, finite_flags
from tests.gpu.conftest import DEVICES, use


@pytest.fixture(params=["cpu", "opencl"])
def where(request):
    with use(DEVICES[request.param]), config.change_flags(floatX="float32"), \
            np.errstate(all="ignore"):
        yield request.param


def test_names_and_settings():
    assert isinstance(get_mode("NanGuardMode"), NanGuardMode)
    mode = NanGuardMode(inf_is_error=False).including("fast_run")
    assert isinstance(mode, NanGuardMode) and (mode.nan_is_error, mode.inf_is_error) == (True, False)
    assert issubclass(NanGuardError, AssertionError)  # what Theano raised
    with pytest.raises(ValueError, match="nothing to guard"):
        NanGuardMode(False, False, False)


def test_the_first_nan_names_the_node_and_the_users_variable(where):
    x = T.fvector("x")
    w = shared(np.ones(3, "float32"), name="w")
    scaled = w * x
    line = sys._getframe().f_lineno + 1
    root = T.sqrt(scaled - 2)
    root.name = "root"
    out = T.tanh(root * 3 + 1)
    f = function([x], out, mode="NanGuardMode")
    np.testing.assert_allclose(f(np.full(3, 3, "float32")), np.tanh(4 * np.ones(3)), rtol=1e-6)
    with pytest.raises(NanGuardError) as info:
        f(np.array([3, 1, 4], "float32"))
    text = str(info.value)
    first = text.splitlines()[0]
    assert first.startswith("NanGuardMode: NaN in output 0 of node ")
    assert ("GpuElemwise" if where == "opencl" else "Elemwise{Composite") in first
    # the fused node computes several variables: the graph as written names the one that went bad
    assert f"the first variable holding NaN is 'root', built at {__file__}:{line}" in text
    assert "input 0: " in text and ": finite" in text


def test_the_first_inf_is_found_before_later_nodes_run(where):
    x = T.fvector("x")
    big = T.exp(x * 100)
    big.name = "big"
    f = function([x], T.dot(big, big), mode=NanGuardMode(nan_is_error=True, inf_is_error=True,
                                                          big_is_error=False))
    with pytest.raises(NanGuardError, match="inf in output 0") as info:
        f(np.array([1, 2], "float32"))
    assert "the first variable holding inf is 'big'" in str(info.value)
    first = str(info.value).splitlines()[0]
    assert "exp(" in first and not any(name in first.lower() for name in ("dot", "gemv"))  # not the product's


def test_allowed_kinds_pass_and_bad_inputs_are_reported_with_their_state(where):
    x, zero = T.fvector("x"), T.fvector("zero")
    f = function([x, zero], T.exp(x).sum() * zero,
                 mode=NanGuardMode(nan_is_error=True, inf_is_error=False, big_is_error=False))
    with pytest.raises(NanGuardError, match="NaN in output 0") as info:
        f(np.array([1, 1000], "float32"), np.zeros(1, "float32"))  # inf (allowed) * 0 is NaN
    text = str(info.value)
    assert "the first variable holding NaN" in text and "already held inf" in text
    x2 = T.fvector("x2")
    g = function([x2], x2 + 1, mode="NanGuardMode")
    with pytest.raises(NanGuardError, match="input 0 of the function, 'x2', holds NaN"):
        g(np.array([np.nan], "float32"))
    h = function([x2], x2 * 1e6, mode=NanGuardMode(big_is_error=True))
    with pytest.raises(NanGuardError, match="larger than 1e\\+10"):
        h(np.array([1e5], "float32"))


def test_shared_variables_are_checked_as_inputs(where):
    w = shared(np.array([1, np.inf], "float32"), name="w")
    f = function([], w.sum(), mode="NanGuardMode")
    with pytest.raises(NanGuardError, match="'w', holds inf"):
        f()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
def test_the_device_check_agrees_with_numpy(dtype):
    with use("opencl"):
        ctx = get_context(None)
        if dtype == "float64" and not ctx.fp64:
            pytest.skip("no fp64 on this device")
        rng = np.random.default_rng(0)
        cases = [rng.normal(size=1000), np.zeros(0), np.arange(600_000) * 1.0]
        if dtype.startswith("float"):
            cases += [np.array([1, np.nan, 3]), np.array([-np.inf, 0]), np.array([2e10, -1])]
        if dtype == "int64":
            cases += [np.array([-(2 ** 40), 3])]
        for case in cases:
            host = case.astype(dtype)
            device = to_gpu(ctx, host)
            assert isinstance(device, GpuArray)
            assert finite_flags(device) == finite_flags(host), (dtype, case[:4])
        strided = to_gpu(ctx, np.array([[1, np.nan], [2, 3]], "float32"))
        column = strided.view((2,), (2,), 0)  # the first column: no NaN in it
        assert finite_flags(column) == (False, False, False)


def test_on_the_device_only_the_flags_come_back(monkeypatch):
    with use("opencl"), config.change_flags(floatX="float32"):
        x = shared(np.linspace(0, 1, 50_000).astype("float32"), name="x")
        f = function([], Out((T.exp(x) * 2).transfer(None), borrow=True), mode="NanGuardMode")
        downloads = []
        real_get = GpuArray.get
        monkeypatch.setattr(GpuArray, "get", lambda self, out=None: (
            downloads.append((self.size, self.dtype.name)), real_get(self, out))[1])
        assert isinstance(f(), GpuArray)
    # the input and the output were checked, each by one launch returning at most 64 int32 flags
    assert downloads and all(size <= 64 and dtype == "int32" for size, dtype in downloads)
