"""scan's forward loop against numpy loops: taps, several outputs, go_backwards, until,
n_steps alone, shared variables and updates from inside the step, and the errors."""
import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import function, shared
from arignote.graph.traversal import io_toposort
from arignote.scan_module import Scan, until


def test_cumulative_sum_matches_numpy(rng):
    x = T.dvector("x")
    out, updates = arignote.scan(lambda xt, acc: acc + xt, sequences=x, outputs_info=np.float64(0))
    assert updates == {}
    data = rng.normal(size=7)
    np.testing.assert_allclose(function([x], out)(data), np.cumsum(data))


def test_sequence_and_output_taps():
    s, x0 = T.dvector("s"), T.dvector("x0")

    def step(a, b, c, prev2, prev1):
        return a + b + c + prev1 * prev2

    out, _ = arignote.scan(step, sequences=dict(input=s, taps=[-2, 0, 1]),
                           outputs_info=dict(initial=x0, taps=[-2, -1]))
    seq, init = np.arange(8.0) / 3, np.array([0.5, -1.0])
    buf = list(init)
    for t in range(2, 7):
        buf.append(seq[t - 2] + seq[t] + seq[t + 1] + buf[-1] * buf[-2])
    np.testing.assert_allclose(function([s, x0], out)(seq, init), buf[2:])


def test_positive_taps_only_shift_the_sequence():
    s = T.dvector("s")
    out, _ = arignote.scan(lambda a, b: a * b, sequences=dict(input=s, taps=[1, 2]))
    seq = np.arange(1.0, 7.0)
    np.testing.assert_allclose(function([s], out)(seq), seq[1:-1] * seq[2:])


def test_several_outputs_fed_back_or_not(rng):
    x, h0 = T.dmatrix("x"), T.dvector("h0")
    W = shared(rng.normal(size=(3, 3)) * 0.3, name="W")

    def step(xt, h):
        h_new = T.tanh(T.dot(h, W) + xt)
        return h_new, h_new.sum()

    (hs, sums), _ = arignote.scan(step, sequences=x, outputs_info=[h0, None])
    f = function([x, h0], [hs, sums])
    xs, init = rng.normal(size=(5, 3)), rng.normal(size=3)
    h, expected = init, []
    for row in xs:
        h = np.tanh(h @ W.get_value() + row)
        expected.append(h)
    got_h, got_s = f(xs, init)
    np.testing.assert_allclose(got_h, expected)
    np.testing.assert_allclose(got_s, np.sum(expected, axis=1))


def test_non_sequences_and_outer_variables(rng):
    x, a, b = T.dvector("x"), T.dscalar("a"), T.dscalar("b")
    # a is passed, b is only closed over: both become loop inputs.
    out, _ = arignote.scan(lambda xt, a_: xt * a_ + b, sequences=x, non_sequences=a)
    data = rng.normal(size=4)
    np.testing.assert_allclose(function([x, a, b], out)(data, 2.0, 0.5), data * 2 + 0.5)


def test_loop_invariant_work_is_hoisted_out_of_the_loop(rng):
    x, M = T.dmatrix("x"), T.dmatrix("M")
    out, _ = arignote.scan(lambda xt: T.dot(xt, T.exp(M)), sequences=x)
    op = out.owner.op
    assert op.n_nonseq == 1 and out.owner.inputs[-1].owner is not None  # exp(M), computed outside
    inner_nodes = io_toposort(op.inner_inputs, op.inner_outputs)
    assert [type(n.op).__name__ for n in inner_nodes] == [type(T.dot(x, M).owner.op).__name__]
    xs, m = rng.normal(size=(3, 2)), rng.normal(size=(2, 2))
    np.testing.assert_allclose(function([x, M], out)(xs, m), xs @ np.exp(m))


def test_go_backwards(rng):
    x = T.dvector("x")
    out, _ = arignote.scan(lambda xt, acc: acc + xt, sequences=x, outputs_info=np.float64(0),
                           go_backwards=True)
    data = rng.normal(size=6)
    np.testing.assert_allclose(function([x], out)(data), np.cumsum(data[::-1]))


def test_n_steps_alone_and_truncating_sequences():
    out, _ = arignote.scan(lambda p: p * 2, outputs_info=np.float64(1), n_steps=5)
    np.testing.assert_allclose(function([], out)(), 2.0 ** np.arange(1, 6))
    n = T.lscalar("n")
    x = T.dvector("x")
    out, _ = arignote.scan(lambda xt: xt + 1, sequences=x, n_steps=n)
    np.testing.assert_allclose(function([x, n], out)(np.arange(6.0), 3), [1, 2, 3])
    with pytest.raises(ValueError, match="sequence 0 .* has 6 entries, but 9 steps"):
        function([x, n], out)(np.arange(6.0), 9)


def test_zero_steps():
    out, _ = arignote.scan(lambda p: p + 1, outputs_info=np.zeros(2), n_steps=0)
    assert function([], out)().shape == (0, 2)


def test_until_stops_after_the_condition_holds():
    def step(p):
        nxt = p * 2
        return nxt, until(nxt > 40)

    out, _ = arignote.scan(step, outputs_info=np.float64(1), n_steps=100)
    np.testing.assert_allclose(function([], out)(), [2, 4, 8, 16, 32, 64])
    x = T.dvector("x")
    out, _ = arignote.scan(lambda xt: (xt * 10, until(xt < 0)), sequences=x)
    np.testing.assert_allclose(function([x], out)(np.array([1.0, 2.0, -1.0, 3.0])), [10, 20, -10])


def test_shared_variable_updates_from_the_step():
    counter = shared(np.float64(0), name="counter")

    def step(xt):
        return xt + counter, {counter: counter + 1}

    x = T.dvector("x")
    out, updates = arignote.scan(step, sequences=x)
    assert list(updates) == [counter]
    f = function([x], out, updates=updates)
    np.testing.assert_allclose(f(np.zeros(3)), [0, 1, 2])
    assert counter.get_value() == 3
    np.testing.assert_allclose(f(np.zeros(2)), [3, 4])
    assert counter.get_value() == 5
    # Without the updates the counter is read but never changed.
    g = function([x], out)
    np.testing.assert_allclose(g(np.zeros(2)), [5, 6])
    assert counter.get_value() == 5


def test_updates_are_ordered_updates_that_join_with_plus():
    """Theano's scan returned OrderedUpdates: loops' and an optimizer's updates join with +."""
    a, b = shared(np.float64(0), name="a"), shared(np.float64(0), name="b")
    x = T.dvector("x")
    _, ua = arignote.scan(lambda xt: {a: a + xt}, sequences=x)
    _, ub = arignote.scan(lambda xt: {b: b + 2 * xt}, sequences=x)
    _, none = arignote.scan(lambda xt: xt, sequences=x)
    assert isinstance(ua, arignote.OrderedUpdates) and isinstance(none, arignote.OrderedUpdates)
    function([x], [], updates=ua + ub + none)(np.arange(3.0))
    assert (a.get_value(), b.get_value()) == (3.0, 6.0)


def test_default_updates_inside_the_step_advance_each_step():
    state = shared(np.float64(1), name="state")
    state.default_update = state * 3
    out, updates = arignote.scan(lambda: state + 0, n_steps=4)
    assert state in updates
    f = function([], out, updates=updates)
    np.testing.assert_allclose(f(), [1, 3, 9, 27])
    np.testing.assert_allclose(f(), [81, 243, 729, 2187])


def test_inner_function_compiled_once():
    x = T.dvector("x")
    out, _ = arignote.scan(lambda xt, acc: acc + xt, sequences=x, outputs_info=np.float64(0))
    f = function([x], out)
    f(np.arange(5.0))
    (node,) = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]
    compiled = node.op._fn
    assert compiled is not None
    f(np.arange(9.0))
    assert node.op._fn is compiled


def test_return_list_and_names():
    out, _ = arignote.scan(lambda p: p + 1, outputs_info=np.float64(0), n_steps=2, return_list=True,
                           name="count")
    assert isinstance(out, list) and out[0].name == "count[0]"
    assert "Scan{count}" in str(out[0].owner.inputs[0].owner.op)


def test_map_reduce_foldl_foldr(rng):
    x, y = T.dvector("x"), T.dvector("y")
    squares, _ = arignote.map(lambda a, b: a * b, sequences=[x, y])
    total, _ = arignote.reduce(lambda a, acc: acc + a, sequences=x, outputs_info=np.float64(0))
    left, _ = arignote.foldl(lambda a, acc: acc * 2 + a, sequences=x, outputs_info=np.float64(0))
    right, _ = arignote.foldr(lambda a, acc: acc * 2 + a, sequences=x, outputs_info=np.float64(0))
    f = function([x, y], [squares, total, left, right])
    a, b = rng.normal(size=5), rng.normal(size=5)
    got = f(a, b)
    fold = lambda seq: __import__("functools").reduce(lambda acc, v: acc * 2 + v, seq, 0.0)
    np.testing.assert_allclose(got[0], a * b)
    np.testing.assert_allclose(got[1], a.sum())
    np.testing.assert_allclose(got[2], fold(a))
    np.testing.assert_allclose(got[3], fold(a[::-1]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_dtypes_are_kept(dtype):
    x = T.vector("x", dtype=dtype)
    out, _ = arignote.scan(lambda xt, acc: acc + xt, sequences=x,
                           outputs_info=np.zeros((), dtype=dtype))
    data = np.arange(5).astype(dtype)
    got = function([x], out)(data)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.cumsum(data).astype(dtype))


def test_errors_name_the_problem():
    x = T.dvector("x")
    with pytest.raises(TypeError, match="output 0 of the step function is float32 scalar.*float64"):
        arignote.scan(lambda xt, acc: T.cast(acc + xt, "float32"), sequences=x,
                      outputs_info=np.float64(0))
    with pytest.raises(ValueError, match="returned 2 output.*outputs_info has 1"):
        arignote.scan(lambda xt: [xt, xt], sequences=x, outputs_info=[None])
    with pytest.raises(ValueError, match="pass n_steps"):
        arignote.scan(lambda p: p, outputs_info=np.float64(0))
    with pytest.raises(ValueError, match="must be negative"):
        arignote.scan(lambda p: p, outputs_info=dict(initial=x, taps=[0]), n_steps=2)
    with pytest.raises(ValueError, match=r"outputs_info\[0\] has taps \[-1\] but no initial value"):
        arignote.scan(lambda xt: xt, sequences=x, outputs_info=[dict(taps=[-1])])
    with pytest.raises(ValueError, match=r"outputs_info\[0\] has return_steps.*out\[-1\] for the last"):
        arignote.scan(lambda p: p * 2, outputs_info=dict(initial=x, return_steps=1), n_steps=3)
    b = shared(2.0, name="b")
    with pytest.raises(ValueError, match="strict=True.*shared variable 'b'"):
        arignote.scan(lambda xt: xt + b, sequences=x, strict=True)
    out, _ = arignote.scan(lambda p: T.concatenate([p, p]), outputs_info=x, n_steps=2)
    with pytest.raises(ValueError, match="rows of its initial value 'x' have shape.*must keep the shape"):
        function([x], out)(np.ones(2))


def test_an_error_inside_the_step_names_the_outer_variables():
    x, b = T.dmatrix("x"), T.dvector("b")
    out, _ = arignote.scan(lambda xt, b_: xt + b_, sequences=x, non_sequences=b)
    with pytest.raises(ValueError) as info:
        function([x, b], out)(np.ones((4, 3)), np.ones(2))
    assert "'x[t+0]' has shape (3,) and 'b' has shape (2,)" in str(info.value)
    notes = "\n".join(info.value.__notes__)
    assert "in step 0 of Scan" in notes and "'x[t+0]' is a row of 'x'" in notes
    # Unnamed outer values: the step's variables point where the user made them.
    m = T.dmatrix()
    bias = b * 2  # hoisted into the loop as a non-sequence
    out, _ = arignote.scan(lambda mt: mt + bias, sequences=m)
    with pytest.raises(ValueError) as info:
        function([m, b], out)(np.ones((4, 3)), np.ones(2))
    assert f"(made at {bias.tag.trace}) has shape (2,)" in str(info.value)
    assert f"(made at {m.tag.trace}) has shape (3,)" in str(info.value)


def test_random_draws_inside_the_step_are_new_each_step_and_each_call():
    streams = pytest.importorskip("arignote.tensor.shared_randomstreams")
    srng = streams.RandomStreams(3)
    out, updates = arignote.scan(lambda: srng.uniform((2,)), n_steps=3)
    f = function([], out, updates=updates)
    first, second = f(), f()
    # Theano's recipe: the stream draws from RandomState(RandomState(seed).randint(2**30)).
    reference = np.random.RandomState(np.random.RandomState(3).randint(2 ** 30))
    expected = [reference.uniform(size=(2,)) for _ in range(6)]
    np.testing.assert_array_equal(np.concatenate([first, second]), expected)


def test_a_tap_may_be_one_int_and_repeated_taps_are_refused():
    """Theano took ``taps=-2`` as ``taps=[-2]`` (scan's docstring shows ``taps = 3``), and
    refused a tap given twice."""
    u = T.dvector("u")
    out, _ = arignote.scan(lambda a: a * 2, sequences=dict(input=u, taps=-2))
    np.testing.assert_array_equal(function([u], out)(np.arange(4.0)), [0.0, 2.0])
    x0 = T.dvector("x0")
    # (Theano took one int for a sequence only; an output's is read the same way here)
    back2, _ = arignote.scan(lambda a: a + 1, outputs_info=dict(initial=x0, taps=np.int64(-2)), n_steps=3)
    np.testing.assert_array_equal(function([x0], back2)(np.array([1.0, 5.0])), [2.0, 6.0, 3.0])
    with pytest.raises(ValueError, match=r"taps \[-1, -1\]; taps must be different"):
        arignote.scan(lambda a, b: a + b, outputs_info=dict(initial=x0, taps=[-1, -1]), n_steps=2)
    with pytest.raises(ValueError, match=r"sequence 0 has taps \[0, 0\]"):
        arignote.scan(lambda a, b: a + b, sequences=dict(input=u, taps=[0, 0]))


def test_strict_raises_missing_input_error():
    """Theano's strict=True raised gof.fg.MissingInputError for a variable not passed in."""
    from arignote.graph.fg import MissingInputError
    w = shared(np.array([[-1.0, 2.0], [3.0, -4.0]]), name="w")
    x0 = T.dvector("x0")
    with pytest.raises(MissingInputError, match="strict=True.*'w'.*non_sequences"):
        arignote.scan(lambda x: T.dot(x, w), outputs_info=[x0], n_steps=3, strict=True)
    out, _ = arignote.scan(lambda x, w_: T.dot(x, w_), outputs_info=[x0], non_sequences=[w],
                           n_steps=3, strict=True)
    expected, x = [], np.array([1.0, 2.0])
    for _ in range(3):
        x = x @ w.get_value()
        expected.append(x)
    np.testing.assert_allclose(function([x0], out)(np.array([1.0, 2.0])), expected)
    # strict is about shared variables only (Theano's rule): another free variable is an input.
    k = T.dscalar("k")
    out, _ = arignote.scan(lambda x, w_: T.dot(x, w_) * k, outputs_info=[x0], non_sequences=[w],
                           n_steps=1, strict=True)
    np.testing.assert_allclose(function([x0, k], out)(np.array([1.0, 2.0]), 2.0), [expected[0] * 2])


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_a_literal_initial_value_takes_the_steps_dtype(dtype):
    """outputs_info=0 (an int8 literal) with a step of a wider dtype: the state has the step's
    dtype (Theano's one-step scans gave it), here over several steps and with taps."""
    seq = T.vector("seq", dtype=dtype)
    rs, _ = arignote.scan(lambda s, prev: prev + s, sequences=dict(input=seq, taps=[2]),
                          outputs_info=0, n_steps=1)
    assert rs.dtype == dtype
    values = np.arange(20).astype(dtype)
    assert function([seq], rs)(values).tolist() == [2]
    total, _ = arignote.scan(lambda s, prev: prev + s, sequences=seq, outputs_info=0)
    np.testing.assert_array_equal(function([seq], total)(values), np.cumsum(values).astype(dtype))
    two, _ = arignote.scan(lambda s, a, b: a + b + s, sequences=seq,
                           outputs_info=dict(initial=np.array([1, 1], "int8"), taps=[-2, -1]))
    expected, window = [], [1, 1]
    for v in values:
        window = [window[1], window[0] + window[1] + v]
        expected.append(window[1])
    np.testing.assert_array_equal(function([seq], two)(values), np.asarray(expected, dtype))
    # A symbolic initial value keeps its dtype: a mismatch is still an error.
    with pytest.raises(TypeError, match="output 0 of the step function"):
        arignote.scan(lambda s, prev: prev + s, sequences=seq, outputs_info=T.bscalar("b"))


def test_profile_and_allow_gc_reach_the_step_function():
    """Theano's scan(profile=, allow_gc=): the step's inner function is profiled (named
    after the loop for True) and linked with the loop's allow_gc (None: the flag)."""
    x = T.dmatrix("x")
    W = np.linspace(-1, 1, 9).reshape(3, 3)
    data = np.linspace(0, 1, 18).reshape(6, 3)
    want, acc = [], np.zeros(3)
    for row in data:
        acc = np.tanh(np.exp(acc) @ W + row)
        want.append(acc)
    fns = {}
    for gc in (True, False, None):
        out, _ = arignote.scan(lambda xt, acc: T.tanh(T.dot(T.exp(acc), W) + xt), sequences=x,
                               outputs_info=np.zeros(3), name="loop", profile=True, allow_gc=gc)
        op = out.owner.inputs[0].owner.op
        assert isinstance(op, Scan) and op.allow_gc is gc
        np.testing.assert_allclose(function([x], out)(data), want)
        fns[gc] = op.inner_function()
        assert fns[gc].profile.message == "loop" and fns[gc].profile.fct_callcount == 6
    # Without gc the step keeps its intermediate buffers for the next step.
    assert len(fns[False]._release_cells) < len(fns[True]._release_cells)
    with arignote.config.change_flags(allow_gc=False):
        out, _ = arignote.scan(lambda xt: T.tanh(T.dot(T.exp(xt), W)), sequences=x, profile="mine")
        assert len(out.owner.op.inner_function()._release_cells) == len(fns[False]._release_cells)
        assert out.owner.op.inner_function().profile.message == "mine"
    out, _ = arignote.scan(lambda xt: xt * 2, sequences=x)
    assert out.owner.op.inner_function().profile is None
