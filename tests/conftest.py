"""Shared test settings: hypothesis sized for a 2-core machine, floatX restored per test."""
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from arignote import config
from tests.gpu.conftest import device, opencl  # noqa: F401  (every test may run on each device)

settings.register_profile("default", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None)
settings.load_profile("default")


@pytest.fixture(autouse=True)
def _isolate_config():
    """Each test starts from the default flags, whatever an earlier test changed; no
    background producer of PoCL binaries (tests/gpu/test_program_cache.py tests it)."""
    with config.change_flags(floatX="float64", warn_float64="ignore", mode="FAST_RUN",
                             allow_gc=False, on_unused_input="raise", profile=False,
                             compute_test_value="off", **{"opencl.background_binaries": False}):
        yield


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
