"""Shared variables: construction, types, values seen by every function that uses them."""
import numpy as np
import pytest

from arignote import SharedVariable, function, shared
from arignote import tensor as T


@pytest.mark.parametrize("value, dtype, ndim", [
    (np.zeros((2, 3), dtype="float32"), "float32", 2),
    (np.arange(4, dtype="int16"), "int16", 1),
    (np.float32(1.5), "float32", 0),
    (1.5, "float64", 0),
    (3, "int64", 0),
    (True, "bool", 0),
])
def test_type_follows_the_value(value, dtype, ndim):
    s = shared(value)
    assert isinstance(s, SharedVariable)
    assert s.dtype == dtype and s.ndim == ndim
    assert not any(s.broadcastable)
    np.testing.assert_array_equal(s.get_value(), value)
    assert type(s.get_value()) is np.ndarray


def test_name_and_broadcastable_pattern():
    s = shared(np.zeros((1, 3)), name="w", broadcastable=(True, False))
    assert s.name == "w" and s.broadcastable == (True, False)
    assert shared(np.zeros((1, 3)), shape=(1, None)).broadcastable == (True, False)
    with pytest.raises(TypeError, match="length 1"):
        s.set_value(np.zeros((2, 3)))



def test_every_function_sees_set_value():
    s = shared(np.zeros(2), "s")
    f = function([], s + 1)
    g = function([], s * 2)
    s.set_value(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(f(), [2, 3])
    np.testing.assert_array_equal(g(), [2, 4])


def test_updates_are_seen_by_get_value_and_other_functions():
    s = shared(np.float64(0), "s")
    step = function([], [], updates={s: s + 1})
    read = function([], s * 1)
    step()
    step()
    assert s.get_value() == 2 and read() == 2


def test_updates_keep_the_declared_dtype():
    s = shared(np.zeros(2, dtype="float32"), "s")
    function([], [], updates={s: s + np.float32(1)})()
    assert s.get_value().dtype == np.float32


def test_clone_shares_the_storage():
    s = shared(np.zeros(2), "s")
    c = s.clone()
    assert c is not s and c.type == s.type
    s.set_value(np.ones(2))
    np.testing.assert_array_equal(c.get_value(), [1, 1])


def test_zero_keeps_shape_and_dtype():
    s = shared(np.arange(3, dtype="int32"))
    s.zero()
    assert s.get_value().dtype == np.int32
    np.testing.assert_array_equal(s.get_value(), [0, 0, 0])


def test_shared_variables_build_graphs_with_tensor_operators():
    s = shared(np.arange(3.0), "s")
    x = T.vector("x")
    np.testing.assert_array_equal(function([x], s * x + s)(np.ones(3)), [0, 2, 4])


def test_container_is_the_storage_cell_under_theanos_names():
    s = shared(np.zeros(2), name="s")
    assert s.container.storage is s.storage and s.container.value is s.storage[0]
    s.container.value = np.ones(2)
    np.testing.assert_array_equal(s.get_value(), [1, 1])
    with pytest.raises(TypeError):
        s.container.value = np.ones(3, dtype="int8").reshape(3, 1)
