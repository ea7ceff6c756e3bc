"""function()'s checks on shared variables that live on a device: an update is moved to
the variable's device, and must otherwise keep its type exactly, as on the CPU."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, shared
from arignote import tensor as T
from arignote.backends.gpu import GpuArrayType


def test_an_update_that_would_change_the_broadcast_pattern_is_refused(device):
    m = shared(np.ones((3, 3), "float32"), "m")
    assert isinstance(m.type, GpuArrayType) == (device != "cpu")
    with pytest.raises(TypeError, match=r"update of 'm' has broadcastable pattern \(True, True\).*"
                                        r"\(False, False\).*patternbroadcast"):
        function([], [], updates={m: T.alloc(np.float32(0), 1, 1)})
    np.testing.assert_array_equal(m.get_value(), np.ones((3, 3)))
    f = function([], [], updates={m: m * 2})  # the same type, moved to the device: accepted
    f()
    np.testing.assert_array_equal(m.get_value(), np.full((3, 3), 2.0))
