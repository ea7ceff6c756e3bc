"""The device fixture: every GPU test runs on cpu, opencl (PoCL in CI) and cuda,
skipping cleanly where a backend's library or device is missing."""
from __future__ import annotations

import functools

import pytest

from arignote import config
from arignote.backends.gpu.context import DeviceUnavailable, open_device

DEVICES = {"cpu": "cpu", "opencl": "opencl", "cuda": "cuda0"}


@functools.cache
def unavailable(spec: str) -> str | None:
    """Why ``spec`` cannot be opened here, or None."""
    if spec == "cpu":
        return None
    try:
        open_device(spec)
    except DeviceUnavailable as err:
        return str(err)
    return None


def use(spec: str):
    why = unavailable(spec)
    if why:
        pytest.skip(why)
    return config.change_flags(device=spec)


@pytest.fixture(params=list(DEVICES))
def device(request):
    """Runs the test with config.device set to each backend in turn."""
    with use(DEVICES[request.param]):
        yield request.param


@pytest.fixture
def opencl():
    with use("opencl"):
        yield "opencl"
