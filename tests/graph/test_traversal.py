"""Walking and copying graphs: ancestors, graph_inputs, io_toposort, clone."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arignote.graph.basic import Constant
from arignote.graph.traversal import ancestors, clone, clone_get_equiv, graph_inputs, io_toposort
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
