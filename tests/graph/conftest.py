"""Fixtures of the graph tests."""
import sys

import pytest


@pytest.fixture
def low_recursion_limit():
    """Deep graphs must be walked without recursion, whatever the limit."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(500)
    yield
    sys.setrecursionlimit(old)
