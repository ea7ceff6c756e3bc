"""The memory-aliasing promises of docs/architecture.md, one test per row and rule.

Each test mutates or reuses memory in the way the promise forbids (or allows)
and checks what the caller observes, so a broken promise fails here.
"""
import numpy as np
import pytest

from arignote import In, Out, function, shared
from arignote import tensor as T
from tests.utils import AddOneInplace


def shares(a, b):
    return np.may_share_memory(a, b)


# ------------------------------------------------------------------ shared()
def test_shared_copies_its_value():
    v = np.arange(3.0)
    s = shared(v)
    v[0] = 100
    assert s.get_value()[0] == 0
    assert not shares(s.get_value(borrow=True), v)


def test_shared_borrow_keeps_the_array_on_cpu():
    v = np.arange(3.0)
    s = shared(v, borrow=True)
    assert s.get_value(borrow=True) is v


def test_get_value_returns_a_copy_the_caller_owns():
    s = shared(np.arange(3.0))
    got = s.get_value()
    got[:] = -1
    np.testing.assert_array_equal(s.get_value(), [0, 1, 2])
    assert got is not s.get_value()


def test_get_value_borrow_returns_the_internal_buffer_on_cpu():
    s = shared(np.arange(3.0))
    inner = s.get_value(borrow=True)
    assert inner is s.get_value(borrow=True)
    inner[0] = 7  # the caller asked for the buffer: writes are visible
    assert function([], s * 1)()[0] == 7


def test_get_value_return_internal_type_is_an_ndarray_on_cpu():
    s = shared(np.arange(3.0))
    got = s.get_value(return_internal_type=True)
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, [0, 1, 2])
    assert s.get_value(borrow=True, return_internal_type=True) is s.get_value(borrow=True)


def test_set_value_copies():
    s = shared(np.zeros(3))
    v = np.ones(3)
    s.set_value(v)
    v[:] = 5
    np.testing.assert_array_equal(s.get_value(), [1, 1, 1])


def test_set_value_borrow_adopts_the_array():
    s = shared(np.zeros(3))
    v = np.ones(3)
    s.set_value(v, borrow=True)
    assert s.get_value(borrow=True) is v


# ---------------------------------------------------------------------- In
def test_in_never_changes_the_callers_array():
    x = T.vector("x")
    f = function([x], T.exp(x) * 2)
    a = np.arange(3.0)
    f(a)
    f(a)
    np.testing.assert_array_equal(a, [0, 1, 2])


@pytest.mark.parametrize("build", [lambda x: x, lambda x: x.dimshuffle(0),
                                   lambda x: x.dimshuffle("x", 0)],
                         ids=["x itself", "identity view", "broadcast view"])
def test_output_that_is_the_input_or_a_view_of_it_does_not_alias_it(build):
    x = T.vector("x")
    f = function([x], build(x))
    a = np.arange(3.0)
    out = f(a)
    assert not shares(out, a)
    out[...] = -1
    np.testing.assert_array_equal(a, [0, 1, 2])


def test_graph_with_views_of_the_input_leaves_it_unchanged():
    x = T.vector("x")
    row = x.dimshuffle("x", 0)
    f = function([x], [row + 1, row * x])
    a = np.arange(3.0)
    f(a)
    np.testing.assert_array_equal(a, [0, 1, 2])


@pytest.mark.parametrize("view", [False, True], ids=["input", "view of input"])
def test_an_inplace_op_of_the_users_graph_overwrites_the_callers_array(view):
    # Theano's rule for accept_inplace=True, which legacy code reads back.
    x = T.vector("x")
    target = x.dimshuffle(0) if view else x
    f = function([x], AddOneInplace()(target), accept_inplace=True)
    a = np.arange(3.0)
    out = f(a)
    np.testing.assert_array_equal(out, [1, 2, 3])
    np.testing.assert_array_equal(a, [1, 2, 3])
    assert shares(out, a)  # the overwritten array is the result, as in Theano


def test_in_mutable_false_keeps_the_array_from_the_users_inplace_op():
    x = T.vector("x")
    f = function([In(x, mutable=False)], AddOneInplace()(x), accept_inplace=True)
    a = np.arange(3.0)
    np.testing.assert_array_equal(f(a), [1, 2, 3])
    np.testing.assert_array_equal(a, [0, 1, 2])


def test_only_the_input_the_users_op_overwrites_is_overwritten():
    # exp(y) * 2 becomes an in-place Composite that would write into y if y were
    # mutable (the control below); accept_inplace=True does not make it so.
    x, y = T.vector("x"), T.vector("y")
    f = function([x, y], [AddOneInplace()(x), T.exp(y) * 2], accept_inplace=True)
    a, b = np.arange(3.0), np.zeros(3)
    bumped, doubled = f(a, b)
    np.testing.assert_array_equal(a, [1, 2, 3])
    np.testing.assert_array_equal(b, [0, 0, 0])
    np.testing.assert_array_equal(doubled, [2, 2, 2])
    control = function([x, In(y, mutable=True)], [AddOneInplace()(x), T.exp(y) * 2], accept_inplace=True)
    control(np.arange(3.0), b)
    np.testing.assert_array_equal(b, [2, 2, 2])


def test_an_argument_aliasing_the_overwritten_one_is_separated():
    x, y = T.vector("x"), T.vector("y")
    f = function([x, y], [AddOneInplace()(x), y * 10], accept_inplace=True)
    a = np.arange(3.0)
    _, tens = f(a, a)
    np.testing.assert_array_equal(a, [1, 2, 3])
    np.testing.assert_array_equal(tens, [0, 10, 20])  # y read the array before x was bumped


def test_the_users_in_spec_still_finds_an_overwritten_input():
    x = T.vector("x")
    spec = In(x, value=np.zeros(2))
    f = function([spec], AddOneInplace()(x), accept_inplace=True)
    assert f[spec] is f[x]
    np.testing.assert_array_equal(f(), [1, 1])


def test_the_users_inplace_op_changes_a_shared_variable_only_when_the_call_succeeds():
    # Theano's result (the shared value is overwritten), but from a copy, committed
    # with the updates: a failed call changes nothing.
    s, z = shared(np.zeros(3), "s"), T.vector("z")
    f = function([z], AddOneInplace()(s) + z, accept_inplace=True)
    before = s.get_value(borrow=True)
    with pytest.raises(ValueError):
        f(np.zeros(2))
    np.testing.assert_array_equal(s.get_value(), [0, 0, 0])
    assert s.get_value(borrow=True) is before
    np.testing.assert_array_equal(f(np.zeros(3)), [1, 1, 1])
    np.testing.assert_array_equal(before, [0, 0, 0])  # never written into
    np.testing.assert_array_equal(s.get_value(), [1, 1, 1])
    f(np.zeros(3))
    np.testing.assert_array_equal(s.get_value(), [2, 2, 2])


def test_the_users_inplace_op_on_a_shared_variable_through_a_view():
    s = shared(np.zeros((2, 3)), "s")
    f = function([], AddOneInplace()(s.T), accept_inplace=True)
    np.testing.assert_array_equal(f(), np.ones((3, 2)))
    np.testing.assert_array_equal(s.get_value(), np.ones((2, 3)))


def test_the_users_inplace_op_on_a_shared_variable_with_an_update():
    s, t = shared(np.zeros(3), "s"), shared(np.zeros(3), "t")
    bump = function([], [], updates={s: AddOneInplace()(s)}, accept_inplace=True)
    bump()
    bump()
    np.testing.assert_array_equal(s.get_value(), [2, 2, 2])
    # The update decides what the variable holds, not the overwritten buffer.
    other = function([], [], updates={t: s * 10 + AddOneInplace()(t) * 0}, accept_inplace=True)
    other()
    np.testing.assert_array_equal(t.get_value(), [20, 20, 20])


def test_the_steps_inplace_op_does_not_overwrite_the_loops_inputs():
    from arignote import scan
    from arignote.tensor import inplace
    x, w = T.vector("x"), T.vector("w")
    rows, _ = scan(lambda xt, w: inplace.add_inplace(w, xt), sequences=[x], non_sequences=[w])
    a, b = np.ones(3), np.ones(3)
    np.testing.assert_array_equal(function([x, w], rows)(a, b), np.full((3, 3), 2.0))
    np.testing.assert_array_equal(b, [1, 1, 1])


def test_in_mutable_lets_the_function_overwrite_the_array():
    x = T.vector("x")
    f = function([In(x, mutable=True)], AddOneInplace()(x), accept_inplace=True)
    a = np.arange(3.0)
    np.testing.assert_array_equal(f(a), [1, 2, 3])
    np.testing.assert_array_equal(a, [1, 2, 3])  # no defensive copy was made


@pytest.mark.parametrize("order", ["destroyer first", "reader first"])
def test_readers_of_an_overwritten_input_run_before_the_op_overwriting_it(order):
    x = T.vector("x")
    doubled, bumped = x * 2, AddOneInplace()(x)
    outputs = [bumped, doubled] if order == "destroyer first" else [doubled, bumped]
    f = function([In(x, mutable=True)], outputs, accept_inplace=True)
    got = dict(zip(["bumped", "doubled"] if order == "destroyer first" else ["doubled", "bumped"],
                   f(np.arange(3.0))))
    np.testing.assert_array_equal(got["doubled"], [0, 2, 4])
    np.testing.assert_array_equal(got["bumped"], [1, 2, 3])


def test_in_borrow_lets_an_output_alias_the_input():
    x = T.vector("x")
    a = np.arange(3.0)
    assert function([In(x, borrow=True)], x)(a) is a
    assert shares(function([In(x, borrow=True)], x.dimshuffle("x", 0))(a), a)


# --------------------------------------------------------------------- Out
def test_out_returns_a_fresh_array_every_call():
    x = T.vector("x")
    f = function([x], T.exp(x))
    first = f(np.zeros(3))
    second = f(np.ones(3))
    assert first is not second and not shares(first, second)
    np.testing.assert_array_equal(first, [1, 1, 1])


def test_mutating_an_output_does_not_affect_later_calls():
    x = T.vector("x")
    f = function([x], T.exp(x))
    out = f(np.zeros(3))
    out[:] = 42
    np.testing.assert_array_equal(f(np.zeros(3)), [1, 1, 1])


def test_output_of_a_shared_variable_is_a_copy():
    s = shared(np.arange(3.0))
    out = function([], s)()
    out[:] = 9
    np.testing.assert_array_equal(s.get_value(), [0, 1, 2])


def test_output_of_a_constant_is_a_copy():
    f = function([], T.constant(np.arange(3.0)))
    f()[:] = 9
    np.testing.assert_array_equal(f(), [0, 1, 2])


def test_output_and_update_of_the_same_expression_do_not_alias():
    s = shared(np.ones(3))
    doubled = s * 2
    f = function([], doubled, updates={s: doubled})
    out = f()
    assert not shares(out, s.get_value(borrow=True))
    out[:] = 0
    np.testing.assert_array_equal(s.get_value(), [2, 2, 2])


@pytest.mark.parametrize("second", [lambda y: y, lambda y: y.dimshuffle("x", 0)],
                         ids=["same variable", "view"])
def test_two_outputs_never_alias_each_other(second):
    x = T.vector("x")
    y = T.exp(x)
    first, other = function([x], [y, second(y)])(np.zeros(3))
    assert not shares(first, other)


def test_out_borrow_returns_the_internal_buffer_overwritten_by_the_next_call():
    x = T.vector("x")
    f = function([x], Out(T.exp(x), borrow=True))
    first = f(np.zeros(3))
    second = f(np.ones(3))
    assert first is second  # the same buffer, reused
    np.testing.assert_allclose(first, np.exp(np.ones(3)))


# ---------------------------------------------------- shared never alias
def test_borrowing_another_shared_buffer_gets_a_copy():
    a = shared(np.arange(3.0))
    b = shared(a.get_value(borrow=True), borrow=True)
    assert not shares(a.get_value(borrow=True), b.get_value(borrow=True))
    c = shared(np.zeros(2))
    c.set_value(a.get_value(borrow=True)[::2], borrow=True)
    assert not shares(a.get_value(borrow=True), c.get_value(borrow=True))


@pytest.mark.parametrize("build", [lambda b: b, lambda b: b.dimshuffle(0)], ids=["b", "view of b"])
def test_update_from_another_shared_variable_copies(build):
    a = shared(np.zeros(3))
    b = shared(np.ones(3))
    function([], [], updates={a: build(b)})()
    assert not shares(a.get_value(borrow=True), b.get_value(borrow=True))
    function([], [], updates={b: b + 1})()
    np.testing.assert_array_equal(a.get_value(), [1, 1, 1])


def test_two_updates_from_one_expression_do_not_alias():
    a = shared(np.ones(3))
    b = shared(np.zeros(3))
    e = a * 2
    function([], [], updates={a: e, b: e})()
    assert not shares(a.get_value(borrow=True), b.get_value(borrow=True))
    np.testing.assert_array_equal(b.get_value(), [2, 2, 2])


def test_updates_ping_pong_between_two_buffers_without_allocating():
    """Each updated variable keeps a spare buffer: the update is written there and the two
    swap at the commit. A previous buffer someone still holds (borrowed, a view, another
    call's snapshot) is never written again: the next call allocates instead."""
    s = shared(np.ones(3))
    f = function([], [], updates={s: s * 2})
    ids = []
    for _ in range(4):
        f()
        ids.append(id(s.get_value(borrow=True)))
    assert ids[0] == ids[2] and ids[1] == ids[3] and ids[0] != ids[1]
    held = s.get_value(borrow=True)
    f()
    f()
    np.testing.assert_array_equal(held, [16, 16, 16])
    np.testing.assert_array_equal(s.get_value(), [64, 64, 64])


def test_a_failing_call_after_spare_buffers_exist_changes_nothing():
    a = shared(np.zeros(3), "a")
    b = shared(np.ones(3), "b")
    w = T.vector("w")
    f = function([w], [], updates=[(a, a + 1), (b, b + w)])
    f(np.ones(3))
    f(np.ones(3))  # both variables have a spare buffer now, written by the next call first
    a_before, b_before = a.get_value(borrow=True), b.get_value(borrow=True)
    with pytest.raises(ValueError):
        f(np.ones(4))
    assert a.get_value(borrow=True) is a_before and b.get_value(borrow=True) is b_before
    np.testing.assert_array_equal(a.get_value(), [2, 2, 2])
    f(np.ones(3))
    np.testing.assert_array_equal(a.get_value(), [3, 3, 3])
    np.testing.assert_array_equal(b.get_value(), [4, 4, 4])


def test_gemm_updates_write_into_the_spare_buffer():
    w = shared(np.ones((4, 3)))
    x, y = T.matrix("x"), T.matrix("y")
    f = function([x, y], [], updates={w: w - 0.5 * T.dot(x.T, y)})
    assert "Gemm" in str(f.maker.fgraph.toposort())
    xv, yv = np.ones((5, 4)), np.ones((5, 3))
    buffers = []
    for _ in range(4):
        f(xv, yv)
        buffers.append(id(w.get_value(borrow=True)))
    assert buffers[0] == buffers[2] and buffers[1] == buffers[3] and buffers[0] != buffers[1]
    np.testing.assert_array_equal(w.get_value(), np.full((4, 3), 1 - 4 * 2.5))


# -------------------------------------------------------- update semantics
@pytest.mark.parametrize("failing_first", [False, True])
def test_an_update_that_fails_part_way_leaves_every_shared_variable_as_it_was(failing_first):
    a = shared(np.zeros(3), "a")
    b = shared(np.ones(3), "b")
    w = T.vector("w")
    pairs = [(a, a + 1), (b, b + w)]
    f = function([w], [], updates=pairs[::-1] if failing_first else pairs)
    a_before, b_before = a.get_value(borrow=True), b.get_value(borrow=True)
    with pytest.raises(ValueError):
        f(np.ones(4))  # b + w: shapes (3,) and (4,)
    assert a.get_value(borrow=True) is a_before and b.get_value(borrow=True) is b_before
    np.testing.assert_array_equal(a.get_value(), [0, 0, 0])
    np.testing.assert_array_equal(b.get_value(), [1, 1, 1])
    f(np.ones(3))  # the function still works afterwards
    np.testing.assert_array_equal(b.get_value(), [2, 2, 2])


def test_updates_are_computed_from_the_values_before_the_call():
    a = shared(np.zeros(2))
    b = shared(np.ones(2))
    f = function([], [], updates={a: b, b: a})
    f()
    np.testing.assert_array_equal(a.get_value(), [1, 1])
    np.testing.assert_array_equal(b.get_value(), [0, 0])
    f()
    np.testing.assert_array_equal(a.get_value(), [0, 0])


def test_output_reads_the_value_before_the_update():
    s = shared(np.float64(1.0))
    f = function([], s * 1, updates={s: s + 1})
    assert f() == 1 and f() == 2 and s.get_value() == 3
