"""What a step function may return, read as Theano 1.0.5 reads it: outputs, then updates
(a dict or a list of (shared, new value) pairs), then an until condition; any other form
is a TypeError naming what came and the forms accepted."""
import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import function, shared
from arignote.scan_module import until

DATA = np.array([1.0, 2.0, 3.0])


def _loop():
    """The explicit loop of ``xt * w, xt + w`` over DATA with w += 1 per step; w after it."""
    w, rows = 1.0, []
    for xt in DATA:
        rows.append((xt * w, xt + w))
        w += 1
    return np.array(rows).T, w


@pytest.mark.parametrize("as_updates", [lambda w: [(w, w + 1)], lambda w: ((w, w + 1),),
                                        lambda w: [[w, w + 1]]])
def test_outputs_then_updates_as_pairs(as_updates):
    # (The dict form, which always worked, is in test_scan.py.)
    w = shared(np.float64(1.0), name="w")
    x = T.dvector("x")
    out, updates = arignote.scan(lambda xt: ([xt * w, xt + w], as_updates(w)), sequences=x)
    assert list(updates) == [w]
    got = function([x], out, updates=updates)(DATA)
    expected, w_after = _loop()
    np.testing.assert_allclose(got, expected)
    assert w.get_value() == w_after == 4.0


def test_one_output_then_several_pairs():
    w, v = shared(np.float64(1.0), name="w"), shared(np.float64(10.0), name="v")
    x = T.dvector("x")
    out, updates = arignote.scan(lambda xt: (xt * w, [(w, w + 1), (v, v + 1)]), sequences=x)
    np.testing.assert_allclose(function([x], out, updates=updates)(DATA), _loop()[0][0])
    assert (w.get_value(), v.get_value()) == (4.0, 13.0)


def test_updates_alone_advance_the_shared_variables():
    w, v = shared(np.float64(1.0), name="w"), shared(np.float64(10.0), name="v")
    x = T.dvector("x")
    _, updates = arignote.scan(lambda xt: [(w, w + xt), (v, v * 2)], sequences=x)
    function([x], [], updates=updates)(DATA)
    assert (w.get_value(), v.get_value()) == (1.0 + DATA.sum(), 10.0 * 2 ** 3)


@pytest.mark.parametrize("with_list", [True, False])
def test_outputs_pairs_and_until(with_list):
    w = shared(np.float64(1.0), name="w")
    x = T.dvector("x")

    def step(xt):
        outs = [xt * w] if with_list else xt * w
        return outs, [(w, w + 1)], until(w > 1.5)

    out, updates = arignote.scan(step, sequences=x)
    got = function([x], out, updates=updates)(DATA)
    # The condition reads w before the step's update: it holds in the step where w is 2.
    np.testing.assert_allclose(got, [1.0 * 1, 2.0 * 2])
    assert w.get_value() == 3.0


def test_pairs_and_until():
    w = shared(np.float64(1.0), name="w")
    x = T.dvector("x")
    out, updates = arignote.scan(lambda xt: ([(w, w + xt)], until(w > 2.5)), sequences=x)
    assert out == []
    function([x], [], updates=updates)(np.ones(6))
    # The condition reads w before the step's update: w is 1, 2, 3; it holds in the third step.
    assert w.get_value() == 4.0


def test_two_outputs_in_a_tuple_stay_outputs_and_an_empty_list_is_no_updates():
    x = T.dvector("x")
    out, updates = arignote.scan(lambda xt: (xt * 2, xt + 1), sequences=x)
    assert updates == {}
    np.testing.assert_allclose(function([x], out)(DATA), [DATA * 2, DATA + 1])
    out, updates = arignote.scan(lambda xt: (xt * 2, []), sequences=x)
    assert updates == {}
    np.testing.assert_allclose(function([x], out)(DATA), DATA * 2)


@pytest.mark.parametrize("form", [
    lambda xt, w: ([(w, w + 1)], xt * w),          # updates before outputs
    lambda xt, w: ({w: w + 1}, xt * w),
    lambda xt, w: (xt * w, until(w > 1), [(w, w + 1)]),  # until before updates
    lambda xt, w: (until(w > 1), xt * w),
    lambda xt, w: ([xt * w], [(w, w + 1)], xt),     # a third part that is no condition
    lambda xt, w: until(w > 1),                     # a condition without outputs or updates
])
def test_forms_theano_refuses_are_a_type_error_naming_them(form):
    w = shared(np.float64(1.0), name="w")
    with pytest.raises(TypeError, match=r"cannot read what the step function returned: .*\(outputs, "
                                        r"updates, until\) \(the parts in this order\)"):
        arignote.scan(lambda xt: form(xt, w), sequences=T.dvector("x"))


def test_two_pairs_of_outputs_are_read_as_updates_and_refused():
    # Every item a pair: Theano reads the return as updates; the keys are not shared variables.
    w = shared(np.float64(1.0), name="w")
    v = shared(np.float64(10.0), name="v")
    x = T.dvector("x")
    with pytest.raises(TypeError, match=r"updates must have shared variables as keys.*one flat list"):
        arignote.scan(lambda xt: ([xt * w, xt + w], [(w, w + 1), (v, v + 1)]), sequences=x)
    with pytest.raises(TypeError, match=r"updates must have shared variables as keys.*one flat list"):
        arignote.scan(lambda xt: ([xt * 2, xt * 3], [xt * 4, xt * 5]), sequences=x)
