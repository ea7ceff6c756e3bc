"""Theano's linker API: Container, PerformLinker, WrapLinker, VM_Linker in a mode, Op.make_thunk."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from arignote import config, function, shared
from arignote import tensor as T
from arignote.compile.linkers import Container, PerformLinker, VM_Linker, WrapLinker, WrapLinkerMany
from arignote.compile.mode import Mode
from arignote.graph.basic import Apply, Constant, Op
from arignote.graph.fg import FunctionGraph
from arignote.graph.scheduling import key_to_cmp, sort_schedule_fn
from arignote.graph.traversal import clone
from arignote.ifelse import ifelse
from tests.graph._ops import Thing


class Arith(Op):
    """A binary op on Python numbers, named by ``label``; ``calls`` counts its runs."""

    __props__ = ("label",)
    impls = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
             "div": lambda a, b: a / b}

    def __init__(self, label: str):
        self.label = label

    def make_node(self, a, b):
        return Apply(self, [a, b], [Thing()()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = self.impls[self.label](*inputs)


add, sub, mul, div = (Arith(k) for k in ("add", "sub", "mul", "div"))


class Broken(Op):
    def make_node(self, a):
        return Apply(self, [a], [Thing()()])

    def perform(self, node, inputs, outputs):
        raise AssertionError("a node the graph was cut below ran")


def ratio_graph():
    x, y, z = Thing()("x"), Thing()("y"), Thing()("z")
    return x, y, z, mul(sub(x, y), div(x, y))


# ------------------------------------------------------------- Container
def test_container_filters_values_and_refuses_when_read_only():
    v = T.vector("v")
    c = Container(v, [None])
    c.data = [1, 2]
    assert c.storage[0].dtype == v.type.numpy_dtype and c.name == "v"
    c.data = None
    assert c.storage[0] is None
    frozen = Container(v.type, [np.zeros(2, config.floatX)], readonly=True)
    with pytest.raises(ValueError, match="read-only"):
        frozen.data = [3, 4]


def test_container_calls_a_one_argument_filter_plainly():
    class Halves:
        def filter(self, value):
            return value / 2

    from arignote.graph.basic import Type
    kind = type("Halves", (Halves, Type), {})()
    c = Container(kind, [None])
    c.value = 3
    assert c.value == 1.5


def test_container_deepcopy_keeps_the_array_and_its_dtype():
    v = np.asarray(0.5, dtype="float32")
    c = Container(T.fscalar(), [v])
    d = copy.deepcopy(c)
    assert isinstance(d.storage[0], np.ndarray) and d.storage[0].dtype == np.float32
    assert d.storage is not c.storage and d.storage[0] == 0.5


# --------------------------------------------------------- PerformLinker
def test_perform_linker_thunk_reads_and_writes_containers():
    x, y, z, e = ratio_graph()
    run, inputs, outputs = PerformLinker().accept(FunctionGraph([x, y, z], [e])).make_thunk()
    inputs[0].data, inputs[1].data = 6.0, 2.0
    run()
    assert outputs[0].data == 12.0
    with pytest.raises(ValueError):
        outputs[0].data = 1.0


def test_perform_linker_function_with_constants_and_passthrough():
    x = Thing()("x")
    two = Constant(Thing(), 2.0)
    fn = PerformLinker().accept(FunctionGraph([x], [add(x, two), x])).make_function()
    assert fn(3.0) == [5.0, 3.0]
    assert PerformLinker().accept(FunctionGraph([x], [x])).make_function()(7) == 7
    with pytest.raises(TypeError, match="takes 1 arguments"):
        fn(1.0, 2.0)


def test_perform_linker_cut_graph_skips_the_nodes_below_its_inputs():
    x, y = Thing()("x"), Thing()("y")
    a = add(x, y)
    r = Broken()(a)
    inputs, outputs = clone([x, y, r], [add(r, a)])
    fn = PerformLinker().accept(FunctionGraph(inputs, outputs)).make_function()
    assert fn(1.0, 2.0, 10.0) == 13.0


def test_perform_linker_gc_frees_intermediates_but_keeps_outputs():
    x, y, z, e = ratio_graph()
    for allow_gc, freed in ((True, True), (False, False)):
        run, inputs, outputs, thunks, order = (
            PerformLinker(allow_gc=allow_gc).accept(FunctionGraph([x, y], [e], clone=False)).make_all())
        inputs[0].data, inputs[1].data = 4.0, 2.0
        run()
        middle = run.storage_map[order[0].outputs[0]]
        assert (middle[0] is None) == freed and outputs[0].data == 4.0
        assert len(thunks) == len(order) == 3


def test_accept_gives_a_copy_for_a_second_graph():
    x, y, z, e = ratio_graph()
    linker = PerformLinker()
    first = linker.accept(FunctionGraph([x, y], [e]))
    second = linker.accept(FunctionGraph([x, y], [add(x, y)]))
    assert second is not first and first.make_function()(4.0, 2.0) == 4.0
    assert second.make_function()(4.0, 2.0) == 6.0
    with pytest.raises(TypeError, match="before accept"):
        PerformLinker().make_thunk()


def test_perform_linker_follows_its_schedule():
    x, y, z, e = ratio_graph()
    by_label = sort_schedule_fn(key_to_cmp(lambda node: node.op.label))
    order = PerformLinker(schedule=by_label).accept(FunctionGraph([x, y], [e])).make_all()[-1]
    assert [n.op.label for n in order] == ["div", "sub", "mul"]


# ----------------------------------------------------------- WrapLinker
def test_wrap_linker_decides_what_runs():
    x, y, z, e = ratio_graph()
    seen = []

    def trace_only(i, node, *thunks):
        seen.append((i, node.op.label, len(thunks)))

    run, inputs, outputs = WrapLinker([PerformLinker(allow_gc=False)] * 2, trace_only).accept(
        FunctionGraph([x, y, z], [e])).make_thunk()
    inputs[0].data, inputs[1].data = 6.0, 3.0
    run()
    assert sorted(label for _, label, _ in seen) == ["div", "mul", "sub"] and seen[-1][1] == "mul"
    assert [i for i, _, _ in seen] == [0, 1, 2] and {n for _, _, n in seen} == {2}
    assert outputs[0].data is None


def test_wrap_linker_many_runs_each_wrapper_and_thunks_see_copied_inputs():
    x, y, z, e = ratio_graph()
    log = []

    def run_second(i, node, first, second):
        second()

    def note(i, node, first, second):
        log.append(node.op.label)

    linker = WrapLinkerMany([PerformLinker(allow_gc=False), PerformLinker(allow_gc=False)], [run_second, note])
    run, inputs, outputs, per_node, order = linker.accept(FunctionGraph([x, y, z], [e])).make_all()
    inputs[0].data, inputs[1].data = 6.0, 3.0
    run()
    assert log == [n.op.label for n in order]
    assert outputs[0].data is None  # only the second linker's thunks ran, into its own cells
    assert [len(group) for group in per_node] == [2, 2, 2]


# --------------------------------------------------- VM_Linker in a mode
class Counter:
    def __init__(self):
        self.calls: list[tuple[str, bool]] = []

    def __call__(self, node, thunk, storage_map, compute_map):
        out = node.outputs[0]
        self.calls.append((type(node.op).__name__, compute_map[out][0]))
        assert callable(thunk) and out in storage_map


def test_callback_runs_after_every_node_of_every_call():
    a, b, c = T.scalars("abc")
    seen = Counter()
    f = function([a, b, c], (a + b) * c, mode=Mode(optimizer=None, linker=VM_Linker(callback=seen)))
    assert f(1, 2, 3) == 9
    n = len(f.maker.fgraph.toposort())
    assert len(seen.calls) == n and all(done for _, done in seen.calls)
    f(1, 2, 3)
    assert len(seen.calls) == 2 * n


@pytest.mark.parametrize("lazy, reports", [(None, 2), (True, 2), (False, 1)])
def test_a_lazy_ifelse_reports_its_decision_and_its_result(lazy, reports):
    a, b, c = T.scalars("abc")
    seen = Counter()
    f = function([a, b, c], ifelse(a, 2 * b, 3 * c),
                 mode=Mode(optimizer=None, linker=VM_Linker(callback=seen, lazy=lazy)))
    assert f(1, 2, 3) == 4
    ifelse_calls = [done for name, done in seen.calls if name == "IfElse"]
    assert len(ifelse_calls) == reports and ifelse_calls[-1] is True
    if reports == 2:
        assert ifelse_calls[0] is False  # the decision comes before the result
    assert len(seen.calls) - reports == (1 if lazy is not False else 2)  # one branch, or both


def test_callback_input_sees_each_input_at_each_call():
    x, y = T.scalars("xy")
    got = []
    f = function([x, y], x - y, mode=Mode(optimizer=None,
                                          linker=VM_Linker(callback_input=lambda v, cell: got.append((v.name, cell[0])))))
    assert f(5, 3) == 2
    assert [(name, float(value)) for name, value in got] == [("x", 5.0), ("y", 3.0)]


def test_mode_linker_schedule_orders_the_function_and_maker_linker_relinks():
    x = T.matrix("x")
    y = T.dot(x[:2] * 2, x.T + 1).T
    by_name = sort_schedule_fn(key_to_cmp(str))
    f = function([x], y, mode=Mode(linker=PerformLinker(schedule=by_name)))
    assert f.fn.nodes == by_name(f.maker.fgraph)
    order = f.maker.linker.make_all()[-1]
    assert order == f.fn.nodes
    value = np.arange(6.0).reshape(3, 2).astype(config.floatX)
    np.testing.assert_allclose(f(value), np.dot(value[:2] * 2, value.T + 1).T)


def test_linker_allow_gc_overrides_the_flag():
    v = T.vector("v")
    middle = T.exp(v)
    for allow_gc in (True, False):
        f = function([v], middle + 1, mode=Mode(optimizer=None, linker=VM_Linker(allow_gc=allow_gc)))
        f(np.ones(3, config.floatX))
        assert (f.fn.storage_map[f.maker.fgraph.outputs[0].owner.inputs[0]][0] is None) == allow_gc


def test_default_maker_linker_is_a_vm_linker_bound_to_the_graph():
    x = T.scalar("x")
    f = function([x], x * 2)
    assert isinstance(f.maker.linker, VM_Linker) and f.maker.linker.fgraph is f.maker.fgraph


# ---------------------------------------------------------- output_subset
def test_output_subset_picks_outputs_by_position_or_key():
    x = T.scalar("x")
    y = x ** 2
    f = function([x], [y + 7, y - 9, y / 4])
    assert f(2, output_subset=[2, 0]) == [1.0, 11.0]
    assert f(3, output_subset=[]) == []
    g = function([x], {"a": y * 5, "b": y - 7})
    assert g(2, output_subset=["b"]) == {"b": -3.0}
    single = function([x], y)
    assert single(3, output_subset=[0]) == [9.0]
    with pytest.raises(ValueError, match="has no output 'c'"):
        g(2, output_subset=["c"])


def test_output_subset_still_applies_the_updates():
    x = T.lscalar("x")
    s = shared(np.int64(1), name="s")
    f = function([x], [x - 6], updates=[(s, s + x)])
    assert f(30, output_subset=[]) == []
    assert f(x=2, output_subset=[0]) == [-4]
    assert s.get_value() == 33


# --------------------------------------------- Op.make_thunk, default make_node
class IncOne(Op):
    def make_node(self, a):
        a = T.as_tensor_variable(a)
        return Apply(self, [a], [a.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = inputs[0] + 1


def test_op_make_thunk_runs_on_a_storage_map():
    i = T.iscalar("i")
    o = IncOne()(i)
    storage = {i: [np.int32(3)], o: [np.int32(99)]}
    computed = {i: [True], o: [False]}
    thunk = o.owner.op.make_thunk(o.owner, storage, computed, no_recycling=[o])
    assert not thunk()
    assert computed[o][0] and storage[o][0] == 4


class Doubling(IncOne):
    """Brings its own Theano-style make_thunk; ``function`` must run it."""

    made = 0

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        Doubling.made += 1
        source, target = storage_map[node.inputs[0]], storage_map[node.outputs[0]]

        def thunk():
            target[0] = source[0] * 2
            compute_map[node.outputs[0]][0] = True
        return thunk


def test_function_runs_an_ops_own_make_thunk():
    x = T.vector("x")
    f = function([x], Doubling()(x) + 1)
    assert Doubling.made >= 1
    np.testing.assert_allclose(f(np.asarray([1.0, 2.0], config.floatX)), [3.0, 5.0])


class Typed(Op):
    itypes = [T.dmatrix]
    otypes = [T.dmatrix]

    def perform(self, node, inputs, outputs):
        outputs[0][0] = inputs[0] * 2


def test_itypes_and_otypes_make_the_node():
    x = T.dmatrix("x")
    value = np.random.default_rng(0).random((3, 2))
    np.testing.assert_allclose(function([x], Typed()(x))(value), value * 2)
    with pytest.raises(TypeError, match="expected TensorType.*itypes"):
        Typed()(T.fmatrix("f"))
    with pytest.raises(ValueError, match="takes 1 inputs"):
        Typed()(x, x)
    with pytest.raises(NotImplementedError, match="itypes and otypes"):
        IncOne.__bases__[0]().make_node(x)


class OldStyle(IncOne):
    """A make_thunk written before Theano 1.0 added ``impl``."""

    def make_thunk(self, node, storage_map, compute_map, no_recycling):
        source, target = storage_map[node.inputs[0]], storage_map[node.outputs[0]]

        def thunk():
            target[0] = source[0] - 1
        return thunk


class LazyStyle(IncOne):
    """Theano's lazy protocol with a required ``impl``: asks for its input until it is computed."""

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl):
        ready, source = compute_map[node.inputs[0]], storage_map[node.inputs[0]]
        target = storage_map[node.outputs[0]]

        def thunk():
            if not ready[0]:
                return [0]
            target[0] = source[0] * 10
            return []
        thunk.lazy = True
        return thunk


@pytest.mark.parametrize("op, expected", [(OldStyle(), [0.0, 1.0]), (LazyStyle(), [10.0, 20.0])])
def test_function_runs_make_thunks_of_either_signature(op, expected):
    x = T.vector("x")
    f = function([x], op(x))
    np.testing.assert_allclose(f(np.asarray([1.0, 2.0], config.floatX)), expected)


# ------------------------------------------------------- f.fn.allow_gc
def test_allow_gc_can_be_switched_and_without_it_the_last_call_stays_visible():
    v = T.vector("v")
    f = function([v], T.exp(v) + 1, mode=Mode(optimizer=None, linker=VM_Linker(allow_gc=True)))
    out = f.maker.fgraph.outputs[0]
    middle = out.owner.inputs[0]
    first = f(np.zeros(2, config.floatX))
    assert f.fn.allow_gc is True and f.fn.storage_map[out][0] is None
    f.fn.allow_gc = False
    assert f.allow_gc is False
    second = f(np.ones(2, config.floatX))
    kept = f.fn.storage_map[out][0]
    assert kept is second and f.fn.storage_map[middle][0] is not None
    third = f(np.zeros(2, config.floatX))  # the kept buffer is the caller's: never written again
    np.testing.assert_allclose(second, np.e + 1)
    np.testing.assert_allclose(third, first)
    f.free()
    assert all(cell[0] is None for var, cell in f.fn.storage_map.items() if not isinstance(var, Constant))
    f.fn.allow_gc = True
    f(np.ones(2, config.floatX))
    assert f.fn.storage_map[out][0] is None and f.fn.storage_map[middle][0] is None


def test_without_gc_an_update_and_outputs_stay_right_across_calls():
    s = shared(np.zeros(3, config.floatX), name="s")
    step = s + 1
    f = function([], [step, step * 2], updates=[(s, step)], mode=Mode(linker=VM_Linker(allow_gc=False)))
    results = [f() for _ in range(3)]
    for k, (a, b) in enumerate(results, start=1):
        np.testing.assert_allclose(a, k)
        np.testing.assert_allclose(b, 2 * k)
    np.testing.assert_allclose(s.get_value(), 3)
