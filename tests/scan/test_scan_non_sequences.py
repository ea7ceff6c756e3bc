"""Non-sequences are values computed once, before the loop: a random draw passed in (or a
shared variable's expression) keeps its value at every step, while draws made inside the
step are new each step."""
import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import function, shared
from arignote.sandbox.rng_mrg import MRG_RandomStreams
from arignote.tensor.shared_randomstreams import RandomStreams


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_a_random_non_sequence_is_drawn_once_per_call(streams):
    srng = streams(123)
    x = T.matrix("x")
    y = srng.uniform(size=x.shape)
    z, updates = arignote.scan(lambda a: a * 1, non_sequences=y, n_steps=3)
    assert updates == {}  # nothing in the loop draws, so the loop updates no random state
    f = function([x], [y, z], updates=updates)
    first_y, first_z = f(np.zeros((2, 2), "float32"))
    second_y, second_z = f(np.zeros((2, 2), "float32"))
    for drawn, steps in ((first_y, first_z), (second_y, second_z)):
        assert steps.shape == (3, 2, 2)
        for step in steps:
            np.testing.assert_array_equal(step, drawn)
    assert not np.array_equal(first_y, second_y)  # the function's own update draws anew per call


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_a_random_non_sequence_also_read_by_closure_keeps_its_value(streams):
    srng = streams(5)
    x = T.matrix("x")
    y = srng.uniform(size=x.shape)
    z, updates = arignote.scan(lambda a: a + y, non_sequences=y, n_steps=3)
    drawn, steps = function([x], [y, z], updates=updates)(np.zeros((2, 3), "float32"))
    np.testing.assert_allclose(steps, np.stack([2 * drawn] * 3), rtol=1e-6)


def test_draws_made_in_the_step_stay_new_each_step_beside_a_random_non_sequence():
    srng = RandomStreams(7)
    noise = srng.uniform(size=(2,))
    out, updates = arignote.scan(lambda a: a + srng.uniform(size=(2,)), non_sequences=noise, n_steps=3)
    assert len(updates) == 1  # the step's own stream, not the non-sequence's
    drawn, steps = function([], [noise, out], updates=updates)()
    inner = steps - drawn
    assert not np.allclose(inner[0], inner[1]) and not np.allclose(inner[1], inner[2])


def test_an_expression_of_an_updated_shared_variable_is_taken_before_the_loop():
    w = shared(np.float64(1.0), name="w")
    out, updates = arignote.scan(lambda a: (a + w, {w: w + 1}), non_sequences=w * 2, n_steps=3)
    f = function([], out, updates=updates)
    # w * 2 is 2 at the start; w itself reads 1, 2, 3 over the steps.
    np.testing.assert_allclose(f(), [2 + 1, 2 + 2, 2 + 3])
    assert w.get_value() == 4.0
    np.testing.assert_allclose(f(), [8 + 4, 8 + 5, 8 + 6])

    # A shared variable passed as a non-sequence is itself, and takes the step's updates.
    w.set_value(np.float64(1.0))
    out, updates = arignote.scan(lambda a: (a + 0, {w: w + 1}), non_sequences=w, n_steps=3)
    np.testing.assert_allclose(function([], out, updates=updates)(), [1, 2, 3])
    assert w.get_value() == 4.0


def test_a_non_sequence_the_step_ignores_is_still_an_input():
    """Theano kept every non_sequence as an input of the loop: a function listing one the step
    does not read must not raise UnusedInputError (Theano's test_pushout_seqs)."""
    X, Y = T.dmatrix("X"), T.dmatrix("Y")
    out, _ = arignote.scan(lambda i, a, b: a.sum() * i, sequences=T.arange(3), non_sequences=[X, Y])
    f = arignote.function([X, Y], out)
    xv = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(f(xv, np.ones((4, 4))), xv.sum() * np.arange(3))
    with pytest.raises(arignote.gradient.DisconnectedInputError, match="'Y'"):
        arignote.grad(out.sum(), Y)
    g = function([X, Y], arignote.grad(out.sum(), X), on_unused_input="ignore")
    np.testing.assert_allclose(g(xv, xv), np.full((2, 3), 3.0))  # d/dX of sum_i i * X.sum()
