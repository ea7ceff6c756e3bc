"""Test values: config.compute_test_value evaluates each node as it is built, so a shape
error is raised by the user's line, on the CPU and with shared variables on a device."""
from __future__ import annotations

import pickle
import sys
import traceback
import warnings

import numpy as np
import pytest

from arignote import config, function, scan, shared, tensor as T
from arignote.graph.testvalue import TestValueError
from tests.gpu.conftest import DEVICES, use


def _line_of(err: BaseException) -> int:
    """The line of this file that the traceback of ``err`` passes through last."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == __file__]
    return frames[-1].lineno


def test_off_by_default_and_costs_no_evaluation():
    assert config.compute_test_value == "off"
    x, y = T.matrix("x"), T.vector("y")
    x.tag.test_value = np.ones((3, 4))
    y.tag.test_value = np.ones(5)
    z = x + y  # would fail on the test values; nothing is evaluated
    assert not hasattr(z.tag, "test_value")


@pytest.mark.parametrize("where", ["cpu", "opencl"])
def test_a_shape_error_is_raised_at_the_line_that_builds_the_node(where):
    with use(DEVICES[where]), config.change_flags(compute_test_value="raise", floatX="float32"):
        w = shared(np.ones((4, 3), "float32"), name="w")  # on the device under opencl
        x = T.matrix("x")
        x.tag.test_value = np.ones((2, 4), "float32")
        h = T.dot(x, w)
        assert h.tag.test_value.shape == (2, 3)
        b = T.vector("b")
        b.tag.test_value = np.ones(5, "float32")
        line = sys._getframe().f_lineno + 2
        with pytest.raises(ValueError, match="broadcast") as info:
            h + b
    assert _line_of(info.value) == line
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert f"{__file__}:{line}" in notes and "(2, 3), (1, 5)" in notes


def test_outputs_carry_values_equal_to_numpy():
    with config.change_flags(compute_test_value="raise"):
        x = T.matrix("x")
        x.tag.test_value = np.arange(6.0).reshape(2, 3)
        y = T.exp(x).sum(axis=1) * 2
        pieces = T.split(x, [1, 2], 2, axis=1)
    np.testing.assert_allclose(y.tag.test_value, np.exp(np.arange(6.0).reshape(2, 3)).sum(1) * 2)
    assert [p.tag.test_value.shape for p in pieces] == [(2, 1), (2, 2)]


def test_a_missing_test_value_raises_warns_or_is_ignored():
    x, y = T.vector("x"), T.vector("y")
    x.tag.test_value = np.ones(3)
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(TestValueError, match="'y' has no test value"):
            x + y
    with config.change_flags(compute_test_value="warn"):
        with pytest.warns(UserWarning, match="'y' has no test value") as record:
            z = x + y
        assert record[0].filename == __file__
    assert not hasattr(z.tag, "test_value")
    with config.change_flags(compute_test_value="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        z = x + y
    assert not hasattr(z.tag, "test_value")


def test_a_test_value_must_fit_the_type_when_it_is_set():
    x = T.fmatrix("x")
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(TypeError, match="float32 matrix"):
            x.tag.test_value = np.ones((2, 2))  # float64 does not fit losslessly
        with pytest.raises(TypeError, match="2 dimensions"):
            x.tag.test_value = np.ones(3, "float32")
    x.tag.test_value = [[1, 2]]  # converted, as inputs are
    assert x.tag.test_value.dtype == np.float32
    copy = pickle.loads(pickle.dumps(x))
    np.testing.assert_array_equal(copy.tag.test_value, [[1, 2]])


def test_while_off_an_unfit_test_value_is_kept_and_refused_when_used():
    """Theano stores it as given; legacy code sets test values it never computes with."""
    x, y = T.fmatrix("x"), T.fmatrix("y")
    x.tag.test_value = np.ones((2, 2))
    y.tag.test_value = np.ones((2, 2), "float32")
    assert x.tag.test_value.dtype == np.float64
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(TypeError, match="float32 matrix"):
            T.dot(x, y)


def test_a_missing_test_value_is_a_value_error_as_in_theano():
    x, y = T.vector("x"), T.vector("y")
    x.tag.test_value = np.ones(3)
    with config.change_flags(compute_test_value="raise"), pytest.raises(ValueError, match="'y'"):
        x * y


def test_destroyed_inputs_are_not_changed_and_compiling_builds_no_test_values():
    with config.change_flags(compute_test_value="raise"):
        x = T.vector("x")
        x.tag.test_value = np.ones(3)
        f = function([x], T.exp(x) * 2 + 1)  # the rewrites' nodes get no test values
        np.testing.assert_array_equal(x.tag.test_value, np.ones(3))
    np.testing.assert_allclose(f(np.zeros(3)), [3, 3, 3])


def test_the_step_of_a_scan_is_evaluated_on_the_first_rows():
    with config.change_flags(compute_test_value="raise"):
        seq = T.matrix("seq")
        seq.tag.test_value = np.ones((5, 3))
        h0 = T.vector("h0")
        h0.tag.test_value = np.zeros(3)
        out, _ = scan(lambda row, h: T.tanh(row + h), sequences=seq, outputs_info=h0)
        assert out.tag.test_value.shape == (5, 3)
        bad = T.vector("bad")
        bad.tag.test_value = np.zeros(4)
        with pytest.raises(ValueError, match="broadcast"):
            scan(lambda row, h: row + h, sequences=seq, outputs_info=bad)


# ------------------------------------------- get_debug_values, debug_error_message
def test_get_debug_values_loops_only_while_test_values_are_on():
    from arignote.graph.testvalue import get_debug_values
    x, y = T.vector("x"), T.matrix("y")
    x.tag.test_value = np.zeros(4, dtype=config.floatX)
    assert get_debug_values(x) == []  # off: the debugging loop does not run
    with config.change_flags(compute_test_value="ignore"):
        (value,) = get_debug_values(x)
        assert value.shape == (4,)
        ((xv, extra),) = get_debug_values(x, np.ones((2, 2)))
        assert xv.shape == (4,) and extra.shape == (2, 2)
        assert get_debug_values(x, y) == []  # y has none
    with config.change_flags(compute_test_value="warn"):
        with pytest.warns(UserWarning, match="argument 1 .* has no test value"):
            assert get_debug_values(x, y) == []
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(TestValueError, match="argument 0"):
            get_debug_values(y)
        with pytest.raises(AttributeError):  # what Theano code catches
            get_debug_values(y)


@pytest.mark.parametrize("mode, raises", [("raise", True), ("ignore", True), ("warn", False)])
def test_debug_error_message_raises_or_warns(mode, raises):
    from arignote.graph.testvalue import debug_error_message
    with config.change_flags(compute_test_value=mode):
        if raises:
            with pytest.raises(ValueError, match="bad shape"):
                debug_error_message("bad shape")
        else:
            with pytest.warns(UserWarning, match="bad shape"):
                debug_error_message("bad shape")
