"""Gradients through scan: verify_grad on each feature, truncate_gradient against a
hand-truncated numpy BPTT, Rop, and an RNN trained with scan matching its unrolled twin."""
import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import function, shared
from arignote.gradient import Rop, grad, verify_grad
from arignote.scan_module import until


@pytest.fixture
def nrng():
    return np.random.RandomState(7)


def _rnn(x, h0, W, **kwargs):
    hs, _ = arignote.scan(lambda xt, h, W_: T.tanh(T.dot(h, W_) + xt), sequences=x, outputs_info=h0,
                          non_sequences=W, **kwargs)
    return hs


def test_grad_simple_rnn(nrng):
    verify_grad(_rnn, [nrng.normal(size=(5, 3)), nrng.normal(size=3), nrng.normal(size=(3, 3)) * 0.5])


def test_grad_of_step_outputs_computed_from_one_another(nrng):
    """A step returning [h, 3 h]: the gradient of h at each step adds both outputs'."""
    def step(xt, hp):
        h = T.tanh(hp + xt)
        return [h, 3 * h]

    def f(x):
        (hs, ys), _ = arignote.scan(step, sequences=x,
                                    outputs_info=[T.constant(0.0, dtype="float64"), None])
        return hs.sum() + ys.sum()
    verify_grad(f, [nrng.normal(size=4)])


def test_grad_sequence_and_output_taps(nrng):
    def f(s, x0):
        out, _ = arignote.scan(lambda a, b, c, p2, p1: a * b + c + p1 * p2 * 0.5,
                               sequences=dict(input=s, taps=[-2, 0, 1]),
                               outputs_info=dict(initial=x0, taps=[-2, -1]))
        return out

    verify_grad(f, [nrng.normal(size=8), nrng.normal(size=3)])


def test_grad_taps_with_a_gap(nrng):
    def f(x0, w):
        out, _ = arignote.scan(lambda p3, p1, w_: T.sin(p3) * w_ + p1 * 0.7,
                               outputs_info=dict(initial=x0, taps=[-3, -1]), non_sequences=w, n_steps=6)
        return out

    verify_grad(f, [nrng.normal(size=(3, 2)), nrng.normal(size=2)])


def test_grad_several_outputs_and_plain_outputs(nrng):
    def f(x, h0, c0):
        def step(xt, h, c):
            c_new = c * 0.5 + T.tanh(xt * h)
            return T.exp(-h * c_new), c_new, (h * xt).sum()

        (hs, cs, dots), _ = arignote.scan(step, sequences=x, outputs_info=[h0, c0, None])
        return hs.sum() + (cs ** 2).sum() + (dots * 3).sum()

    verify_grad(f, [nrng.normal(size=(4, 2)), nrng.normal(size=2), nrng.normal(size=2)])


def test_grad_go_backwards_and_map(nrng):
    verify_grad(lambda x, h0, W: _rnn(x, h0, W, go_backwards=True),
                [nrng.normal(size=(4, 2)), nrng.normal(size=2), nrng.normal(size=(2, 2))])
    verify_grad(lambda x, y: arignote.map(lambda a, b: T.exp(a) * b, sequences=[x, y])[0],
                [nrng.normal(size=(3, 2)), nrng.normal(size=(3, 2))])


def test_grad_reduce_foldl_foldr(nrng):
    for fold in (arignote.reduce, arignote.foldl, arignote.foldr):
        verify_grad(lambda x, a0, fold=fold: fold(lambda xt, acc: T.tanh(acc * xt + xt), sequences=x,
                                       outputs_info=a0)[0],
                    [nrng.normal(size=5), nrng.normal(size=())])


def test_grad_until_covers_the_steps_run(nrng):
    def f(x, a0):
        out, _ = arignote.scan(lambda xt, acc: (acc * xt + xt, until(xt > 5)), sequences=x,
                               outputs_info=a0)
        return out

    data = nrng.uniform(-1, 1, size=7)
    data[3] = 10.0  # stops after step 3; steps 4.. are not run
    verify_grad(f, [data, nrng.normal(size=())])
    x, a0 = T.dvector("x"), T.dscalar("a0")
    g = function([x, a0], grad(f(x, a0).sum(), x))(data, 0.3)
    assert np.all(g[4:] == 0)


def _numpy_truncated_bptt(xs, h0, W, proj, k):
    """Gradient of sum(hs * proj) for h_t = tanh(h_{t-1} W + x_t), back through the last k steps."""
    hs = [h0]
    for row in xs:
        hs.append(np.tanh(hs[-1] @ W + row))
    n = len(xs)
    dW, dx, carry = np.zeros_like(W), np.zeros_like(xs), np.zeros_like(h0)
    for t in range(n - 1, max(n - k, 0) - 1, -1):
        da = (proj[t] + carry) * (1 - hs[t + 1] ** 2)
        dW += np.outer(hs[t], da)
        dx[t] = da
        carry = da @ W.T
    dh0 = carry if n <= k else np.zeros_like(h0)
    return dx, dh0, dW


@pytest.mark.parametrize("k", [1, 3, 6, 20])
def test_truncate_gradient_matches_truncated_numpy_bptt(nrng, k):
    x, h0, W = T.dmatrix("x"), T.dvector("h0"), T.dmatrix("W")
    proj = nrng.normal(size=(6, 3))
    cost = (_rnn(x, h0, W, truncate_gradient=k) * proj).sum()
    f = function([x, h0, W], grad(cost, [x, h0, W]))
    xs, init, w = nrng.normal(size=(6, 3)), nrng.normal(size=3), nrng.normal(size=(3, 3)) * 0.5
    for got, expected in zip(f(xs, init, w), _numpy_truncated_bptt(xs, init, w, proj, k)):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_rop_matches_finite_differences(nrng):
    x, h0, W, V = T.dmatrix("x"), T.dvector("h0"), T.dmatrix("W"), T.dmatrix("V")
    hs = _rnn(x, h0, W)
    jvp = function([x, h0, W, V], Rop(hs, W, V))
    forward = function([x, h0, W], hs)
    xs, init, w, v = (nrng.normal(size=(4, 3)), nrng.normal(size=3), nrng.normal(size=(3, 3)) * 0.5,
                      nrng.normal(size=(3, 3)))
    eps = 1e-6
    numeric = (forward(xs, init, w + eps * v) - forward(xs, init, w - eps * v)) / (2 * eps)
    np.testing.assert_allclose(jvp(xs, init, w, v), numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("form", ["hoisted", "both_passed"])
def test_a_non_sequence_computed_from_another_gets_only_its_own_gradient(nrng, form):
    """A step reading W and W.T (hoisted from the step, or both passed in): the backward step
    differentiates each non-sequence apart, so the path through W.T is not counted twice."""
    def step(h, W, WT=None):
        return T.tanh(T.dot(W.T if WT is None else WT, T.dot(W, h)))

    def f(W, h0):
        extra = [W.T] if form == "both_passed" else []
        out, _ = arignote.scan(step, outputs_info=h0, non_sequences=[W] + extra, n_steps=3)
        return out[-1]
    verify_grad(f, [nrng.normal(size=(2, 2)) * 0.7, nrng.normal(size=2)])


@pytest.mark.parametrize("n_steps", [1, 3])
def test_hessian_vector_product_through_scan_matches_finite_differences(nrng, n_steps):
    """Rop of a gradient (Hessian-free training): the Rop of the backward loop, whose steps
    read W and the hoisted W.T. With one step, two equal zero-filled buffers of different
    broadcast patterns used to meet in the merge pass."""
    W, h0, V = T.dmatrix("W"), T.dvector("h0"), T.dmatrix("V")
    hs, _ = arignote.scan(lambda h, W_: T.tanh(T.dot(W_, h)), outputs_info=h0, non_sequences=W,
                          n_steps=n_steps)
    g = grad((hs[-1] ** 2).sum(), W)
    hvp = function([W, h0, V], Rop(g, W, V))
    gradient = function([W, h0], g)
    w, init, v = nrng.normal(size=(2, 2)), nrng.normal(size=2), nrng.normal(size=(2, 2))
    eps = 1e-6
    numeric = (gradient(w + eps * v, init) - gradient(w - eps * v, init)) / (2 * eps)
    np.testing.assert_allclose(hvp(w, init, v), numeric, rtol=1e-5, atol=1e-7)


def test_gradients_with_non_sequences_get_test_values():
    """compute_test_value='raise': the backward step's stand-ins for the non-sequences take
    their test values (a shared variable's value, an outer expression's test value)."""
    with arignote.config.change_flags(compute_test_value="raise"):
        x, c = T.dmatrix("x"), T.dscalar("c")
        x.tag.test_value, c.tag.test_value = np.ones((2, 3)), np.float64(2)
        y = shared(np.arange(9.0).reshape(3, 3), name="y")
        z, _ = arignote.scan(lambda u, v, k: T.dot(v, u) * k, sequences=[x], non_sequences=[y, c * 2])
        g = grad(z.sum(), x)
    np.testing.assert_allclose(g.tag.test_value, np.tile(np.arange(9.0).reshape(3, 3).sum(axis=0) * 4, (2, 1)))


def test_the_final_value_of_a_shared_variable_updated_in_the_loop_is_differentiated():
    # Theano 1.0.5 gives 1.0 (this was 0.0): d(s + 10)/ds.
    sv = shared(np.float32(1), name="sv")
    _, up = arignote.scan(lambda: ([], {sv: sv + 1}), n_steps=10)
    g = function([], grad(up[sv], sv))()
    assert g == np.float32(1.0) and g.dtype == np.float32
    # The same loop written with outputs_info agrees.
    out, _ = arignote.scan(lambda s: s + 1, outputs_info=sv, n_steps=10)
    assert function([], grad(out[-1], sv))() == np.float32(1.0)
    w = shared(np.float64(1.5), name="w")
    _, up = arignote.scan(lambda: ([], {w: w * w}), n_steps=3)  # w ** 8
    value, dw = function([], [up[w], grad(up[w], w)])()
    assert value == 1.5 ** 8 and np.isclose(dw, 8 * 1.5 ** 7)


def test_outputs_reading_a_shared_variable_updated_in_the_loop_are_differentiated(nrng):
    scale = shared(np.float64(1.3), name="scale")
    x = T.dvector("x")
    out, up = arignote.scan(lambda xt: (xt * scale, {scale: scale * 2}), sequences=x)
    cost = (out ** 2).sum() + up[scale]
    f = function([x], [cost] + grad(cost, [x, scale]))
    xv = nrng.normal(size=5)

    def reference(xv, s0):
        total = 0.0
        for xt in xv:
            total += (xt * s0) ** 2
            s0 *= 2
        return total + s0

    c, gx, gs = f(xv)
    assert np.isclose(c, reference(xv, 1.3))
    powers = 1.3 * 2.0 ** np.arange(5)
    np.testing.assert_allclose(gx, 2 * xv * powers ** 2)
    eps = 1e-6
    assert np.isclose(gs, (reference(xv, 1.3 + eps) - reference(xv, 1.3 - eps)) / (2 * eps), rtol=1e-6)
    assert scale.get_value() == 1.3  # no update was compiled in


# ---------------------------------------------------------------- acceptance
def _rnn_training(unrolled: bool, steps: int = 15):
    rng = np.random.RandomState(3)
    n_in, n_hid, length = 2, 5, 8
    Wx = shared(rng.normal(size=(n_in, n_hid)) * 0.5, name="Wx")
    Wh = shared(rng.normal(size=(n_hid, n_hid)) * 0.3, name="Wh")
    Wo = shared(rng.normal(size=n_hid) * 0.5, name="Wo")
    x, y = T.dmatrix("x"), T.dvector("y")
    h0 = T.zeros((n_hid,), dtype="float64")

    def step(xt, h):
        return T.tanh(T.dot(xt, Wx) + T.dot(h, Wh))

    if unrolled:
        h, rows = h0, []
        for t in range(length):
            h = step(x[t], h)
            rows.append(h)
        hs = T.stack(rows)
    else:
        hs, _ = arignote.scan(step, sequences=x, outputs_info=h0)
    loss = ((T.dot(hs, Wo) - y) ** 2).mean()
    params = [Wx, Wh, Wo]
    grads = grad(loss, params)
    train = function([x, y], loss, updates=[(p, p - 0.2 * g) for p, g in zip(params, grads)])
    data_x = rng.normal(size=(length, n_in))
    data_y = np.sin(np.cumsum(data_x[:, 0]))
    losses = [train(data_x, data_y) for _ in range(steps)]
    return np.array(losses), [p.get_value() for p in params]


def test_rnn_trained_with_scan_learns_and_matches_the_unrolled_graph():
    losses, params = _rnn_training(unrolled=False)
    unrolled_losses, unrolled_params = _rnn_training(unrolled=True)
    assert losses[-1] < losses[0] * 0.8
    np.testing.assert_allclose(losses, unrolled_losses, rtol=0, atol=1e-7)
    for got, expected in zip(params, unrolled_params):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-7)


@pytest.mark.parametrize("streams", ["mrg", "numpy"])
def test_gradient_through_random_draws_holds_them_constant(nrng, streams):
    # The draws are constants for the gradient (Theano's rule). Without updates the
    # generator states stay put, so each call draws the same numbers, and finite
    # differences of the cost see exactly what the gradient must.
    from arignote.sandbox.rng_mrg import MRG_RandomStreams
    from arignote.tensor.shared_randomstreams import RandomStreams
    srng = MRG_RandomStreams(5) if streams == "mrg" else RandomStreams(5)
    x, h0, W = T.dmatrix("x"), T.dvector("h0"), T.dmatrix("W")

    def step(xt, h, W_):
        noise = srng.normal(size=(3,), dtype="float64") if streams == "mrg" else srng.normal((3,))
        keep = srng.binomial(size=(3,), p=0.7, dtype="float64") if streams == "mrg" else T.cast(
            srng.binomial((3,), p=0.7), "float64")
        return T.tanh(T.dot(xt, W_) + h) * keep + noise * 0.1

    hs, _ = arignote.scan(step, sequences=x, outputs_info=h0, non_sequences=W)
    cost = (hs ** 2).sum()
    f = function([x, h0, W], cost, no_default_updates=True)
    g = function([x, h0, W], grad(cost, [W, h0]), no_default_updates=True)
    xs, init, w = nrng.normal(size=(4, 3)), nrng.normal(size=3), nrng.normal(size=(3, 3)) * 0.5
    assert f(xs, init, w) == f(xs, init, w)  # the same draws each call
    gw, gh = g(xs, init, w)
    eps = 1e-6
    for analytic, point, make in ((gw, w, lambda p: f(xs, init, p)), (gh, init, lambda p: f(xs, p, w))):
        numeric = np.zeros_like(point)
        for index in np.ndindex(point.shape):
            up, down = point.copy(), point.copy()
            up[index] += eps
            down[index] -= eps
            numeric[index] = (make(up) - make(down)) / (2 * eps)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)
    # With the updates applied the loop draws anew each call, and the gradient still compiles.
    hs2, updates = arignote.scan(step, sequences=x, outputs_info=h0, non_sequences=W)
    train = function([x, h0, W], grad((hs2 ** 2).sum(), W), updates=updates)
    assert not np.array_equal(train(xs, init, w), train(xs, init, w))


def test_scan_accepts_an_empty_outputs_info_and_infers_shapes():
    x = T.dmatrix("x")
    doubled, _ = arignote.scan(lambda row: row * 2, sequences=x, outputs_info=[])
    np.testing.assert_array_equal(function([x], doubled)(np.ones((2, 3))), np.full((2, 3), 2.0))
    h0, W = T.dvector("h0"), T.dmatrix("W")
    (hs, sums), _ = arignote.scan(lambda xt, h, W_: [T.tanh(T.dot(xt, W_) + h), (xt * 2).sum()],
                                  sequences=x, outputs_info=[h0, None], non_sequences=W)
    shapes = function([x, h0, W], [hs.shape, sums.shape])
    assert not any(type(n.op).__name__ == "Scan" for n in shapes.maker.fgraph.toposort())  # not run
    got = shapes(np.ones((5, 3)), np.ones(3), np.ones((3, 3)))
    assert [list(s) for s in got] == [[5, 3], [5]]
    until_out, _ = arignote.scan(lambda v: (v * 2, arignote.scan_module.until(v > 2)), sequences=x[:, 0])
    f = function([x], until_out.shape)
    assert list(f(np.arange(12.0).reshape(6, 2))) == [3]  # a do-while's length is read from its output


def test_an_input_no_step_reads_is_disconnected():
    """Theano's rule: an initial value, sequence or non-sequence whose values never reach an
    output the cost uses raises DisconnectedInputError (a ValueError)."""
    from arignote.gradient import DisconnectedInputError
    x0, y0, z0 = T.dvector("x0"), T.dvector("y0"), T.dvector("z0")
    [x, y, z], _ = arignote.scan(lambda a, b, c: (a ** 2, b, a + 1), outputs_info=[x0, y0, z0],
                                 n_steps=4)
    cost = (x + y + z).sum()
    gx0, gy0 = grad(cost, [x0, y0])
    with pytest.raises(DisconnectedInputError, match="'z0'"):
        grad(cost, z0)
    with pytest.raises(DisconnectedInputError, match="'y0'"):
        grad(x.sum(), y0)
    assert isinstance(grad(x.sum(), y0, disconnected_inputs="ignore"), T.TensorVariable)
    f = function([x0, y0, z0], [gx0, gy0], on_unused_input="ignore")
    a = np.array([0.5, 0.9])
    # x_t = x0 ** (2 ** t), z_t = x_{t-1} + 1, y_t = y0: d/dx0 of sum over the 4 steps.
    powers = [2 ** t for t in range(1, 5)]
    want_x = sum(p * a ** (p - 1) for p in powers) + sum(p * a ** (p - 1) for p in [1] + powers[:-1])
    np.testing.assert_allclose(f(a, a, a)[0], want_x)
    np.testing.assert_allclose(f(a, a, a)[1], 4 * np.ones(2))
    # A sequence and a non-sequence only a disregarded output reads.
    s, w = T.dmatrix("s"), T.dvector("w")
    [u, v], _ = arignote.scan(lambda st, ut, w_: (ut * 2, st + w_), sequences=s, non_sequences=w,
                              outputs_info=[x0, None])
    with pytest.raises(DisconnectedInputError, match="'s'"):
        grad(u.sum(), s)
    with pytest.raises(DisconnectedInputError, match="'w'"):
        grad(u.sum(), w)
    verify_grad(lambda s_, w_: arignote.scan(lambda st, ut, w__: (ut * 2, st + w__), sequences=s_,
                                             non_sequences=w_, outputs_info=[T.ones(2), None])[0][1].sum(),
                [np.ones((3, 2)), np.ones(2)])


def test_a_recurrence_through_another_state_stays_connected(nrng):
    """z never reads itself but x reads z and z reads x: both initial values reach both outputs."""
    def step(a, c):
        return T.tanh(c), T.sin(a)
    verify_grad(lambda a0, c0: arignote.scan(step, outputs_info=[a0, c0], n_steps=3)[0][0].sum(),
                [nrng.rand(2), nrng.rand(2)])
    verify_grad(lambda a0, c0: arignote.scan(step, outputs_info=[a0, c0], n_steps=3)[0][1].sum(),
                [nrng.rand(2), nrng.rand(2)])


def test_grad_through_two_chained_scans(nrng):
    """Theano's test_grad_two_scans: a scan over the outputs of another, softmax then
    crossentropy, differentiated with respect to the first one's weights."""
    targets = nrng.randint(0, 3, size=(4, 5)).astype("int32")

    def loss(x, W):
        y, _ = arignote.scan(lambda x_t: T.nnet.softmax(T.dot(x_t, W)), sequences=x)
        per_step, _ = arignote.scan(
            lambda y_t, t_t: T.mean(T.nnet.categorical_crossentropy(y_t, t_t)),
            sequences=[y, T.constant(targets)])
        return T.mean(per_step)

    x, W = nrng.normal(size=(4, 5, 2)), nrng.normal(size=(2, 3))
    verify_grad(loss, [x, W])
    xs, Ws = T.dtensor3("x"), T.dmatrix("W")
    g = function([xs, Ws], grad(loss(xs, Ws), Ws))(x, W)
    probs = np.exp(x @ W)
    probs /= probs.sum(-1, keepdims=True)
    onehot = np.eye(3)[targets]
    expected = np.einsum("tbi,tbj->ij", x, probs - onehot) / targets.size
    np.testing.assert_allclose(g, expected, rtol=1e-8)


def test_a_gradient_through_redrawn_random_states_is_refused_as_theano_did():
    """Theano's test_crash_nonseq_grad: nested scans drawing per step; the gradient would need
    the generators' per-step states. The error is Theano's NullTypeGradError (and says why)."""
    from arignote.gradient import NullTypeGradError
    from arignote.tensor.shared_randomstreams import RandomStreams
    streams = RandomStreams(3)
    inp = T.dmatrix("inp")
    norm_inp = inp / T.sum(inp, axis=0)

    def unit_dropout(out_idx):
        pooled, _ = arignote.scan(lambda i: inp + streams.multinomial(n=1, pvals=norm_inp.T),
                                  sequences=T.arange(inp.shape[0]))
        return pooled + streams.binomial(size=pooled.shape)

    out, _ = arignote.scan(unit_dropout, sequences=[T.arange(inp.shape[0])])
    with pytest.raises(NullTypeGradError, match="per-step values of"):
        grad(out.sum(), inp)
    with pytest.raises(NotImplementedError):
        grad(out.sum(), inp)
