"""The native kernel tests check the native path itself: a Function's first call that needs
its kernels waits for the compiler (``native_build='wait'``) instead of running numpy's
kernels while they build in the background (tests/backends/test_native_build.py tests that)."""
import pytest

from arignote import config


@pytest.fixture(autouse=True)
def _native_kernels_at_first_need():
    with config.change_flags(native_build="wait"):
        yield
