"""Shared variables on every device: two never share a buffer, whatever mix of
borrow=True, return_internal_type=True and device arrays is passed."""
from __future__ import annotations

import numpy as np

from arignote import function, shared


def internal(s):
    return s.get_value(borrow=True, return_internal_type=True)


def shares_memory(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return np.may_share_memory(a, b)
    return a.buffer is b.buffer  # device arrays: views share their buffer


def test_shared_of_another_shared_variables_buffer_gets_its_own(device):
    a = shared(np.arange(4, dtype="float32"), "a")
    b = shared(internal(a), "b", borrow=True)
    assert not shares_memory(internal(a), internal(b))
    function([], [], updates={a: a * 2})()
    np.testing.assert_array_equal(b.get_value(), [0, 1, 2, 3])
    np.testing.assert_array_equal(a.get_value(), [0, 2, 4, 6])


def test_set_value_with_another_shared_variables_buffer_copies_it(device):
    a = shared(np.arange(4, dtype="float32"), "a")
    b = shared(np.zeros(4, dtype="float32"), "b")
    b.set_value(internal(a), borrow=True)
    assert not shares_memory(internal(a), internal(b))
    a.set_value(np.full(4, 7, dtype="float32"))
    function([], [], updates={a: a + 1})()
    np.testing.assert_array_equal(b.get_value(), [0, 1, 2, 3])


def test_a_view_of_another_shared_variables_buffer_is_copied_too(device):
    a = shared(np.arange(6, dtype="float32").reshape(2, 3), "a")
    value = internal(a)
    row = value[1] if isinstance(value, np.ndarray) else value.view((3,), (1,), 3)
    b = shared(row, "b", borrow=True)
    assert not shares_memory(internal(a), internal(b))
    np.testing.assert_array_equal(b.get_value(), [3, 4, 5])


def test_a_buffer_no_shared_variable_holds_is_adopted(device):
    a = shared(np.arange(4, dtype="float32"), "a")
    mine = internal(a).copy()  # a fresh buffer (on the device for a GPU variable)
    a.set_value(mine, borrow=True)
    assert internal(a) is mine
    b = shared(internal(shared(np.ones(2, dtype="float32"))).copy(), "b", borrow=True)
    assert b.get_value().tolist() == [1, 1]


def test_an_update_result_is_not_shared_with_a_borrowing_variable(device):
    a = shared(np.zeros(3, dtype="float32"), "a")
    step = function([], [], updates={a: a + 1})
    step()
    b = shared(np.zeros(3, dtype="float32"), "b")
    b.set_value(internal(a), borrow=True)
    step()
    np.testing.assert_array_equal(b.get_value(), [1, 1, 1])
    np.testing.assert_array_equal(a.get_value(), [2, 2, 2])
