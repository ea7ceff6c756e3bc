"""Theano's ``raw_random`` contract: each distribution returns ``[new_state, sample]``;
``RandomFunction`` takes a distribution name, a ``RandomState`` method or a function
``fn(rng, *args, size)``, and ``inplace=True`` advances the given state itself. Draws are
compared with numpy's own calls on the same seed."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from arignote import In, function, tensor as T
from arignote.tensor.random import RandomFunction, random_state_type
from arignote.tensor.random import basic
from arignote.tensor.random.samplers import permutation as permutation_helper


def test_distributions_return_state_and_sample():
    rng = random_state_type()
    post, out = basic.uniform(rng, (2, 3), -1.0, 2.0)
    assert post.type == rng.type and out.ndim == 2
    f = function([rng], [post, out])
    state = np.random.RandomState(7)
    new_state, value = f(state)
    expected = np.random.RandomState(7).uniform(-1.0, 2.0, (2, 3))
    assert np.array_equal(value, expected)
    assert np.array_equal(f(new_state)[1], np.random.RandomState(7).uniform(-1, 2, (4, 3))[2:])
    assert np.array_equal(state.uniform(size=3), np.random.RandomState(7).uniform(size=3))  # untouched


@pytest.mark.parametrize("fn", ["normal", np.random.RandomState.normal])
def test_random_function_from_name_or_method(fn):
    op = RandomFunction(fn, T.dvector)
    assert op == RandomFunction("normal", T.dvector) and not op.inplace and op.destroy_map == {}
    assert str(op) == "RandomFunction{normal}"
    rng = random_state_type()
    post, out = op(rng, (4,), 1.0, 2.0)
    assert out.type == T.dvector
    got = function([rng], out)(np.random.RandomState(3))
    assert np.array_equal(got, np.random.RandomState(3).normal(1.0, 2.0, (4,)))
    assert pickle.loads(pickle.dumps(op)) == op


def test_any_randomstate_method_and_a_function():
    rng = random_state_type()
    _, gamma = RandomFunction("gamma", T.dvector)(rng, (3,), 2.0, 0.5)  # every argument, then size
    assert np.array_equal(function([rng], gamma)(np.random.RandomState(1)),
                          np.random.RandomState(1).gamma(2.0, 0.5, size=(3,)))
    _, perms = RandomFunction(permutation_helper, T.lmatrix, ndim_added=1)(rng, (2,), 5)
    source = np.random.RandomState(2)
    assert np.array_equal(function([rng], perms)(np.random.RandomState(2)),
                          [source.permutation(5), source.permutation(5)])
    _, wrong = RandomFunction(permutation_helper, T.lmatrix)(rng, (2,), 5)
    with pytest.raises(ValueError, match="size"):
        function([rng], wrong)(np.random.RandomState(2))


def test_bad_random_function_arguments():
    with pytest.raises(ValueError, match="unknown distribution"):
        RandomFunction("no_such_draw", T.dvector)
    with pytest.raises(TypeError, match="TensorType"):
        RandomFunction("uniform", "float64")


def test_inplace_draw_advances_the_state_and_readers_run_first():
    rng = random_state_type()
    plain = RandomFunction("uniform", T.dvector)
    inplace = RandomFunction("uniform", T.dvector, inplace=True)
    assert inplace.destroy_map == {0: [0]}
    _, before = plain(rng, (4,), -2.0, 2.0)
    post, destroyed = inplace(rng, (4,), -4.0, 4.0)
    _, after = plain(rng, (4,), -4.0, 4.0)  # built after the destroyer, still reads the old state
    state = np.random.RandomState(5)
    f = function([In(rng, value=state, update=post, mutable=True)], [before, destroyed, after],
                 accept_inplace=True)
    first = f()
    assert np.allclose(first[0] * 2, first[1]) and np.array_equal(first[1], first[2])
    second = f()
    assert np.array_equal(second[1], np.random.RandomState(5).uniform(-4, 4, (8,))[4:])


def test_update_of_a_copied_state_is_a_copy():
    rng = random_state_type()
    post, out = basic.normal(rng, (2,))
    f = function([In(rng, value=np.random.RandomState(0), update=post)], [post, out])
    returned_state, _ = f()
    assert returned_state is not f[rng]
    assert np.array_equal(returned_state.normal(size=2), f[rng].normal(size=2))
