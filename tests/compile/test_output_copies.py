"""The copy nodes a function puts on its outputs (compile/output_copies.py): where they go
(Theano's insert_deepcopy), that they are the only copy, and that what they promise holds
on the CPU and on a GPU device."""
import copy

import numpy as np
import pytest

from arignote import In, Out, function, shared
from arignote import tensor as T
from arignote.compile.output_copies import (RULES, CopyRule, DeepCopyOp, copier, deep_copy_op,
                                            register_copy)
from arignote.graph.basic import Apply, Op, Type
from arignote.tensor.random.type import RandomStateType
from tests.utils import AddOneInplace


def copies(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, DeepCopyOp)]


def values(cell_value):
    """The host values of a CPU or GPU array."""
    return np.asarray(cell_value)


def same_memory(a, b):
    """Whether two arrays (numpy or GPU) share memory."""
    if hasattr(a, "buffer") and hasattr(b, "buffer"):
        return a.buffer is b.buffer
    return np.may_share_memory(a, b)


@pytest.mark.parametrize("build, n", [
    (lambda x, s: x, 1), (lambda x, s: x.T, 1), (lambda x, s: s, 1), (lambda x, s: T.constant(np.ones(2)), 1),
    (lambda x, s: x * 2, 0), (lambda x, s: s + x, 0), (lambda x, s: T.exp(x)[1:], 0),
], ids=["input", "view of input", "shared", "constant", "computed", "computed from shared", "view of computed"])
def test_an_output_is_copied_exactly_when_its_memory_is_not_the_calls_own(build, n):
    x, s = T.dmatrix("x"), shared(np.ones((2, 2)), "s")
    out = build(x, s)
    f = function([x], out, on_unused_input="ignore")
    assert len(copies(f)) == n
    assert [n.op for n in copies(f)] == [deep_copy_op] * n
    a = np.ones((2, 2))
    got = f(a)
    assert not np.may_share_memory(got, a) and not np.may_share_memory(got, s.get_value(borrow=True))


def test_borrowed_outputs_and_inputs_get_no_copy_and_share_memory():
    x, s = T.dvector("x"), shared(np.arange(3.0), "s")
    c = T.constant(np.arange(2.0))
    a = np.arange(3.0)
    f = function([In(x, borrow=True)], x)
    assert not copies(f) and f(a) is a
    g = function([], [Out(s, borrow=True), Out(c, borrow=True)])
    assert not copies(g)
    inner, const = g()
    assert inner is s.get_value(borrow=True) and const is c.data


def test_in_borrow_alone_lets_the_output_alias_but_out_borrow_alone_does_not():
    x = T.dvector("x")
    a = np.arange(3.0)
    assert np.may_share_memory(function([In(x, borrow=True)], x.dimshuffle("x", 0))(a), a)
    f = function([x], Out(x, borrow=True))  # Theano's test_borrow_input: In(borrow=False) wins
    assert len(copies(f)) == 1 and not np.may_share_memory(f(a), a)


def test_two_outputs_sharing_memory_copy_the_first_as_theano_did():
    x = T.dvector("x")
    e = T.exp(x)
    f = function([x], [e.T, e])
    (node,) = copies(f)
    assert f.maker.fgraph.outputs[0].owner is node and f.maker.fgraph.outputs[1] is not node.outputs[0]
    first, second = f(np.zeros(3))
    assert not np.may_share_memory(first, second)
    g = function([x], [Out(e, borrow=True), Out(e.T, borrow=True)])  # both borrowed: may share
    assert not copies(g)


def test_an_output_sharing_an_updates_buffer_is_copied_and_the_update_is_not():
    s = shared(np.ones(3), "s")
    e = s * 2
    f = function([], e, updates={s: e})
    (node,) = copies(f)
    assert f.maker.fgraph.outputs[0].owner is node  # the output, not the update
    out = f()
    out[:] = -1
    np.testing.assert_array_equal(s.get_value(), [2, 2, 2])


def test_the_old_value_of_an_updated_shared_variable_is_copied():
    # Theano handed this buffer over; another thread's call may still be reading it.
    s = shared(np.ones(3), "s")
    f = function([], s, updates={s: s + 1})
    assert len(copies(f)) == 1
    old = f()
    old[:] = 100
    np.testing.assert_array_equal(s.get_value(), [2, 2, 2])


@pytest.mark.parametrize("target", ["shared", "constant", "input"])
def test_an_update_whose_memory_is_not_the_calls_own_is_copied(target):
    a, b = shared(np.zeros(3), "a"), shared(np.ones(3), "b")
    x = T.dvector("x")
    value = {"shared": b, "constant": T.constant(np.full(3, 5.0)), "input": x}[target]
    f = function([x], [], updates={a: value}, on_unused_input="ignore")
    assert len(copies(f)) == 1
    arg = np.full(3, 7.0)
    f(arg)
    held = a.get_value(borrow=True)
    assert not same_memory(held, b.get_value(borrow=True)) and not same_memory(held, arg)
    if target == "constant":
        assert not same_memory(held, value.data)


def test_shared_variables_that_swap_values_need_no_copy():
    a, b = shared(np.zeros(2), "a"), shared(np.ones(2), "b")
    f = function([], [], updates={a: b, b: a})
    assert not copies(f)
    f()
    np.testing.assert_array_equal(a.get_value(), [1, 1])
    np.testing.assert_array_equal(b.get_value(), [0, 0])


def test_two_updates_from_one_value_copy_one_of_them():
    a, b = shared(np.ones(3), "a"), shared(np.zeros(3), "b")
    e = a * 2
    f = function([], [], updates={a: e, b: e})
    assert len(copies(f)) == 1
    f()
    assert not np.may_share_memory(a.get_value(borrow=True), b.get_value(borrow=True))


def test_an_output_of_a_shared_value_the_users_inplace_op_overwrote_is_copied():
    s = shared(np.zeros(3), "s")
    f = function([], AddOneInplace()(s), accept_inplace=True)
    assert len(copies(f)) == 1
    out = f()
    out[:] = 50
    np.testing.assert_array_equal(s.get_value(), [1, 1, 1])


def test_the_copy_node_is_the_only_copy(monkeypatch):
    """One copy per call, made by the node: the caller gets the node's array itself."""
    from arignote.tensor.type import TensorType
    made = []

    def counting(value):
        made.append(value.copy())
        return made[-1]
    monkeypatch.setitem(RULES, TensorType, CopyRule(of=lambda ttype: counting))
    x, s = T.dvector("x"), shared(np.arange(3.0), "s")
    for f, args in ((function([x], x), (np.arange(3.0),)), (function([], s), ())):
        made.clear()
        got = f(*args)
        assert len(made) == 1 and got is made[0]


def test_a_failed_call_with_copied_updates_changes_no_shared_variable():
    a, b = shared(np.zeros(3), "a"), shared(np.ones(3), "b")
    w = T.dvector("w")
    f = function([w], b + w, updates={a: b, b: b + w})
    before = a.get_value(borrow=True), b.get_value(borrow=True)
    with pytest.raises(ValueError):
        f(np.ones(4))
    assert a.get_value(borrow=True) is before[0] and b.get_value(borrow=True) is before[1]
    np.testing.assert_array_equal(a.get_value(), [0, 0, 0])
    f(np.ones(3))
    np.testing.assert_array_equal(a.get_value(), [1, 1, 1])
    np.testing.assert_array_equal(b.get_value(), [2, 2, 2])


# ------------------------------------------------------------------ devices
def test_on_every_device_outputs_never_alias_inputs_shared_storage_or_constants(device):
    s = shared(np.arange(3.0, dtype="float32"), "s")
    x = T.fvector("x")
    c = T.constant(np.ones(3, dtype="float32"))
    f = function([x], [x, s, c, s * x, Out(s, borrow=True)])
    arg = np.arange(3, dtype="float32")
    got = f(arg)
    inner = s.get_value(borrow=True, return_internal_type=True)
    for out in got[:4]:
        assert not same_memory(out, arg) and not same_memory(out, inner) and not same_memory(out, c.data)
    assert same_memory(got[4], inner)  # borrowed: the variable's own buffer
    np.testing.assert_array_equal(values(got[1]), [0, 1, 2])


def test_on_every_device_a_failed_call_changes_no_shared_variable(device):
    a = shared(np.zeros(3, dtype="float32"), "a")
    b = shared(np.ones(3, dtype="float32"), "b")
    w = T.fvector("w")
    f = function([w], [a, b + w], updates={a: b, b: b + w})
    before = a.get_value(borrow=True, return_internal_type=True)
    with pytest.raises(ValueError):
        f(np.ones(4, dtype="float32"))
    assert a.get_value(borrow=True, return_internal_type=True) is before
    np.testing.assert_array_equal(a.get_value(), [0, 0, 0])
    old, _ = f(np.ones(3, dtype="float32"))
    np.testing.assert_array_equal(values(old), [0, 0, 0])
    np.testing.assert_array_equal(a.get_value(), [1, 1, 1])


def test_a_gpu_output_is_copied_on_its_device(opencl):
    from arignote.backends.gpu import GpuArray
    from arignote.backends.gpu.ops import GpuDeepCopyOp
    s = shared(np.arange(4.0, dtype="float32"), "s")
    f = function([], s)
    (node,) = f.maker.fgraph.toposort()  # no transfer: the copy runs on the device
    assert isinstance(node.op, GpuDeepCopyOp) and isinstance(node.op, DeepCopyOp)
    out = f()
    assert isinstance(out, GpuArray) and not same_memory(out, s.get_value(borrow=True, return_internal_type=True))
    np.testing.assert_array_equal(out.get(), [0, 1, 2, 3])
    t = shared(np.zeros(4, dtype="float32"), "t")
    g = function([], [], updates={t: s})
    assert [type(n.op) for n in g.maker.fgraph.toposort()] == [GpuDeepCopyOp]
    g()
    g()  # the second copy writes into the buffer the first left, on the device
    np.testing.assert_array_equal(t.get_value(), [0, 1, 2, 3])
    assert not same_memory(t.get_value(borrow=True, return_internal_type=True),
                           s.get_value(borrow=True, return_internal_type=True))


# ------------------------------------------------------------ the table
def test_each_type_has_its_copy_and_the_nearest_registered_class_decides():
    a = np.arange(3.0)
    got = copier(T.dvector)(a)
    assert got is not a and not np.may_share_memory(got, a)
    state = np.random.RandomState(3)
    twin = copier(RandomStateType())(state)
    assert twin is not state and twin.randint(1000) == state.randint(1000)


class Box:
    def __init__(self, items):
        self.items = items


class BoxType(Type):
    def filter(self, value, strict=False, allow_downcast=None):
        return value

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(BoxType)


class BoxCopy(DeepCopyOp):
    pass


class MakeBox(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [BoxType()()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = Box(list(inputs[0]))


def test_a_registered_type_is_copied_by_its_rule_and_op():
    register_copy(BoxType, CopyRule(of=lambda ttype: lambda box: Box(list(box.items)), op=lambda ttype: BoxCopy()))
    try:
        box = BoxType()("box")
        f = function([box], box)
        assert [type(n.op) for n in f.maker.fgraph.toposort()] == [BoxCopy]
        given = Box([1, 2])
        got = f(given)
        assert got is not given and got.items == [1, 2] and got.items is not given.items
    finally:
        del RULES[BoxType]
    g = function([box], box)  # unregistered again: the default, a deepcopy
    got = g(given)
    assert type(g.maker.fgraph.toposort()[0].op) is DeepCopyOp and got.items is not given.items


def test_the_copy_op_copies_deeply_and_infers_its_shape():
    x = T.dmatrix("x")
    y = deep_copy_op(x)
    assert y.type == x.type and DeepCopyOp() == deep_copy_op
    f = function([x], [y, y.shape])
    a = np.ones((2, 3))
    got, shape = f(a)
    assert not np.may_share_memory(got, a) and list(shape) == [2, 3]
    with pytest.raises(TypeError, match="symbolic variable"):
        deep_copy_op(np.ones(2))
    assert copy.deepcopy(deep_copy_op) == deep_copy_op


# ------------------------------------------------- one-term sums and products
@pytest.mark.parametrize("build", [T.add, T.mul, T.tensor_copy], ids=["add", "mul", "tensor_copy"])
def test_a_one_term_sum_or_product_is_its_term(build):
    x = T.dmatrix("x")
    y = build(x)
    assert y is not x and y.type == x.type
    f = function([x], y)
    assert [type(n.op) for n in f.maker.fgraph.toposort()] == [DeepCopyOp]
    a = np.arange(6.0).reshape(2, 3)
    got = f(a)
    np.testing.assert_array_equal(got, a)
    assert not np.may_share_memory(got, a)
    np.testing.assert_array_equal(function([x], build(x) * 2)(a), a * 2)


def test_add_of_nothing_is_an_error():
    with pytest.raises(TypeError, match="at least 1 input"):
        T.add()
