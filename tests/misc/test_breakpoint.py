"""PdbBreakpoint: values pass through; a true condition opens the debugger in perform, where
the values changed in ``monitored`` are what the function goes on with."""
from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

from arignote import function, grad, shared, tensor as T
from arignote.misc import breakpoint as bp
from arignote.misc.breakpoint import PdbBreakpoint
from tests.utils import check_infer_shape
from tests.gpu.conftest import DEVICES, use


def _graph():
    x, c = T.fmatrix("x"), T.fscalar("c")
    out = T.dot(x - c, (x - c).T)
    stop = PdbBreakpoint("sum too high")
    mx, mc, mout = stop(T.gt(out.sum(), 1000), x, c, out)
    return x, c, out, mx, mc, mout


@pytest.fixture
def debugger(monkeypatch):
    """Stands in for pdb: records each stop and, like a user, edits ``monitored``."""
    stops = []

    def set_trace():
        monitored = sys._getframe(1).f_locals["monitored"]
        stops.append([m.copy() for m in monitored])
        monitored[0][...] = 7

    monkeypatch.setattr(bp, "_set_trace", set_trace)
    return stops


@pytest.mark.parametrize("where", ["cpu", "opencl"])
def test_values_pass_through_until_the_condition_holds(where, debugger, capsys):
    with use(DEVICES[where]):
        x, c, out, mx, mc, mout = _graph()
        f = function([x, c], [mx, mc, mout])
        small = np.ones((2, 2), "float32")
        got = f(small, 1.0)
        np.testing.assert_array_equal(got[0], small)
        np.testing.assert_array_equal(got[2], np.zeros((2, 2)))
        assert debugger == [] and capsys.readouterr().out == ""
        big = np.arange(9, dtype="float32").reshape(3, 3)
        got = f(big, 20.0)
        assert len(debugger) == 1
        np.testing.assert_array_equal(debugger[0][0], big)
        np.testing.assert_array_equal(got[0], np.full((3, 3), 7))  # the debugger's edit
        np.testing.assert_allclose(got[2], (big - 20) @ (big - 20).T)
        assert "Conditional breakpoint 'sum too high' activated" in capsys.readouterr().out
        np.testing.assert_array_equal(big, np.arange(9).reshape(3, 3))  # the caller's array


def test_gradient_connection_pattern_and_shapes():
    x, c, out, mx, mc, mout = _graph()
    gx, gc = grad(mx.sum(), x), grad(mc * 1, c)
    got = function([x, c], [gx, gc, mx])(np.ones((3, 3), "float32"), 2.0)
    np.testing.assert_array_equal(got[0], np.ones((3, 3)))
    assert got[1] == 1
    assert mout.owner.op.connection_pattern(mout.owner) == [
        [False, False, False], [True, False, False], [False, True, False], [False, False, True]]
    check_infer_shape([x, c], [mx, mc, mout], [np.ones((2, 3), "float32"), np.float32(1)])


def test_a_non_scalar_condition_is_refused_and_the_op_pickles():
    x = T.fvector("x")
    with pytest.raises(TypeError, match="'check': the condition must be a scalar.*'x'"):
        PdbBreakpoint("check")(x, x)
    y = PdbBreakpoint("check")(T.gt(x.sum(), 0), x)  # one output: the variable itself
    f = pickle.loads(pickle.dumps(function([x], y * 2)))
    np.testing.assert_array_equal(f(np.array([-1.0, -2.0], "float32")), [-2, -4])
    w = shared(np.ones(2, "float32"), name="w")
    assert function([], PdbBreakpoint("w")(0, w))().tolist() == [1, 1]
