"""RandomStreams against the numpy recipe of Theano 1.0, bit for bit.

The recipe: draw k (in creation order) uses ``RandomState(RandomState(seed)'s
k-th randint(2**30))`` and calls the legacy method named like the draw.
"""
import numpy as np
import pytest

from arignote import config, function, shared, tensor as T
from arignote.gradient import grad
from arignote.tensor.random import RandomFunction, RandomStateType
from arignote.tensor.shared_randomstreams import RandomStreams


def recipe_states(seed, count):
    seedgen = np.random.RandomState(seed)
    return [np.random.RandomState(int(seedgen.randint(2 ** 30))) for _ in range(count)]


def test_theano_tutorial_numbers():
    # The numbers Theano's documentation prints for this example (seed 234, float64).
    srng = RandomStreams(seed=234)
    f = function([], srng.uniform((2, 2)))
    np.testing.assert_allclose(f(), [[0.12672381, 0.97091597], [0.13989098, 0.88754825]], atol=1e-8)


@pytest.mark.parametrize("seed", [0, 234, 2 ** 29 + 7])
@pytest.mark.parametrize("floatx", ["float32", "float64"])
def test_float_draws_match_recipe(seed, floatx):
    with config.change_flags(floatX=floatx):
        srng = RandomStreams(seed)
        low = np.asarray([0.5, -1.25, 3.0], floatx)
        draws = [srng.uniform((2, 3)), srng.normal((4,), avg=1.5, std=2.0),
                 srng.uniform(size=None, low=low, high=5.0), srng.normal((2, 3), std=abs(low))]
        f = function([], draws)
        states = recipe_states(seed, 4)
        for _ in range(2):
            got = f()
            want = [states[0].uniform(0.0, 1.0, (2, 3)), states[1].normal(1.5, 2.0, (4,)),
                    states[2].uniform(low, np.float32(5.0), (3,)),
                    states[3].normal(0.0, abs(low), (2, 3))]
            for g, w in zip(got, want):
                assert g.dtype == floatx
                np.testing.assert_array_equal(g, w.astype(floatx))


@pytest.mark.parametrize("seed", [1, 99, 123456])
def test_discrete_draws_match_recipe(seed):
    srng = RandomStreams(seed)
    pvals = np.asarray([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    draws = [srng.binomial((3, 4), n=5, p=0.3), srng.random_integers((2, 5), low=-3, high=7),
             srng.choice((6,), a=10, replace=False), srng.choice((3, 2), a=4, p=[0.1, 0.2, 0.3, 0.4]),
             srng.permutation((2,), n=6), srng.permutation(n=4),
             srng.multinomial((2,), n=7, pvals=pvals), srng.poisson((5,), lam=3.0)]
    f = function([], draws)
    s = recipe_states(seed, len(draws))
    for _ in range(2):
        got = f()
        want = [s[0].binomial(5, 0.3, (3, 4)),
                np.array([[s[1].randint(-3, 8) for _ in range(5)] for _ in range(2)]),
                s[2].choice(10, (6,), False), s[3].choice(4, (3, 2), True, [0.1, 0.2, 0.3, 0.4]),
                np.stack([s[4].permutation(6) for _ in range(2)]), s[5].permutation(4),
                np.stack([s[6].multinomial(7, row) for row in pvals]), s[7].poisson(3.0, (5,))]
        for g, w in zip(got, want):
            assert g.dtype == "int64"
            np.testing.assert_array_equal(g, w)


def test_symbolic_size_and_minus_one():
    srng = RandomStreams(5)
    x = T.matrix("x")
    u = srng.uniform(size=x.shape)
    n = srng.normal(size=(-1, 3), avg=T.zeros((4, 1)))
    f = function([x], [u, n])
    got_u, got_n = f(np.zeros((2, 3)))
    s = recipe_states(5, 2)
    np.testing.assert_array_equal(got_u, s[0].uniform(size=(2, 3)))
    np.testing.assert_array_equal(got_n, s[1].normal(np.zeros((4, 1)), 1.0, (4, 3)))


def test_each_call_draws_anew_and_no_default_updates_repeats():
    srng = RandomStreams(seed=234)
    u = srng.uniform((3,))
    f = function([], u)
    assert not np.array_equal(f(), f())
    g = function([], u, no_default_updates=True)
    np.testing.assert_array_equal(g(), g())
    h = function([], u, no_default_updates=[u.rng])
    np.testing.assert_array_equal(h(), h())


def test_two_equal_draws_are_not_merged_nor_folded():
    srng = RandomStreams(3)
    a, b = srng.uniform((4,)), srng.uniform((4,))
    f = function([], [a, b, a + a - 2 * a])
    x, y, zero = f()
    assert not np.array_equal(x, y)
    np.testing.assert_allclose(zero, 0)  # one draw used three times is one set of numbers
    nodes = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, RandomFunction)]
    assert len(nodes) == 2
    assert RandomFunction.foldable is False


def test_seed_reproduces_and_follows_recipe():
    srng = RandomStreams(10)
    draws = [srng.uniform((3,)), srng.normal((2,))]
    f = function([], draws)
    first = f()
    f()
    srng.seed(10)
    for g, w in zip(f(), first):
        np.testing.assert_array_equal(g, w)
    srng.seed(77)
    s = recipe_states(77, 2)
    got = f()
    np.testing.assert_array_equal(got[0], s[0].uniform(size=(3,)))
    np.testing.assert_array_equal(got[1], s[1].normal(size=(2,)))


def test_state_get_set_and_transfer_between_graphs():
    srng = RandomStreams(1)
    u = srng.uniform((5,))
    f = function([], u)
    saved = u.rng.get_value()               # a copy: later calls do not change it
    first = f()
    u.rng.set_value(saved)
    np.testing.assert_array_equal(f(), first)
    # Another streams object's draw continues exactly where this one stands.
    other = RandomStreams(999)
    v = other.uniform((5,))
    g = function([], v)
    v.rng.set_value(u.rng.get_value(borrow=True), borrow=False)
    np.testing.assert_array_equal(g(), f())
    assert isinstance(srng[u.rng], np.random.RandomState)
    srng[u.rng] = np.random.RandomState(4)
    np.testing.assert_array_equal(f(), np.random.RandomState(4).uniform(size=(5,)))


def test_shared_random_state_and_errors():
    state = shared(np.random.RandomState(3))
    assert isinstance(state.type, RandomStateType)
    with pytest.raises(TypeError, match="RandomState"):
        state.set_value(np.zeros(3))
    r = state.get_value()
    r.uniform()
    assert state.type.values_eq(state.get_value(), np.random.RandomState(3))
    assert not state.type.values_eq(r, np.random.RandomState(3))
    with pytest.raises(ValueError, match="ndim"):
        RandomStreams(1).uniform((2, 3), ndim=3)


def test_draws_are_not_differentiable_but_the_rest_is():
    srng = RandomStreams(2)
    x = T.vector("x")
    noise = srng.normal((3,))
    g = grad((x * noise).sum(), x)
    f = function([x], [g, noise], no_default_updates=True)
    grad_value, noise_value = f(np.ones(3))
    np.testing.assert_array_equal(grad_value, noise_value)


@pytest.mark.parametrize("draw, mean, var", [
    (lambda s: s.uniform((20000,), low=2.0, high=4.0), 3.0, 4 / 12),
    (lambda s: s.normal((20000,), avg=-1.0, std=3.0), -1.0, 9.0),
    (lambda s: s.binomial((20000,), n=10, p=0.25), 2.5, 10 * 0.25 * 0.75),
    (lambda s: s.poisson((20000,), lam=4.0), 4.0, 4.0),
    (lambda s: s.random_integers((20000,), low=0, high=9), 4.5, 99 / 12),
])
def test_statistics(draw, mean, var):
    values = function([], draw(RandomStreams(42)))()
    assert abs(values.mean() - mean) < 5 * np.sqrt(var / values.size)
    assert abs(values.var() - var) < 0.05 * var


def test_permutation_and_multinomial_shapes():
    srng = RandomStreams(8)
    perm = function([], srng.permutation((3, 2), n=5))()
    assert perm.shape == (3, 2, 5)
    assert all(sorted(p) == list(range(5)) for p in perm.reshape(-1, 5))
    counts = function([], srng.multinomial(n=[3, 8], pvals=[[0.5, 0.5], [0.1, 0.9]]))()
    np.testing.assert_array_equal(counts.sum(axis=1), [3, 8])


def test_choice_with_a_falsy_p_draws_uniformly():
    srng = RandomStreams(4)
    f = function([], srng.choice((3, 2), 10, 1, 0))  # Theano reads p=0 as no p
    (state,) = recipe_states(4, 1)
    np.testing.assert_array_equal(f(), state.choice(10, (3, 2), True, None))


def test_shuffle_row_elements_matches_numpy_shuffles():
    srng = RandomStreams(6)
    m = T.dmatrix("m")
    out = srng.shuffle_row_elements(m)
    assert out.permutation.ndim == 2
    f = function([m], out)
    values = np.arange(15.0).reshape(3, 5)
    (state,) = recipe_states(6, 1)
    for _ in range(2):
        want = values.copy()
        for row in want:
            state.shuffle(row)
        np.testing.assert_array_equal(f(values), want)
    v = T.dvector("v")
    vec = np.arange(7.0)
    (state,) = recipe_states(9, 1)
    want = vec.copy()
    state.shuffle(want)
    np.testing.assert_array_equal(function([v], RandomStreams(9).shuffle_row_elements(v))(vec), want)
    with pytest.raises(TypeError):
        f(vec)
