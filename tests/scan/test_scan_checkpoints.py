"""scan_checkpoints against numpy loops: the states every save_every_N steps, the last one
and its gradient (finite differences and plain scan's), padding, nit-sot outputs, errors."""
import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import function
from arignote.gradient import grad, verify_grad


def _np_rnn(x, h0, W):
    hs, h = [], h0
    for xt in x:
        h = np.tanh(h @ W + xt)
        hs.append(h)
    return np.array(hs)


def _rnn_step(xt, h, W):
    return T.tanh(T.dot(h, W) + xt)


@pytest.mark.parametrize("n, every", [(10, 3), (9, 3), (4, 10), (7, 1)])
def test_states_at_the_chunk_ends_match_numpy(n, every):
    rng = np.random.default_rng(n)
    x, h0, W = T.dmatrix("x"), T.dvector("h0"), T.dmatrix("W")
    hs, updates = arignote.scan_checkpoints(_rnn_step, sequences=x, outputs_info=h0, non_sequences=W,
                                            save_every_N=every)
    assert updates == {}
    xv, h0v, Wv = rng.normal(size=(n, 3)), rng.normal(size=3), rng.normal(size=(3, 3)) * 0.5
    want = _np_rnn(xv, h0v, Wv)
    ends = [min(k + every, n) - 1 for k in range(0, n, every)]
    np.testing.assert_allclose(function([x, h0, W], hs)(xv, h0v, Wv), want[ends], rtol=1e-12)


def test_gradient_of_the_last_state_is_plain_scans_and_the_finite_differences():
    rng = np.random.default_rng(1)
    x, h0, W = T.dmatrix("x"), T.dvector("h0"), T.dmatrix("W")
    plain, _ = arignote.scan(_rnn_step, sequences=x, outputs_info=h0, non_sequences=W)
    chunked, _ = arignote.scan_checkpoints(_rnn_step, sequences=x, outputs_info=h0, non_sequences=W,
                                           save_every_N=4)
    wrt = [x, h0, W]
    f = function(wrt, grad(plain[-1].sum(), wrt) + grad(chunked[-1].sum(), wrt))
    values = [rng.normal(size=(10, 3)), rng.normal(size=3), rng.normal(size=(3, 3)) * 0.5]
    got = f(*values)
    for want, have in zip(got[:3], got[3:]):
        np.testing.assert_allclose(have, want, rtol=1e-12, atol=1e-14)

    def last(xv, h0v, Wv):
        out, _ = arignote.scan_checkpoints(_rnn_step, sequences=xv, outputs_info=h0v, non_sequences=Wv,
                                           save_every_N=3)
        return out[-1]
    verify_grad(last, values, rng=np.random.RandomState(2))


def test_power_by_n_steps_alone_and_a_not_fed_back_output():
    """Theano's own example (A**k with n_steps and no sequence), plus a None output."""
    A, k = T.dvector("A"), T.iscalar("k")
    (power, doubled), _ = arignote.scan_checkpoints(lambda p, A_: [p * A_, 2 * p * A_],
                                                    outputs_info=[T.ones_like(A), None],
                                                    non_sequences=A, n_steps=k, save_every_N=100)
    f = function([A, k], [power[-1], doubled[-1], grad(power[-1].sum(), A)])
    a = np.linspace(0.5, 1.1, 5)
    got_power, got_doubled, got_grad = f(a, 101)
    np.testing.assert_allclose(got_power, a ** 101, rtol=1e-12)
    np.testing.assert_allclose(got_doubled, 2 * a ** 101, rtol=1e-12)
    np.testing.assert_allclose(got_grad, 101 * a ** 100, rtol=1e-12)


def test_without_padding_the_length_must_be_whole_chunks():
    x = T.dvector("x")
    sums, _ = arignote.scan_checkpoints(lambda xt, acc: acc + xt, sequences=x,
                                        outputs_info=np.float64(0), save_every_N=2, padding=False)
    f = function([x], sums)
    np.testing.assert_allclose(f(np.arange(6.0)), np.cumsum(np.arange(6.0))[1::2])
    with pytest.raises(ValueError):
        f(np.arange(5.0))


def test_taps_and_bad_arguments_are_refused():
    A = T.dmatrix("A")
    with pytest.raises(RuntimeError, match="does not take taps"):
        arignote.scan_checkpoints(lambda: None, [], {"initial": A, "taps": [-2]})
    with pytest.raises(RuntimeError, match="does not take taps"):
        arignote.scan_checkpoints(lambda a, b, h: h, dict(input=A, taps=[-1, 0]), T.dvector())
    with pytest.raises(ValueError, match="save_every_N must be a positive int"):
        arignote.scan_checkpoints(lambda a, h: h, A, T.dvector(), save_every_N=0)
    with pytest.raises(ValueError, match="needs sequences or n_steps"):
        arignote.scan_checkpoints(lambda h: h, outputs_info=T.dvector())
