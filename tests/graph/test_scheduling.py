"""Ordering nodes by preferences: dependence, posort, _toposort, schedules."""
from __future__ import annotations

import itertools

import pytest

from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.scheduling import (_toposort, key_to_cmp, make_dependence_cmp, make_depends, posort,
                                       reverse_dict, sort_apply_nodes, sort_schedule_fn)
from arignote.graph.traversal import io_toposort
from tests.graph._ops import Combine, var


def chain_and_side():
    """x -> p -> q -> r, and an independent s(x); labels sort s < q < p < r."""
    x = var("x")
    p = Combine("p")(x)
    q = Combine("q")(p)
    r = Combine("r")(q)
    s = Combine("s")(x)
    return x, [p, q, r, s]


def label(node: Apply) -> str:
    return node.op.label


def test_depends_follows_chains_both_ways():
    x, (p, q, r, s) = chain_and_side()
    depends = make_depends()
    assert depends((r.owner, p.owner)) and depends((q.owner, p.owner))
    assert not depends((p.owner, r.owner))
    assert not depends((s.owner, p.owner)) and not depends((p.owner, s.owner))


def test_dependence_cmp_signs():
    x, (p, q, r, s) = chain_and_side()
    dep = make_dependence_cmp()
    assert dep(p.owner, r.owner) == -1
    assert dep(r.owner, p.owner) == 1
    assert dep(p.owner, s.owner) == 0


def test_reverse_dict_collects_keys_per_value():
    assert reverse_dict({"a": (1, 2), "b": [2], "c": ()}) == {1: ("a",), 2: ("a", "b")}


def test_toposort_puts_each_node_before_its_successors():
    edges = {"w": {"x", "y"}, "x": {"z"}, "y": {"z"}, "q": {"w"}}
    order = _toposort(edges)
    assert sorted(order) == ["q", "w", "x", "y", "z"]
    for a, succ in edges.items():
        assert all(order.index(a) < order.index(b) for b in succ)


def test_toposort_refuses_a_cycle():
    with pytest.raises(ValueError, match="cycle"):
        _toposort({1: {2}, 2: {3}, 3: {1}})


def test_posort_with_a_total_order_sorts():
    assert posort([5, 3, 9, 1], key_to_cmp(lambda v: v)) == [1, 3, 5, 9]


def test_posort_later_cmps_only_break_ties():
    words = ["bb", "a", "ccc", "dd", "e"]
    by_length = key_to_cmp(len)
    reverse_alpha = key_to_cmp(lambda w: [-ord(c) for c in w])
    assert posort(words, by_length, reverse_alpha) == ["e", "a", "dd", "bb", "ccc"]


def test_posort_keeps_the_first_cmp_when_a_later_one_contradicts_it():
    first = key_to_cmp(lambda v: v % 3)      # 3 before 1 before 2
    second = key_to_cmp(lambda v: -v)        # would put 3 first anyway, 2 before 1
    assert posort([1, 2, 3], first, second) == [3, 1, 2]


def test_sort_apply_nodes_obeys_only_the_given_cmps():
    x, (p, q, r, s) = chain_and_side()
    nodes = sort_apply_nodes([x], [r, s], [key_to_cmp(label)])
    assert [label(n) for n in nodes] == ["p", "q", "r", "s"]


def test_sort_schedule_fn_keeps_dependencies_first():
    x, (p, q, r, s) = chain_and_side()
    # reverse labels want r before q before p; the dependencies forbid it, and s has none
    schedule = sort_schedule_fn(key_to_cmp(lambda n: [-ord(c) for c in label(n)]))
    order = schedule(FunctionGraph([x], [r, s], clone=False))
    assert order.index(p.owner) < order.index(q.owner) < order.index(r.owner)
    assert order[0] is s.owner
    assert set(order) == set(io_toposort([x], [r, s]))


def test_schedule_is_valid_for_every_tie_break():
    x = var("x")
    nodes = [Combine(c)(x) for c in "abc"]
    tops = [Combine("t")(a, b) for a, b in itertools.combinations(nodes, 2)]
    for key in (label, lambda n: -ord(label(n)[0])):
        order = sort_schedule_fn(key_to_cmp(key))(FunctionGraph([x], tops, clone=False))
        seen: set = set()
        for node in order:
            assert all(v.owner is None or v.owner in seen for v in node.inputs)
            seen.add(node)
