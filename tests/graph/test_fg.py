"""FunctionGraph: inputs, outputs, nodes and clients kept right through edits."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor
from arignote.graph.basic import Constant
from arignote.graph.fg import FunctionGraph, MissingInputError
from tests.graph._ops import Thing, f, g, two, var

DEPTH = 5000


class Recorder:
    """A feature that writes down every event it is told of."""

    def __init__(self):
        self.events = []

    def on_attach(self, fgraph):
        self.events.append(("attach",))

    def on_detach(self, fgraph):
        self.events.append(("detach",))

    def on_import(self, fgraph, node):
        self.events.append(("import", node))

    def on_prune(self, fgraph, node):
        self.events.append(("prune", node))

    def on_change_input(self, fgraph, node, i, old, new, reason):
        self.events.append(("change", node, i, old, new, reason))


def build():
    x, y = var("x"), var("y")
    a = f(x)
    b = g(a, y)
    return x, y, a, b


def test_without_clone_the_graph_is_used_as_is():
    x, y, a, b = build()
    fg = FunctionGraph([x, y], [b], clone=False)
    assert fg.inputs == [x, y] and fg.outputs == [b]
    assert fg.apply_nodes == {a.owner, b.owner}
    assert fg.variables == {x, y, a, b}
    assert fg.clients[x] == [(a.owner, 0)]
    assert fg.clients[a] == [(b.owner, 0)]
    assert fg.clients[y] == [(b.owner, 1)]
    assert fg.clients[b] == [("output", 0)]
    assert fg.toposort() == [a.owner, b.owner]
    fg.check_integrity()


def test_clone_copies_and_keeps_the_map():
    x, y, a, b = build()
    fg = FunctionGraph([x, y], [b])
    assert fg.inputs[0] is not x and fg.inputs[0] is fg.equiv[x]
    assert fg.outputs[0] is fg.equiv[b]
    assert a.owner not in fg.apply_nodes and fg.equiv[a.owner] in fg.apply_nodes
    fg.check_integrity()


def test_outputs_may_be_inputs_constants_or_repeated():
    x = var("x")
    k = Constant(Thing(), 1)
    out = f(x)
    fg = FunctionGraph([x], [x, k, out, out], clone=False)
    assert set(fg.clients[x]) == {(out.owner, 0), ("output", 0)}
    assert fg.clients[out] == [("output", 2), ("output", 3)]
    fg.check_integrity()


def test_unused_inputs_are_kept():
    x, y = var("x"), var("y")
    fg = FunctionGraph([x, y], [f(x)], clone=False)
    assert y in fg.variables and fg.clients[y] == []
    fg.check_integrity()


def test_inputs_must_be_ownerless_and_listed_once():
    x = var("x")
    with pytest.raises(ValueError, match="inputs must be ownerless"):
        FunctionGraph([f(x)], [g(x)], clone=False)
    with pytest.raises(ValueError, match="list each input once"):
        FunctionGraph([x, x], [f(x)], clone=False)


def test_missing_input_error_names_the_variable_and_its_use():
    x, y = var("x"), var("y")
    out = g(f(x), y)
    with pytest.raises(MissingInputError) as info:
        FunctionGraph([x], [out], clone=False)
    message = str(info.value)
    assert "'y'" in message and "label=g" in message and "inputs" in message
    assert info.value.variable is y and info.value.needed_by is out.owner


def test_missing_input_error_from_function():
    x, y = tensor.vector("x"), tensor.vector("y")
    with pytest.raises(MissingInputError, match=r"'y'.*givens="):
        function([x], x + y)


def test_replace_keeps_clients_right_and_prunes_unused_nodes():
    x, y, a, b = build()
    fg = FunctionGraph([x, y], [b], clone=False)
    recorder = Recorder()
    fg.attach_feature(recorder)
    new = g(x)
    old_node = a.owner
    fg.replace(a, new, reason="test")
    assert b.owner.inputs[0] is new
    assert old_node not in fg.apply_nodes and a not in fg.variables and a not in fg.clients
    assert fg.clients[x] == [(new.owner, 0)]
    assert fg.clients[new] == [(b.owner, 0)]
    assert ("import", new.owner) in recorder.events
    assert ("change", b.owner, 0, a, new, "test") in recorder.events
    assert ("prune", old_node) in recorder.events
    assert recorder.events.index(("import", new.owner)) < recorder.events.index(("prune", old_node))
    fg.check_integrity()


def test_replace_an_output_and_a_node_with_several_clients():
    x, y, a, b = build()
    c = f(a, a)
    fg = FunctionGraph([x, y], [b, c], clone=False)
    z = g(y)
    fg.replace(a, z)
    assert c.owner.inputs == [z, z] and b.owner.inputs[0] is z
    assert sorted(i for _, i in fg.clients[z]) == [0, 0, 1]
    fg.replace(c, x)
    assert fg.outputs[1] is x and c.owner not in fg.apply_nodes
    fg.check_integrity()


def test_replace_by_an_expression_of_the_old_variable():
    x, y, a, b = build()
    fg = FunctionGraph([x, y], [b], clone=False)
    wrapped = f(a)
    fg.replace(a, wrapped)
    assert b.owner.inputs[0] is wrapped and wrapped.owner.inputs[0] is a
    assert fg.clients[a] == [(wrapped.owner, 0)]
    fg.check_integrity()


def test_replace_all_and_prune_of_multi_output_nodes():
    x, y = var("x"), var("y")
    p, q = two(x)
    out1, out2 = f(p), g(q)
    fg = FunctionGraph([x, y], [out1, out2], clone=False)
    fg.replace_all([(p, y), (q, y)])
    assert p.owner not in fg.apply_nodes and fg.clients[x] == []
    fg.check_integrity()


def test_partly_used_multi_output_node_stays():
    x, y = var("x"), var("y")
    p, q = two(x)
    fg = FunctionGraph([x, y], [f(p), g(q)], clone=False)
    fg.replace(p, y)
    assert q.owner in fg.apply_nodes and p in fg.variables and fg.clients[p] == []
    fg.check_integrity()


def test_replace_with_another_type_is_refused_and_changes_nothing():
    x, y, a, b = build()
    fg = FunctionGraph([x, y], [b], clone=False)
    with pytest.raises(TypeError, match="cannot replace"):
        fg.replace(a, var("z", kind="other"))
    assert b.owner.inputs[0] is a
    fg.check_integrity()


def test_replace_with_a_graph_needing_a_missing_input_changes_nothing():
    x, y, a, b = build()
    fg = FunctionGraph([x, y], [b], clone=False)
    stranger = f(g(var("stranger")))
    with pytest.raises(MissingInputError, match="stranger"):
        fg.replace(a, stranger)
    assert b.owner.inputs[0] is a and stranger.owner not in fg.apply_nodes
    fg.check_integrity()


def test_replace_of_an_unknown_variable_or_by_itself_does_nothing():
    x, y, a, b = build()
    fg = FunctionGraph([x, y], [b], clone=False)
    fg.replace(var("elsewhere"), x)
    fg.replace(a, a)
    fg.check_integrity()


def test_replace_with_a_constant_drops_it_again_when_unused():
    x, y, a, b = build()
    fg = FunctionGraph([x, y], [b], clone=False)
    k = Constant(Thing(), 5)
    fg.replace(a, k)
    assert k in fg.variables and k in fg.orphans()
    fg.replace(k, x)
    assert k not in fg.variables
    fg.check_integrity()


def test_features_attach_detach():
    x, y, a, b = build()
    recorder = Recorder()
    fg = FunctionGraph([x, y], [b], clone=False, features=[recorder])
    assert recorder.events == [("attach",)]
    fg.remove_feature(recorder)
    fg.replace(a, x)
    assert recorder.events == [("attach",), ("detach",)]


def test_check_integrity_notices_broken_bookkeeping():
    x, y, a, b = build()
    fg = FunctionGraph([x, y], [b], clone=False)
    fg.clients[x].append((b.owner, 5))
    with pytest.raises(ValueError, match="clients of x"):
        fg.check_integrity()


def test_clone_of_a_function_graph_is_independent():
    x, y, a, b = build()
    fg = FunctionGraph([x, y], [b], clone=False)
    copy = fg.clone()
    assert copy.apply_nodes.isdisjoint(fg.apply_nodes)
    copy.replace(copy.outputs[0].owner.inputs[0], copy.inputs[0])
    assert b.owner.inputs[0] is a
    copy.check_integrity()
    fg.check_integrity()


def test_deep_chain_through_function_graph_and_replace(low_recursion_limit):
    x = var("x")
    out = x
    for i in range(DEPTH):
        out = (f if i % 2 else g)(out)
    fg = FunctionGraph([x], [out])
    assert len(fg.apply_nodes) == DEPTH and len(fg.toposort()) == DEPTH
    fg.replace(fg.outputs[0], fg.inputs[0])
    assert fg.apply_nodes == set()
    fg.check_integrity()


def test_deep_tensor_chain_compiles_and_runs(low_recursion_limit):
    x = tensor.dvector("x")
    out = x
    for i in range(DEPTH):
        out = out + 1 if i % 2 else out * 1
    assert np.array_equal(function([x], out)(np.zeros(2)), np.full(2, DEPTH // 2))
    views = x
    for _ in range(DEPTH // 2):
        views = views.dimshuffle("x", 0).dimshuffle(1)
    assert np.array_equal(function([x], views)(np.ones(2)), np.ones(2))
