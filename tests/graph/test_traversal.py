"""Walking and copying graphs: ancestors, graph_inputs, io_toposort, clone."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arignote.graph.basic import Constant
import pytest

from arignote.graph.basic import Variable
from arignote.graph.traversal import (ancestors, clone, clone_get_equiv, general_toposort, graph_inputs,
                                      io_toposort, is_in_ancestors, orphans, stack_search, view_roots)
from tests.graph._ops import Thing, f, g, two, var

DEPTH = 5000


def diamond():
    x, y = var("x"), var("y")
    a = f(x)
    b = g(a, y)
    c = f(a, b)
    return x, y, a, b, c


def test_ancestors_lists_outputs_first_and_stops_at_blockers():
    x, y, a, b, c = diamond()
    found = ancestors([c])
    assert found[0] is c and set(found) == {x, y, a, b, c}
    assert len(found) == len(set(found))
    assert set(ancestors([c], blockers=[b])) == {c, a, b, x}


def test_graph_inputs():
    x, y, a, b, c = diamond()
    k = Constant(Thing(), 3)
    assert set(graph_inputs([c])) == {x, y}
    assert set(graph_inputs([f(c, k)])) == {x, y, k}
    assert set(graph_inputs([c], blockers=[a])) == {a, y}


def test_io_toposort_orders_each_node_after_its_inputs():
    x, y, a, b, c = diamond()
    order = io_toposort([x, y], [c])
    assert order == [a.owner, b.owner, c.owner]
    assert io_toposort([a, y], [c]) == [b.owner, c.owner]
    assert io_toposort([x], [x]) == []


def test_io_toposort_with_multi_output_nodes_lists_each_node_once():
    x = var("x")
    p, q = two(x)
    out = f(p, q, g(q))
    order = io_toposort([x], [out, p])
    assert order.count(p.owner) == 1 and len(order) == 3
    assert order.index(p.owner) < order.index(out.owner)


@given(st.lists(st.lists(st.integers(0, 1000), min_size=1, max_size=3), min_size=1, max_size=30))
def test_io_toposort_on_random_dags(spec):
    """Node k takes inputs among the earlier variables (picked by index modulo)."""
    variables = [var("x0"), var("x1")]
    for picks in spec:
        variables.append(f(*[variables[p % len(variables)] for p in picks]))
    order = io_toposort(variables[:2], [variables[-1]])
    position = {node: k for k, node in enumerate(order)}
    assert len(position) == len(order)
    for node in order:
        for inp in node.inputs:
            if inp.owner is not None:
                assert position[inp.owner] < position[node]
    assert set(order) == {v.owner for v in ancestors([variables[-1]]) if v.owner is not None}


def test_clone_copies_nodes_and_inputs():
    x, y, a, b, c = diamond()
    (x2, y2), (c2,) = clone([x, y], [c])
    assert x2 is not x and x2.name == "x" and c2 is not c
    assert set(graph_inputs([c2])) == {x2, y2}
    assert c2.owner.op == c.owner.op


def test_clone_without_copying_inputs_shares_them():
    x, y, a, b, c = diamond()
    (x2, y2), (c2,) = clone([x, y], [c], copy_inputs=False)
    assert x2 is x and set(graph_inputs([c2])) == {x, y}


def test_clone_get_equiv_maps_every_variable_and_node():
    x, y, a, b, c = diamond()
    equiv = clone_get_equiv([x, y], [c])
    for old in (x, y, a, b, c):
        assert equiv[old] is not old and equiv[old].type == old.type
    for old in (a, b, c):
        assert equiv[old.owner].outputs[0] is equiv[old]
    named = f(x)
    named.name = "named"
    assert clone_get_equiv([x], [named])[named].name == "named"


def test_clone_get_equiv_replace_substitutes_without_copying():
    x, y, a, b, c = diamond()
    z = var("z")
    equiv = clone_get_equiv([x, y], [c], copy_inputs=False, replace={a: z})
    assert equiv[a] is z
    c2 = equiv[c]
    assert set(graph_inputs([c2])) == {z, y}
    assert x not in ancestors([c2])


def test_clone_copies_constants():
    k = Constant(Thing(), 7)
    x = var("x")
    out = f(x, k)
    equiv = clone_get_equiv([x], [out], copy_inputs=False)
    assert equiv[k] is not k and equiv[k].data == 7


def chain(depth: int):
    x = var("x")
    out = x
    for i in range(depth):
        out = (f if i % 2 else g)(out)
    return x, out


def test_deep_graphs_do_not_recurse(low_recursion_limit):
    x, out = chain(DEPTH)
    assert len(ancestors([out])) == DEPTH + 1
    assert graph_inputs([out]) == [x]
    order = io_toposort([x], [out])
    assert len(order) == DEPTH and order[-1] is out.owner
    (x2,), (out2,) = clone([x], [out])
    assert len(io_toposort([x2], [out2])) == DEPTH


def _deps(obj):
    """Variables need their owner, nodes their inputs (Theano's usual ``deps``)."""
    if isinstance(obj, Variable):
        return [obj.owner] if obj.owner is not None else None
    return obj.inputs


def test_general_toposort_places_each_object_after_what_it_needs():
    x, y, a, b, c = diamond()
    order = general_toposort([c], _deps)
    assert set(order) == {x, y, a, b, c, a.owner, b.owner, c.owner}
    for obj in order:
        for req in _deps(obj) or ():
            assert order.index(req) < order.index(obj)
    # what needs nothing comes first, as a depth-first walk from the outputs meets it
    r1, r2, r5 = var("r1"), var("r2"), var("r5")
    o = f(r1, r2)
    o2 = f(o, r5)
    assert general_toposort([o2], _deps) == [r5, r2, r1, o.owner, o, o2.owner, o2]
    twice = f(r1, r1)
    assert general_toposort([twice], _deps) == [r1, twice.owner, twice]


def test_general_toposort_refuses_a_cycle():
    with pytest.raises(ValueError, match="cycle"):
        general_toposort(["a"], {"a": ["b"], "b": ["a"]}.get)


def test_stack_search_breadth_and_depth_first():
    tree = {1: [2, 3], 2: [4], 3: [5], 4: [], 5: [1]}
    assert stack_search([1], tree.get) == [1, 2, 3, 4, 5]
    assert stack_search([1], tree.get, mode="dfs") == [1, 3, 5, 2, 4]
    with pytest.raises(ValueError, match="'bfs' or 'dfs'"):
        stack_search([1], tree.get, mode="depth")


def test_orphans_and_is_in_ancestors():
    x, y, a, b, c = diamond()
    k = Constant(Thing(), 3)
    out = f(c, k)
    assert orphans([x, y], [out]) == [k]
    assert set(orphans([x], [out])) == {y, k}
    assert is_in_ancestors(c.owner, a.owner) and is_in_ancestors(out.owner, b.owner)
    assert not is_in_ancestors(a.owner, c.owner)


class _View(type(f)):
    """Its output views its first input."""

    view_map = {0: [0]}


def test_view_roots_follow_view_maps():
    x, y = var("x"), var("y")
    v = _View("v")(x, y)
    assert view_roots(v) == [x]
    assert view_roots(_View("w")(v)) == [x]
    assert view_roots(f(x)) != [x] and view_roots(x) == [x]


def test_clone_copies_orphans_as_told():
    x, k = var("x"), Constant(Thing(), 3)
    out = f(x, k)
    _, (new,) = clone([x], [out], copy_inputs=False)
    assert new.owner.inputs[0] is x and new.owner.inputs[1] is not k  # a constant is copied by default
    _, (kept,) = clone([x], [out], copy_inputs=False, copy_orphans=False)
    assert kept.owner.inputs[1] is k
    y = var("y")
    _, (both,) = clone([x], [f(x, y)], copy_inputs=True, copy_orphans=False)
    assert both.owner.inputs[0] is not x and both.owner.inputs[1] is y


def test_auto_names_count_every_variable_made():
    first = int(var("a").auto_name.split("_")[1])
    b, c = var("b"), var("c")
    assert (b.auto_name, c.auto_name) == (f"auto_{first + 1}", f"auto_{first + 2}")
    assert b.clone().auto_name == f"auto_{first + 3}"
