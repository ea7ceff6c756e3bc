"""MRG31k3p streams against a slow reference written from the published definition.

The reference below uses exact Python integers and nothing from arignote:
L'Ecuyer & Touzin's recurrences, stream spacing by powers of the companion
matrices (L'Ecuyer, Simard, Chen & Kelton), and Theano's layout (seed row
``[seed]*6``, substreams 2**72 apart, draws 2**134 apart, element i from
stream i % n_streams). The SSJ values are the first and last numbers of the
sample file L'Ecuyer's Java package produced for Theano's own tests (seed
12345, 12 draws of 7 substreams, 5 numbers each).
"""
import numpy as np
import pytest

from arignote import function, tensor as T
from arignote import shared
from arignote.sandbox import rng_mrg
from arignote.sandbox.rng_mrg import MRG_RandomStreams, guess_n_streams
from arignote.tensor.random import mrg31k3p

M1, M2 = 2 ** 31 - 1, 2 ** 31 - 21069
COMP1 = [[0, 2 ** 22, 2 ** 7 + 1], [1, 0, 0], [0, 1, 0]]
COMP2 = [[2 ** 15, 0, 2 ** 15 + 1], [1, 0, 0], [0, 1, 0]]


def ref_step(row):
    x1 = (2 ** 22 * row[1] + (2 ** 7 + 1) * row[2]) % M1
    x2 = (2 ** 15 * row[3] + (2 ** 15 + 1) * row[5]) % M2
    z = (x1 - x2) % M1
    return [x1, row[0], row[1], x2, row[3], row[4]], (z if z else M1)


def ref_matpow(a, e, m):
    result = [[int(i == j) for j in range(3)] for i in range(3)]
    while e:
        if e & 1:
            result = [[sum(result[i][k] * a[k][j] for k in range(3)) % m for j in range(3)]
                      for i in range(3)]
        a = [[sum(a[i][k] * a[k][j] for k in range(3)) % m for j in range(3)] for i in range(3)]
        e >>= 1
    return result


def ref_advance(row, steps):
    a1, a2 = ref_matpow(COMP1, steps, M1), ref_matpow(COMP2, steps, M2)
    return ([sum(a1[i][j] * row[j] for j in range(3)) % M1 for i in range(3)]
            + [sum(a2[i][j] * row[3 + j] for j in range(3)) % M2 for i in range(3)])


def ref_z(seed, draw_index, n_streams, n, calls=1):
    """The z values of ``calls`` calls of the ``draw_index``-th draw of n numbers."""
    row = list(seed) if isinstance(seed, tuple) else [seed] * 6
    first = ref_advance(row, draw_index * 2 ** 134)
    rows = [first]
    for _ in range(min(n_streams, n) - 1):   # streams past the n-th serve no element
        rows.append(ref_advance(rows[-1], 2 ** 72))
    out = []
    for _ in range(calls):
        values = []
        for i in range(n):
            rows[i % n_streams], z = ref_step(rows[i % n_streams])
            values.append(z)
        out.append(values)
    return np.array(out)


def test_step_matches_the_recurrence_on_random_states():
    rng = np.random.default_rng(0)
    states = np.concatenate([rng.integers(0, M1, (500, 3)), rng.integers(0, M2, (500, 3))],
                            axis=1).astype(np.int32)
    states[:3, :3] = M1 - 1                   # the largest values of each component
    states[3:6, 3:] = M2 - 1
    want = [ref_step([int(v) for v in row]) for row in states]
    z = mrg31k3p.step(states)
    np.testing.assert_array_equal(states, [w[0] for w in want])
    np.testing.assert_array_equal(z, [w[1] for w in want])


def test_jump_matrices_are_powers_of_the_companion_matrices():
    assert [list(r) for r in mrg31k3p.A1P72] == ref_matpow(COMP1, 2 ** 72, M1)
    assert [list(r) for r in mrg31k3p.A2P134] == ref_matpow(COMP2, 2 ** 134, M2)
    rows = mrg31k3p.substreams(np.full(6, 7, np.int32), 11)
    np.testing.assert_array_equal(rows, [ref_advance([7] * 6, i * 2 ** 72) for i in range(11)])


@pytest.mark.parametrize("seed", [12345, 1, 987654321, (1, 2, 3, 4, 5, 6)])
@pytest.mark.parametrize("n, nstreams", [(1, None), (13, 4), (20, None), (7, 30)])
def test_uniform_matches_reference_float64(seed, n, nstreams):
    srng = MRG_RandomStreams(seed)
    srng.uniform((2,), dtype="float64")          # a first draw: the second is 2**134 further
    u = srng.uniform((n,), nstreams=nstreams, dtype="float64")
    f = function([], u)
    got = np.array([f(), f()])
    z = ref_z(seed, 1, nstreams or guess_n_streams((n,)), n, calls=2)
    np.testing.assert_array_equal(got, z * 2.0 ** -31)


def test_uniform_float32_and_float16_conversions():
    srng = MRG_RandomStreams(42)
    u32 = srng.uniform((3, 4), dtype="float32")
    u16 = srng.uniform((5,), dtype="float16")
    got32, got16 = function([], [u32, u16])()
    z32 = ref_z(42, 0, guess_n_streams((3, 4)), 12)[0]
    z16 = ref_z(42, 1, guess_n_streams((5,)), 5)[0]
    want32 = np.float32(z32) * np.float32(4.6566126e-10)
    np.testing.assert_array_equal(got32, want32.reshape(3, 4))
    assert got32.dtype == "float32" and (got32 < 1).all() and (got32 > 0).all()
    want16 = (((z16 & 0x7FFF) + 1) * float(np.float16(3.0458e-05))).astype(np.float16)
    np.testing.assert_array_equal(got16, want16)


SSJ_FIRST = [  # draw 0, substreams 0..6, five numbers each
    0.7353244530968368, 0.6142074400559068, 0.11007806099951267, 0.6487741703167558,
    0.36619443260133266, 0.2585685825906694, 0.9489980279468, 0.4309556516818702,
    0.12257590936496854, 0.9760319022461772, 0.6940806899219751, 0.18046841165050864,
    0.003993193618953228, 0.5351603352464736, 0.02472442388534546, 0.7705746139399707,
    0.8138928869739175, 0.9650539481081069, 0.24507411010563374, 0.35767574002966285,
    0.4939101580530405, 0.9027785388752818, 0.27498403564095497, 0.03848231676965952,
    0.3081609820947051, 0.9062023567967117, 0.009030417073518038, 0.7953705741092563,
    0.5061718439683318, 0.5975547162815928, 0.5435514179989696, 0.330895590595901,
    0.49919482320547104, 0.9409166998229921, 0.8276205519214272]
SSJ_LAST = [  # draw 11, substreams 4..6
    0.6578835439868271, 0.6049443730153143, 0.17169494135305285, 0.9915955001488328,
    0.10519243823364377, 0.37815978936851025, 0.20879409136250615, 0.45666090911254287,
    0.6456936108879745, 0.684759714640677, 0.8762755445204675, 0.8020628895610571,
    0.1663151141256094, 0.31246642768383026, 0.18852565623819828]


def test_matches_lecuyer_ssj_samples():
    srng = MRG_RandomStreams(12345)
    streams = []
    for _ in range(12):
        f = function([], srng.uniform((7,), nstreams=7, dtype="float64"))
        streams.append(np.array([f() for _ in range(5)]).T.ravel())
    np.testing.assert_array_equal(streams[0], SSJ_FIRST)
    np.testing.assert_array_equal(streams[11][-15:], SSJ_LAST)


def test_calls_differ_no_default_updates_repeats_and_seed_restarts():
    srng = MRG_RandomStreams(7)
    u = srng.uniform((10,))
    n = srng.normal((3, 3))
    f = function([], [u, n])
    first = f()
    second = f()
    assert not np.array_equal(first[0], second[0]) and not np.array_equal(first[1], second[1])
    g = function([], u, no_default_updates=True)
    np.testing.assert_array_equal(g(), g())
    srng.seed()
    for got, want in zip(f(), first):
        np.testing.assert_array_equal(got, want)
    srng.seed(7)
    np.testing.assert_array_equal(f()[0], first[0])
    other = MRG_RandomStreams(7)
    np.testing.assert_array_equal(function([], other.uniform((10,)))(), first[0])


def test_normal_is_box_muller_of_the_uniforms():
    srng = MRG_RandomStreams(3)
    x = srng.normal((2, 5), avg=1.0, std=2.0, dtype="float64")
    got = function([], x)()
    u = ref_z(3, 0, 60 * 256, 10)[0] * 2.0 ** -31
    r = np.sqrt(-2.0 * np.log(u[:5]))
    theta = 2.0 * np.pi * u[5:]
    want = np.concatenate([r * np.cos(theta), r * np.sin(theta)]).reshape(2, 5) * 2.0 + 1.0
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_normal_odd_and_symbolic_sizes():
    srng = MRG_RandomStreams(11)
    odd = function([], srng.normal((3,), dtype="float64"))()
    assert odd.shape == (3,)
    m = T.matrix("m")
    f = function([m], srng.normal(m.shape, dtype="float64"))
    assert f(np.zeros((3, 5))).shape == (3, 5)


def test_binomial_multinomial_choice_from_uniforms():
    srng = MRG_RandomStreams(5)
    b = function([], srng.binomial((6,), p=0.4, dtype="int8"))()
    u = ref_z(5, 0, guess_n_streams((6,)), 6)[0] * 2.0 ** -31
    np.testing.assert_array_equal(b, (u < 0.4).astype("int8"))

    pvals = np.array([[0.2, 0.3, 0.5], [0.05, 0.9, 0.05]])
    counts = function([], srng.multinomial(pvals=pvals, n=2))()
    u = ref_z(5, 1, 60 * 256, 4)[0] * 2.0 ** -31
    want = np.zeros((2, 3), "int64")
    for c in range(2):
        for row in range(2):
            want[row, np.searchsorted(np.cumsum(pvals[row]), u[c * 2 + row], side="right")] += 1
    np.testing.assert_array_equal(counts, want)

    picks = function([], srng.choice(size=3, replace=False, p=np.full((4, 3), 1 / 3)))()
    assert picks.shape == (4, 3)
    assert all(sorted(row) == [0, 1, 2] for row in picks)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_statistics(dtype):
    srng = MRG_RandomStreams(2024)
    u, n, b = function([], [srng.uniform((40000,), low=-1.0, high=3.0, dtype=dtype),
                            srng.normal((40000,), avg=2.0, std=0.5, dtype=dtype),
                            srng.binomial((40000,), p=0.3)])()
    assert u.dtype == dtype and n.dtype == dtype
    assert abs(u.mean() - 1.0) < 0.03 and abs(u.var() - 16 / 12) < 0.03
    assert u.min() >= -1.0 and u.max() < 3.0
    assert abs(n.mean() - 2.0) < 0.01 and abs(n.std() - 0.5) < 0.01
    assert abs(b.mean() - 0.3) < 0.01
    pvals = np.tile([[0.1, 0.6, 0.3]], (20000, 1))
    counts = function([], srng.multinomial(pvals=pvals))()
    np.testing.assert_allclose(counts.mean(axis=0), [0.1, 0.6, 0.3], atol=0.015)
    first = function([], srng.choice(size=1, replace=False, p=pvals))()[:, 0]
    np.testing.assert_allclose(np.bincount(first, minlength=3) / len(first), [0.1, 0.6, 0.3],
                               atol=0.015)


def test_seed_and_argument_errors():
    with pytest.raises(ValueError, match="seed"):
        MRG_RandomStreams(0)
    with pytest.raises(ValueError, match="all 0"):
        MRG_RandomStreams((0, 0, 0, 1, 2, 3))
    srng = MRG_RandomStreams()
    with pytest.raises(ValueError, match="<= 0"):
        srng.uniform((3, 0))
    with pytest.raises(NotImplementedError):
        srng.choice(size=1, p=np.ones((2, 2)) / 2)
    with pytest.raises(NotImplementedError):
        srng.binomial((3,), n=3)


def test_guess_n_streams_is_theanos():
    assert guess_n_streams((5,)) == 5
    assert guess_n_streams((10, 20)) == 200 // 6
    assert guess_n_streams((1000, 1000)) == 60 * 256
    assert guess_n_streams((T.iscalar(),)) == 60 * 256


def test_truncated_normal_redraws_the_tails_as_theano():
    # The recipe, from the same streams: Box-Muller of the first uniforms; samples outside
    # [-2, 2] take radii from a second draw of uniforms in [1/e^2, 1); kept ones come first.
    srng, twin = MRG_RandomStreams(1234), MRG_RandomStreams(1234)
    got = function([], srng.truncated_normal((3, 4), avg=1.0, std=2.0, dtype="float64"))()
    u = function([], twin.uniform((12,), nstreams=60 * 256, dtype="float64"))()
    r, theta = np.sqrt(-2 * np.log(u[:6])), 2 * np.pi * u[6:]
    z0, z1 = r * np.cos(theta), r * np.sin(theta)
    bad0, bad1 = np.abs(z0) > 2, np.abs(z1) > 2
    n_fix = int(bad0.sum() + bad1.sum())
    u_fix = function([], twin.uniform((n_fix,), low=1 / np.e ** 2, high=1.0, nstreams=60 * 256,
                                      dtype="float64"))()
    r_fix = np.sqrt(-2 * np.log(u_fix))
    n0 = int(bad0.sum())
    z = np.concatenate([z0[~bad0], r_fix[:n0] * np.cos(theta[bad0]), z1[~bad1],
                        r_fix[n0:] * np.sin(theta[bad1])])
    np.testing.assert_allclose(got, (z * (2.0 / 0.87962566103423978) + 1.0).reshape(3, 4), rtol=1e-12)
    # Theano 1.0.5 printed these for the same seed and call (recorded from the real library).
    np.testing.assert_allclose(got[0], [-1.0278161194193811, -0.5600894976853159, -1.3236433675551984,
                                        4.346173889013735], rtol=1e-12)
    many = function([], srng.truncated_normal((20000,), dtype="float64"))()
    assert np.abs(many).max() <= 2 / 0.87962566103423978 and abs(many.std() - 1) < 0.02


def test_multinomial_wo_replacement_is_choice():
    p = np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]])
    a, b = MRG_RandomStreams(1234), MRG_RandomStreams(1234)
    with pytest.warns(DeprecationWarning, match="choice"):
        old = a.multinomial_wo_replacement(n=2, pvals=p)
    new = b.choice(size=2, replace=False, p=p)
    np.testing.assert_array_equal(function([], old)(), function([], new)())
    np.testing.assert_array_equal(function([], MRG_RandomStreams(1234).choice(size=2, replace=False, p=p))(),
                                  [[2, 3], [1, 0]])  # Theano 1.0.5 gives these for this seed
    with pytest.raises(ValueError, match="size must be None"):
        a.multinomial_wo_replacement(size=3, n=2, pvals=p)


def test_discrete_draws_have_no_gradient_for_their_probabilities():
    from arignote.gradient import NullTypeGradError, grad
    srng = MRG_RandomStreams(seed=1234)
    p, q = T.dscalars("p", "q")
    pvals = T.stack([p, q, 0.25]).dimshuffle("x", 0)
    draws = {"binomial": lambda: srng.binomial((3,), p=p),
             "binomial float": lambda: srng.binomial((3,), p=T.nnet.sigmoid(p), dtype="float64"),
             "multinomial": lambda: srng.multinomial(pvals=pvals, n=4),
             "choice": lambda: srng.choice(size=1, p=pvals, replace=False)}
    for name, draw in draws.items():
        with pytest.raises(NullTypeGradError, match="with respect to 'p'"):
            grad(T.sum(draw()), p)
            pytest.fail(f"{name}: no error")


def test_a_dropout_mask_leaves_the_weights_gradient_alone():
    from arignote import shared
    from arignote.gradient import grad
    srng = MRG_RandomStreams(seed=5)
    x = T.dmatrix("x")
    w = shared(np.arange(12.0).reshape(4, 3), name="w")
    h = T.dot(x, w)
    mask = srng.binomial(size=h.shape, p=0.5, dtype=h.dtype)
    f = function([x], [mask, grad((h * mask).sum(), w)])
    m, g = f(np.ones((2, 4)))
    np.testing.assert_allclose(g, np.ones((4, 2)) @ m)


def test_continuous_draws_have_their_pathwise_gradient():
    from arignote.gradient import grad
    srng = MRG_RandomStreams(seed=3)
    low, high, avg, std = T.dscalars("low", "high", "avg", "std")
    u = srng.uniform((50,), low=low, high=high)
    z = srng.normal((50,), avg=avg, std=std)
    f = function([low, high, avg, std], [u, z] + grad(T.sum(u) + T.sum(z), [low, high, avg, std]))
    u_v, z_v, g_low, g_high, g_avg, g_std = f(-1.0, 3.0, 2.0, 0.5)
    unit = (u_v + 1.0) / 4.0  # the raw uniforms of this call
    np.testing.assert_allclose([g_low, g_high], [np.sum(1 - unit), np.sum(unit)])
    np.testing.assert_allclose([g_avg, g_std], [50.0, np.sum((z_v - 2.0) / 0.5)])


def test_target_keyword_and_guess_warning():
    srng = MRG_RandomStreams(seed=2)
    for draw in [srng.uniform((3, 2), target="cpu"), srng.normal((3, 2), target="cpu"),
                 srng.truncated_normal((3, 2), target="cpu"), srng.binomial((3, 2), target="cpu"),
                 srng.multinomial(pvals=np.array([[0.2, 0.8]], "float32"), target="cpu"),
                 srng.choice(p=np.array([[0.2, 0.8]], "float32"), replace=False, target="cpu")]:
        assert isinstance(function([], draw)(), np.ndarray)
    with pytest.warns(UserWarning, match="cannot guess a stream count"):
        assert guess_n_streams(T.lscalar("n"), warn=True) == 60 * 256


def test_one_choice_per_row_is_a_broadcastable_column():
    srng = MRG_RandomStreams(seed=234)
    x = T.dmatrix("x")
    p = np.full((4, 3), 1 / 3)
    for size in [(10, 1), (x.shape[0], 1)]:
        for draw in (srng.uniform, srng.normal, srng.truncated_normal, srng.binomial):
            assert draw(size=size).broadcastable == (False, True)
    one = srng.choice(size=1, p=p, replace=False)
    assert one.broadcastable == (False, True) and function([], one)().shape == (4, 1)
    assert srng.choice(size=2, p=p, replace=False).broadcastable == (False, False)
    assert srng.multinomial(pvals=np.full((4, 1), 1.0)).broadcastable == (False, True)


def test_ff_jumps_and_matvecmodm_against_the_reference():
    rng = np.random.default_rng(3)
    row = np.concatenate([rng.integers(1, M1, 3), rng.integers(1, M2, 3)]).astype(np.int32)
    as_ints = [int(v) for v in row]
    np.testing.assert_array_equal(rng_mrg.ff_2p72(row), ref_advance(as_ints, 2 ** 72))
    np.testing.assert_array_equal(rng_mrg.ff_2p134(row), ref_advance(as_ints, 2 ** 134))
    assert rng_mrg.ff_2p72(row).dtype == np.int32
    A = rng.integers(0, 2 ** 31 - 1, (3, 3))
    s = rng.integers(0, 2 ** 31 - 1, 3).astype(np.int32)
    m = 2 ** 31 - 5
    want = [sum(int(A[i, j]) * int(s[j]) for j in range(3)) % m for i in range(3)]
    got = rng_mrg.matVecModM(A, s, np.int32(m))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(rng_mrg.multMatVect(np.concatenate([s, s]), A, m, A, m), want + want)
    with pytest.raises(TypeError, match="int64"):
        rng_mrg.matVecModM(A.astype(np.int32), s, m)
    with pytest.raises(ValueError, match="6 int32 values"):
        rng_mrg.ff_2p72(row[:5])


def test_dot_modulo_op_is_two_modular_products():
    rng = np.random.default_rng(4)
    A, A2 = T.lmatrix("A"), T.lmatrix("A2")
    s, s2 = T.ivector("s"), T.ivector("s2")
    m, m2 = T.iscalar("m"), T.iscalar("m2")
    out = rng_mrg.DotModulo()(A, s, m, A2, s2, m2)
    assert out.type == T.ivector().type
    f = function([A, s, m, A2, s2, m2], [out, out.shape])
    for rows in (3, 1, 4):
        a = rng.integers(0, 2 ** 31 - 1, (rows, 3))
        a2 = rng.integers(0, 2 ** 31 - 1, (2, 2))
        v = rng.integers(0, 2 ** 31 - 1, 3).astype(np.int32)
        v2 = rng.integers(0, 2 ** 31 - 1, 2).astype(np.int32)
        got, shape = f(a, v, 2 ** 31 - 1, a2, v2, 2 ** 31 - 21069)
        want = ([sum(int(a[i, j]) * int(v[j]) for j in range(3)) % (2 ** 31 - 1) for i in range(rows)]
                + [sum(int(a2[i, j]) * int(v2[j]) for j in range(2)) % (2 ** 31 - 21069)
                   for i in range(2)])
        np.testing.assert_array_equal(got, want)
        assert tuple(shape) == (rows + 2,)
    with pytest.raises(ValueError, match="A needs as many columns"):
        f(np.zeros((3, 2), np.int64), np.zeros(3, np.int32), 7, np.zeros((1, 1), np.int64),
          np.zeros(1, np.int32), 7)
    with pytest.raises(TypeError, match="s must be an integer tensor with 1 dimensions"):
        rng_mrg.DotModulo()(A, T.dvector("s"), m, A2, s2, m2)


def test_mrg_uniform_new_draws_a_stream_serially_and_in_parallel():
    """Theano's low-level recipe: a state row, ``mrg_uniform.new``, ``ff_2p72`` to the next
    substream; both orders give the SSJ reference numbers."""
    assert rng_mrg.mrg_uniform is rng_mrg.mrg_uniform_base
    row = np.full(6, 12345, np.int32)
    serial = []
    for _ in range(7):
        state = shared(row.reshape(1, 6).copy())
        new_state, sample = rng_mrg.mrg_uniform.new(state, ndim=None, dtype="float64", size=(1,))
        assert isinstance(sample.owner.op, rng_mrg.mrg_uniform) and sample.broadcastable == (True,)
        f = function([], sample, updates=[(state, new_state)])
        serial.extend(f()[0] for _ in range(5))
        row = rng_mrg.ff_2p72(row)
    np.testing.assert_array_equal(serial, SSJ_FIRST)
    rows = [np.full(6, 12345, np.int32)]
    for _ in range(6):
        rows.append(rng_mrg.ff_2p72(rows[-1]))
    state = shared(np.array(rows))
    new_state, sample = rng_mrg.mrg_uniform.new(state, ndim=1, dtype="float64", size=(7,))
    f = function([], sample, updates=[(state, new_state)])
    np.testing.assert_array_equal(np.array([f() for _ in range(5)]).T.ravel(), SSJ_FIRST)
    size = T.lvector("size")
    with pytest.raises(ValueError, match="pass ndim="):
        rng_mrg.mrg_uniform.new(state, None, "float64", size)
    draw = rng_mrg.mrg_uniform.new(state, 2, "float32", size)[1]
    assert draw.dtype == "float32" and draw.broadcastable == (False, False)


def test_mrg_next_value_is_one_step_of_one_stream():
    row = np.array([12345] * 6, np.int32)
    new = np.empty(6, np.int32)
    value = rng_mrg.mrg_next_value(row, new, 2.0 ** -31, 0x7FFFFFFF, 0)
    want_row, z = ref_step([12345] * 6)
    np.testing.assert_array_equal(new, want_row)
    assert value == z * 2.0 ** -31 == SSJ_FIRST[0]
    np.testing.assert_array_equal(row, [12345] * 6)  # the old row is left alone
    assert rng_mrg.mrg_next_value(row, new, 1, 0x7FFF, 1) == (z & 0x7FFF) + 1
