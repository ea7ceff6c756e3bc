"""A call gives inf and nan silently (numpy's error reports off for its duration only), as
Theano's C code did; NanGuardMode still catches them; the caller's numpy state is theirs."""
import threading
import warnings

import numpy as np
import pytest

from arignote import config, function, tensor as T
from arignote.compile.fperrors import ERRSTATE_QUIET, QUIET
from arignote.compile.nanguardmode import NanGuardError
from arignote.graph.basic import Apply, Op


def reference(values):
    with np.errstate(all="ignore"):
        return [np.log(values), values / 0, np.exp(values * 1000)]


class NumpyLog(Op):
    """A user's Op whose perform calls numpy, as Theano users wrote them."""

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = np.log(inputs[0])


@pytest.mark.parametrize("cxx", [None, ""], ids=["default", "numpy kernels"])
@pytest.mark.parametrize("size", [2, 5000])  # below and above native_min_size
def test_a_call_warns_of_nothing_and_returns_numpys_values(cxx, size):
    x = T.dvector("x")
    values = np.resize(np.array([0.0, 1.0, -1.0]), size)
    with config.change_flags(**({} if cxx is None else {"cxx": cxx})):
        f = function([x], [T.log(x), x / 0, T.exp(x * 1000)])
        fused = function([x], T.exp(x * 1000) + T.log(x))  # one Composite node
        own = function([x], NumpyLog()(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = f(values)
        for actual, expected in zip(got, reference(values)):
            np.testing.assert_array_equal(actual, expected)
        np.testing.assert_array_equal(fused(values), sum(reference(values)[::2]))
        np.testing.assert_array_equal(own(values), reference(values)[0])


def test_compiling_folds_and_test_values_warn_of_nothing():
    x = T.dvector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = function([x], x + T.log(T.constant(np.zeros(2))) + T.constant(1.0) / 0)
        np.testing.assert_array_equal(f(np.ones(2)), [np.nan, np.nan])
        with config.change_flags(compute_test_value="raise"):
            y = T.dvector("y")
            y.tag.test_value = np.zeros(2)
            assert np.array_equal(T.log(y).tag.test_value, [-np.inf, -np.inf])


def test_nanguardmode_still_catches_them():
    x = T.dvector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = function([x], T.log(x) * 2, mode="NanGuardMode")
        assert np.allclose(f(np.ones(2)), 0)
        with pytest.raises(NanGuardError, match="NanGuardMode: -?inf in output 0 of node"):
            f(np.array([0.0, 1.0]))
        with pytest.raises(NanGuardError, match="NaN"):
            f(np.array([-1.0, 1.0]))


def test_the_callers_numpy_state_is_restored_after_calls_and_failed_calls():
    x, y = T.dvector("x"), T.dvector("y")
    f = function([x, y], T.log(x) + y)
    before = np.geterr()
    with np.errstate(all="raise"):
        assert np.isneginf(f(np.zeros(2), np.zeros(2))).all()  # no FloatingPointError inside
        with pytest.raises(ValueError):  # the shapes do not fit, inside the call
            f(np.zeros(2), np.zeros(3))
        with pytest.raises(TypeError):  # refused before any thunk runs
            f("text", np.zeros(2))
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise", "invalid": "raise"}
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in log"):
        np.log(np.zeros(1))


def test_a_call_in_another_thread_leaves_this_threads_state_alone():
    x = T.dvector("x")
    f = function([x], T.log(x))
    seen = []
    with np.errstate(divide="raise"):
        worker = threading.Thread(target=lambda: seen.append(f(np.zeros(2))))
        worker.start()
        worker.join()
        assert np.geterr()["divide"] == "raise"
    assert np.isneginf(seen[0]).all()


@pytest.mark.parametrize("quiet", [QUIET, ERRSTATE_QUIET], ids=["in use", "numpy 1's"])
def test_the_quiet_state_silences_and_restores(quiet):
    get, enter, state, leave = quiet
    with np.errstate(divide="warn", invalid="raise"):
        assert get() is not state
        token = enter(state)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert np.isnan(np.log(-np.ones(1))).all() and np.isneginf(np.log(np.zeros(1))).all()
        leave(token)
        assert np.geterr()["divide"] == "warn" and np.geterr()["invalid"] == "raise"


class CallsAFunction(Op):
    """An Op whose perform calls another compiled function (as scan's inner function is)."""

    def __init__(self, inner):
        self.inner = inner

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = self.inner(inputs[0]) + np.log(inputs[0])  # and numpy after it returns


def test_a_call_inside_a_call_keeps_the_outer_calls_state():
    x = T.dvector("x")
    inner = function([x], T.log(x))
    outer = function([x], CallsAFunction(inner)(x) * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isneginf(outer(np.zeros(2))).all()
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))


def test_theanos_standalone_linkers_run_quietly_too():
    from arignote.compile.linkers import PerformLinker, WrapLinker
    from arignote.graph.fg import FunctionGraph
    x = T.dvector("x")
    graph = FunctionGraph([x], [T.log(x) / 0])
    programs = [PerformLinker().accept(graph).make_function(),
                WrapLinker([PerformLinker()], lambda i, node, thunk: thunk()).accept(graph).make_function()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for run in programs:
            assert np.isneginf(run(np.zeros(2))).all()
