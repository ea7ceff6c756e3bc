"""The rewriting engine: passes, equilibrium bounds, merge, constant folding, the database."""
import warnings

import numpy as np
import pytest

from arignote import tensor as T
from arignote.graph import FunctionGraph
from arignote.graph.basic import Constant
from arignote.graph.rewriting import (EquilibriumRewriter, MergeRewriter, in_to_out, node_rewriter,
                                      out_to_in, rewrite_graph)
from arignote.graph.rewriting.basic import RewritePhaseStopped
from arignote.graph.rewriting.constant_folding import constant_folding
from arignote.graph.rewriting.db import RewriteDatabase
from arignote.tensor.elemwise import Elemwise


def _ops(fgraph):
    return [str(n.op) for n in fgraph.toposort()]


def test_merge_computes_equal_subgraphs_once():
    x = T.dvector("x")
    y = T.exp(x) * T.exp(x) + T.exp(x)
    fg = FunctionGraph([x], [y])
    assert _ops(fg).count("Elemwise{exp,no_inplace}") == 3
    assert MergeRewriter().apply(fg) > 0
    assert _ops(fg).count("Elemwise{exp,no_inplace}") == 1


def test_merge_unifies_equal_constants_and_keeps_distinct_ones():
    x = T.dvector("x")
    fg = FunctionGraph([x], [(x + 2.0) * (x + 2.0) + 3.0])
    MergeRewriter().apply(fg)
    adds = [n for n in fg.toposort() if str(n.op) == "Elemwise{add,no_inplace}"]
    assert len(adds) == 2  # x + 2 merged; the final + 3 stays


def test_merge_keeps_apart_equal_nodes_whose_output_types_differ():
    """A node rebuilt on a constant length keeps its old output type (clone_with_new_inputs),
    while one built on it directly knows the dimension is broadcastable: merging one into the
    other would replace a variable by one of another type (it raised TypeError)."""
    x, n = T.dvector("x"), T.lscalar("n")
    one = T.constant(1, dtype="int64")
    rebuilt = T.alloc(0.0, n, x.shape[0]).owner.clone_with_new_inputs(
        [T.constant(0.0), one, x.shape[0]]).outputs[0]
    fresh = T.alloc(0.0, one, x.shape[0])
    assert rebuilt.type != fresh.type
    fg = FunctionGraph([x], [rebuilt + x, fresh * x])
    MergeRewriter().apply(fg)
    allocs = [n.outputs[0].type for n in fg.toposort() if n.op == fresh.owner.op]
    assert sorted(map(str, allocs)) == sorted([str(rebuilt.type), str(fresh.type)])


def test_constant_folding_computes_constant_subgraphs():
    x = T.dvector("x")
    fg = FunctionGraph([x], [x + T.exp(T.constant(np.arange(3.0))) * 2])
    EquilibriumRewriter([constant_folding]).apply(fg)
    (node,) = fg.toposort()
    folded = [i for i in node.inputs if isinstance(i, Constant)]
    assert len(folded) == 1
    np.testing.assert_allclose(folded[0].data, np.exp(np.arange(3.0)) * 2)


def test_constant_folding_respects_foldable_false():
    class NoFold(Elemwise):
        foldable = False
    op = NoFold(T.math.elemwise_of("exp").scalar_op)
    fg = FunctionGraph([], [op(T.constant(np.ones(2)))])
    EquilibriumRewriter([constant_folding]).apply(fg)
    assert len(fg.apply_nodes) == 1


def _count_calls():
    seen = []

    @node_rewriter([Elemwise])
    def record(fgraph, node):
        seen.append(str(node.op))
        return None
    return seen, record


def test_walk_orders():
    x = T.dvector("x")
    seen, record = _count_calls()
    in_to_out(record).apply(FunctionGraph([x], [T.log(T.exp(x))]))
    assert seen == ["Elemwise{exp,no_inplace}", "Elemwise{log,no_inplace}"]
    seen2, record2 = _count_calls()
    out_to_in(record2).apply(FunctionGraph([x], [T.log(T.exp(x))]))
    assert seen2 == ["Elemwise{log,no_inplace}", "Elemwise{exp,no_inplace}"]


def test_node_rewriter_replaces_and_keeps_values():
    @node_rewriter([Elemwise])
    def log_exp(fgraph, node):
        if node.op.scalar_op.name == "log" and node.inputs[0].owner is not None \
                and getattr(node.inputs[0].owner.op, "scalar_op", None) is not None \
                and node.inputs[0].owner.op.scalar_op.name == "exp":
            return [node.inputs[0].owner.inputs[0]]
        return None
    x = T.dvector("x")
    out = rewrite_graph(T.log(T.exp(x)) + 1, EquilibriumRewriter([log_exp]))
    assert "log" not in str(out.owner.inputs) and out.owner.inputs[0] is x


def test_equilibrium_stops_a_rewrite_that_keeps_growing_the_graph():
    @node_rewriter([Elemwise], name="grow")
    def grow(fgraph, node):
        if node.op.scalar_op.name == "exp":
            return [T.exp(node.inputs[0]) + 0]  # always a "new" exp: never converges
        return None
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    with pytest.warns(RewritePhaseStopped, match=r"'canonicalize' stopped early: the graph grew .* most by 'grow' "
                      r"\(\+\d+ nodes\).*mode.excluding\('grow'\)"):
        EquilibriumRewriter([grow, constant_folding], max_passes=1000, max_growth=4, name="canonicalize").apply(fg)
    assert len(fg.apply_nodes) <= 400
    with pytest.warns(RewritePhaseStopped, match="still changed the graph after 3 passes, most by 'grow'"):
        EquilibriumRewriter([grow], max_passes=3, max_growth=1000).apply(FunctionGraph([x], [T.exp(x)]))


def test_equilibrium_lets_a_first_pass_expand_past_the_bound_and_finish():
    """A one-off expansion (each node written out once, as shape formulas are) then
    folded back by the next passes is not a runaway: the phase runs to its end."""
    @node_rewriter([Elemwise], name="expand")
    def expand(fgraph, node):
        arg = node.inputs[0].owner
        if node.op.scalar_op.name == "exp" and arg is not None and str(arg.op) == "Elemwise{add,no_inplace}":
            out = T.exp(node.inputs[0] * 1)  # exp(x + i) -> log(exp(...)) eight layers deep
            for _ in range(8):
                out = T.log(T.exp(out))
            return [out]
        return None

    @node_rewriter([Elemwise], name="fold")
    def fold(fgraph, node):
        inner = node.inputs[0].owner
        if node.op.scalar_op.name == "log" and inner is not None and str(inner.op) == "Elemwise{exp,no_inplace}":
            return [inner.inputs[0]]
        return None
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x + i) for i in range(20)])
    start = len(fg.apply_nodes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EquilibriumRewriter([expand, fold], max_growth=4).apply(fg)
    assert len(fg.apply_nodes) < start * 4


def test_replacement_with_wrong_type_is_refused():
    @node_rewriter([Elemwise])
    def bad(fgraph, node):
        return [T.cast(node.outputs[0], "float32")]
    x = T.dvector("x")
    with pytest.raises(TypeError, match="replaced"):
        in_to_out(bad).apply(FunctionGraph([x], [T.exp(x)]))


def test_database_selects_by_tag_and_excludes():
    db = RewriteDatabase()
    seen, record = _count_calls()
    db.register(record, "canonicalize", "fast_run", name="record")
    x = T.dvector("x")
    db.query(["fast_compile"]).apply(FunctionGraph([x], [T.exp(x)]))
    assert seen == []
    db.query(["fast_run"], exclude=["record"]).apply(FunctionGraph([x], [T.exp(x)]))
    assert seen == []
    db.query(["fast_run"]).apply(FunctionGraph([x], [T.exp(x)]))
    assert seen
    with pytest.raises(ValueError, match="already registered"):
        db.register(record, "canonicalize", name="record")
    with pytest.raises(ValueError, match="unknown phase"):
        db.register(record, "sometime")


def test_position_cutoff_keeps_the_phases_before_it():
    """Theano's positions: canonicalize 1, stabilize 1.5, specialize 2; a mode's ``_optimizer``
    is its selection as a Query, and setting its cutoff drops the later phases."""
    from arignote import function
    from arignote.compile.mode import FAST_RUN
    from arignote.graph.rewriting.db import Query

    x = T.dvector("x")
    out = T.log(1 + x) + x ** 2  # log1p in stabilize, x ** 2 -> sqr in specialize
    names = lambda f: {n.op.scalar_op.name for n in f.maker.fgraph.toposort()}  # noqa: E731
    mode = FAST_RUN.excluding("fusion")
    mode._optimizer.position_cutoff = 1.50001
    assert names(function([x], out, mode=mode)) == {"log1p", "pow", "add"}
    assert names(function([x], out, mode=mode.excluding("inplace"))) == {"log1p", "pow", "add"}  # kept
    assert FAST_RUN.position_cutoff == np.inf
    assert {"sqr", "log1p"} <= names(function([x], out, mode=FAST_RUN.excluding("fusion")))
    mode._optimizer = Query(["canonicalize"])
    assert names(function([x], out, mode=mode)) == {"log", "add", "pow"}
    assert mode._optimizer.include == ("canonicalize",)
    with pytest.raises(TypeError, match="takes a Query"):
        mode._optimizer = "fast_run"
