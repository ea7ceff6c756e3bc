"""Rewriting a graph no FunctionGraph holds yet (Theano's pre_constant_merge and
pre_greedy_local_optimizer): rebuilt, never edited in place."""
import numpy as np

from arignote import tensor as T
from arignote.graph.basic import Constant
from arignote.graph.rewriting.constant_folding import constant_folding
from arignote.graph.rewriting.detached import merge_constants, rewrite_greedily
from arignote.graph.traversal import graph_inputs


def test_merge_constants_makes_equal_constants_one_and_leaves_the_old_graph_alone():
    x = T.vector("x")
    a, b = T.constant(np.float64(2.0)), T.constant(np.float64(2.0))
    y = x * a + x * b
    (merged,) = merge_constants([y])
    assert [c for c in graph_inputs([merged]) if isinstance(c, Constant)] == [a]
    assert b in graph_inputs([y])  # the graph given was not edited


def test_merge_constants_returns_an_unchanged_graph_as_it_was():
    x = T.vector("x")
    y = T.exp(x) + 1
    assert merge_constants([y]) == [y]


def test_rewrite_greedily_folds_constant_subgraphs_inputs_first():
    x = T.scalar("x")
    two = T.constant(np.float64(2.0))
    y = x * (two + two) * 3
    out = rewrite_greedily([constant_folding], y)
    folded = out.owner.inputs[0].owner.inputs[1]
    assert isinstance(folded, Constant) and float(folded.data) == 4.0
    assert isinstance(rewrite_greedily([constant_folding], two * 3), Constant)
