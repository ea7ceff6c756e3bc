"""Theano's optimizer API under the alias (``theano.gof.opt``, ``toolbox``, ``optdb``,
``theano.tensor.opt.register_*``), run on arignote's rewriting engine."""
import pytest

from arignote import Mode, function, tensor as T
from arignote.compat.theano import opt, optdb as db
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.db import rewrites


def ops_of(fgraph):
    return [str(node.op) for node in fgraph.toposort()]


@pytest.fixture
def registered():
    """Names registered by a test, unregistered after it."""
    names = []
    yield names
    for name in names:
        rewrites.remove(name)


def _div_of_product(node):
    """(a * b) / b -> a and (a * b) / a -> b: the tutorial's simplification."""
    if node.op != T.true_div:
        return False
    num, den = node.inputs
    if num.owner is None or num.owner.op != T.mul or len(num.owner.inputs) != 2:
        return False
    a, b = num.owner.inputs
    return [a] if den is b else [b] if den is a else False


class Simplify(opt.Optimizer):
    def add_requirements(self, fgraph):
        fgraph.attach_feature(opt.ReplaceValidate())

    def apply(self, fgraph):
        for node in fgraph.toposort():
            found = _div_of_product(node)
            if found:
                fgraph.replace_validate(node.outputs[0], found[0], "simplify")


def test_a_global_optimizer_edits_the_graph_and_its_feature_attaches_once():
    x, y, z = T.dscalars("x", "y", "z")
    e = FunctionGraph([x, y, z], [z + (y * x) / y * (z / x)])
    Simplify().optimize(e)
    Simplify()(e)  # calling is optimize: a mode can take one
    assert str(e) == ("[Elemwise{add,no_inplace}(z, Elemwise{mul,no_inplace}(x, "
                      "Elemwise{true_div,no_inplace}(z, x)))]")
    assert sum(isinstance(f, opt.ReplaceValidate) for f in e.features) == 1


def test_local_optimizer_needs_merge_for_equal_subgraphs():
    x, y, z = T.dscalars("x", "y", "z")
    local = opt.local_optimizer([T.true_div])(_div_of_product)
    e = FunctionGraph([x, y, z], [((y + z) * x) / (y + z)])
    opt.TopoOptimizer(local).optimize(e)
    assert "Elemwise{true_div,no_inplace}" in ops_of(e)  # two equal add nodes, not one
    opt.MergeOptimizer().optimize(e)
    opt.TopoOptimizer(local, order="out_to_in").optimize(e)
    assert e.outputs == [e.inputs[0]]


def test_local_optimizer_tracks_are_checked():
    with pytest.raises(TypeError, match=r"local_optimizer\(\[Elemwise"):
        opt.local_optimizer(T.true_div)
    with pytest.raises(ValueError, match="use None"):
        opt.local_optimizer([])


def test_in2out_groups_local_optimizers_and_opsub_opremove():
    x, y = T.dvectors("x", "y")
    e = FunctionGraph([x, y], [T.exp(x + y)])
    opt.in2out(opt.OpSub(T.add, T.mul), opt.OpRemove(T.exp)).optimize(e)
    assert str(e) == "[Elemwise{mul,no_inplace}(x, y)]"
    opt.OpKeyOptimizer(opt.OpSub(T.mul, T.sub)).optimize(e)
    assert ops_of(e) == ["Elemwise{sub,no_inplace}"]
    with pytest.raises(TypeError, match="op_key"):
        opt.OpKeyOptimizer(opt.local_optimizer(None)(_div_of_product))


def _rewrite(fgraph_outputs, inputs, local):
    e = FunctionGraph(inputs, fgraph_outputs)
    opt.TopoOptimizer(local).optimize(e)
    return e


def test_pattern_sub_binds_names_matches_constants_and_checks_constraints():
    x, y = T.dvectors("x", "y")
    cancel = opt.PatternSub((T.true_div, (T.mul, "a", "b"), "b"), "a")
    assert str(_rewrite([(x * y) / y], [x, y], cancel)) == "[x]"
    # a name used twice must find the same variable both times
    assert "true_div" in str(_rewrite([(x * y) / x], [x, y], cancel))
    square = opt.PatternSub((T.pow, "a", 2), (T.sqr, "a"))
    assert str(_rewrite([x ** 2], [x], square)) == "[Elemwise{sqr,no_inplace}(x)]"
    assert "pow" in str(_rewrite([x ** 3], [x], square))
    positive = opt.PatternSub((T.abs, {"pattern": "a", "constraint": lambda v: v.owner is not None
                                       and v.owner.op == T.exp}), "a")
    assert str(_rewrite([abs(T.exp(x))], [x], positive)) == "[Elemwise{exp,no_inplace}(x)]"
    assert "abs" in str(_rewrite([abs(x)], [x], positive))


def test_pattern_sub_leaves_a_subexpression_others_read():
    x, y = T.dvectors("x", "y")
    prod = x * y
    cancel = opt.PatternSub((T.true_div, (T.mul, "a", "b"), "b"), "a")
    e = _rewrite([prod / y, prod + 1], [x, y], cancel)
    assert "Elemwise{true_div,no_inplace}" in ops_of(e)
    shared_ok = opt.PatternSub((T.true_div, (T.mul, "a", "b"), "b"), "a", allow_multiple_clients=True)
    e = _rewrite([prod / y, prod + 1], [x, y], shared_ok)
    assert e.outputs[0] is e.inputs[0]


def test_pattern_sub_errors_name_the_pattern():
    with pytest.raises(TypeError, match=r"must be \(op, subpattern"):
        opt.PatternSub("x", "x")
    x = T.dvector("x")
    unbound = opt.PatternSub((T.exp, "a"), (T.log, "b"))
    with pytest.raises(KeyError, match="'b'"):
        _rewrite([T.exp(x)], [x], unbound)


def test_equilibrium_repeats_until_nothing_changes():
    x = T.dvector("x")
    neg_neg = opt.PatternSub((T.neg, (T.neg, "a")), "a")
    e = FunctionGraph([x], [T.neg(T.neg(T.neg(T.neg(x))))])
    opt.EquilibriumOptimizer([neg_neg], max_use_ratio=10).optimize(e)
    assert e.outputs == e.inputs
    with pytest.raises(TypeError, match="max_use_ratio"):
        opt.EquilibriumOptimizer([neg_neg])


class SinToCos(opt.Optimizer):
    """A rewrite whose effect shows in the values: sin becomes cos."""

    def apply(self, fgraph):
        for node in fgraph.toposort():
            if node.op == T.sin:
                fgraph.replace_validate(node.outputs[0], T.cos(node.inputs[0]), "sin_to_cos")


def test_optdb_registration_runs_in_compiled_functions(registered):
    x = T.dscalar("x")
    assert function([x], T.sin(x))(0.0) == 0.0
    db.optdb.register("test_sin_to_cos", SinToCos(), 0.5, "fast_run")
    registered.append("test_sin_to_cos")
    assert "test_sin_to_cos" in db.optdb
    assert function([x], T.sin(x))(0.0) == 1.0
    excluded = Mode(optimizer="fast_run").excluding("test_sin_to_cos")
    assert function([x], T.sin(x), mode=excluded)(0.0) == 0.0
    assert function([x], T.sin(x), mode="FAST_COMPILE")(0.0) == 0.0  # not tagged fast_compile


def test_register_canonicalize_decorator_forms(registered):
    x = T.dvector("x")

    @db.register_canonicalize
    @opt.local_optimizer([T.neg])
    def test_double_neg(node):
        inner = node.inputs[0].owner
        return [inner.inputs[0]] if inner is not None and inner.op == T.neg else False

    registered.append("test_double_neg")
    assert rewrites.entries["test_double_neg"].phase == "canonicalize"
    f = function([x], T.neg(T.neg(x)) * 2)
    assert not any(str(n.op).startswith("Elemwise{neg") for n in f.maker.fgraph.toposort())

    @db.register_specialize("my_tag", name="test_named")
    @opt.local_optimizer([T.neg])
    def anything(node):
        return False

    registered.append("test_named")
    entry = rewrites.entries["test_named"]
    assert entry.phase == "specialize" and {"fast_run", "my_tag"} <= entry.tags


def test_optdb_query_and_errors(registered):
    x = T.dscalar("x")
    sin_to_cos = opt.local_optimizer([T.sin])(lambda node: [T.cos(node.inputs[0])])
    db.optdb["stabilize"].register("test_stab", sin_to_cos, "fast_run")
    registered.append("test_stab")
    assert rewrites.entries["test_stab"].phase == "stabilize"
    e = FunctionGraph([x], [T.sin(x)])
    db.optdb.query(db.Query(include=["fast_run"])).optimize(e)
    assert ops_of(e) == ["Elemwise{cos,no_inplace}"]
    e = FunctionGraph([x], [T.sin(x)])
    db.optdb.query("+fast_run", "-test_stab").optimize(e)
    assert ops_of(e) == ["Elemwise{sin,no_inplace}"]
    with pytest.raises(KeyError, match="sub-databases are canonicalize"):
        db.optdb["no_such_db"]
    with pytest.raises(TypeError, match="a position"):
        db.optdb.register("test_bad", Simplify(), "fast_run")
    with pytest.raises(ValueError, match="already registered"):
        db.optdb.register("test_stab", Simplify(), 1)
    with pytest.raises(KeyError, match="no rewrite named"):
        rewrites.remove("test_never_registered")


@pytest.mark.parametrize("position, phase", [(0, "canonicalize"), (1.2, "canonicalize"), (1.5, "stabilize"),
                                             (2, "specialize"), (49, "fusion"), (60, "late_fusion"),
                                             (75, "inplace"), (100, "inplace")])
def test_positions_fall_in_theanos_phases(registered, position, phase):
    name = f"test_at_{position}"
    db.optdb.register(name, Simplify(), position, "fast_run")
    registered.append(name)
    assert rewrites.entries[name].phase == phase


def test_a_mode_takes_a_theano_optimizer_object():
    x = T.dscalar("x")
    f = function([x], T.sin(x), mode=Mode(optimizer=opt.SeqOptimizer([opt.MergeOptimizer(), SinToCos()])))
    assert f(0.0) == 1.0


def test_the_alias_maps_theanos_optimizer_modules(theano):
    from theano.gof import toolbox, local_optimizer, TopoOptimizer
    from theano.gof.opt import PatternSub
    from theano.compile import optdb
    from theano.tensor.opt import register_canonicalize
    assert toolbox.ReplaceValidate is opt.ReplaceValidate and local_optimizer is opt.local_optimizer
    assert TopoOptimizer is opt.TopoOptimizer and PatternSub is opt.PatternSub
    assert optdb is db.optdb and register_canonicalize is db.register_canonicalize


def test_a_private_equilibrium_db_gives_an_optimizer_for_a_mode():
    edb = db.EquilibriumDB()
    sin_to_cos = opt.local_optimizer([T.sin])(lambda node: [T.cos(node.inputs[0])])
    edb.register("sin_to_cos", sin_to_cos, "all")
    edb.register("never", opt.local_optimizer([T.exp])(lambda node: [T.log(node.inputs[0])]), "other")
    assert "sin_to_cos" in edb and "sin_to_cos" not in db.optdb
    x = T.dscalar("x")
    f = function([x], T.sin(x) + T.exp(x), mode=Mode(optimizer=edb.query("+all")))
    assert f(0.0) == 2.0  # cos(0) + exp(0): only the tagged optimizer ran
    assert function([x], T.sin(x), mode=Mode(optimizer=edb.query("+all", "-sin_to_cos")))(0.0) == 0.0
    assert function([x], T.sin(x), mode=Mode(optimizer=edb.query("+all", "&other")))(0.0) == 0.0
    with pytest.raises(ValueError, match="already registered"):
        edb.register("sin_to_cos", sin_to_cos)


def test_check_stack_trace_sees_the_user_line_carried_through_rewrites():
    x = T.dvector("x")
    f = function([x], T.exp(T.log(x) * 2) + 1)  # rewritten and fused
    assert opt.check_stack_trace(f) and opt.check_stack_trace(f, ops_to_check="all")
    assert opt.check_stack_trace(f.maker.fgraph, ops_to_check=lambda node: True)
    e = FunctionGraph([x], [T.sin(x)])
    node = e.toposort()[0]
    assert opt.check_stack_trace(e, ops_to_check=[T.sin])
    assert opt.check_stack_trace(e, type(node.op.scalar_op))
    node.outputs[0].tag.trace = None
    assert not opt.check_stack_trace(e, ops_to_check=T.sin)
    with pytest.raises(ValueError, match="no node of"):
        opt.check_stack_trace(e, ops_to_check=[T.cos])
    with pytest.warns(UserWarning, match="no node of"):
        assert opt.check_stack_trace(e, ops_to_check=[T.cos], bug_print="warn")
    assert opt.check_stack_trace(e, ops_to_check=[T.cos], bug_print="ignore")
    with pytest.raises(ValueError, match="'last', 'all'"):
        opt.check_stack_trace(e, ops_to_check="first")
    with pytest.raises(ValueError, match="a compiled function or a FunctionGraph"):
        opt.check_stack_trace([x])


def test_navigators_validate_and_report_refused_replacements_to_the_failure_callback():
    from arignote.graph.errors import InconsistencyError
    from tests.graph._ops import var
    from tests.graph.test_destroyhandler import graph, inplace, pure, pure2

    def fresh():
        x, y = var("x"), var("y")
        return x, graph([x, y], [pure(pure2(pure2(x, y), pure2(x, y)))])

    seen = []
    x, fg = fresh()
    opt.TopoOptimizer(opt.OpSub(pure2, inplace),
                      failure_callback=lambda *args: seen.append(args)).optimize(fg)
    assert fg.consistent() and len(fg.destroyers(x)) == 1
    (error, nav, pairs, local_opt, node), = seen
    assert isinstance(error, InconsistencyError) and isinstance(nav, opt.TopoOptimizer)
    assert isinstance(local_opt, opt.OpSub) and node.op == pure2 and pairs[0][0] is node.outputs[0]
    for quiet in (opt.NavigatorOptimizer.warn_ignore, opt.NavigatorOptimizer.warn_inplace):
        x, fg = fresh()
        opt.TopoOptimizer(opt.OpSub(pure2, inplace), failure_callback=quiet).optimize(fg)
        assert fg.consistent()
    x, fg = fresh()
    with pytest.raises(InconsistencyError):  # no callback: the refusal is raised, the graph unchanged
        opt.TopoOptimizer(opt.OpSub(pure2, inplace)).optimize(fg)
    assert fg.consistent()
    with pytest.warns(UserWarning, match="optimization failure due to"):
        opt.NavigatorOptimizer.warn(ValueError("boom"), None, [], "some_opt", None)
    with pytest.warns(UserWarning, match="boom"):
        opt.NavigatorOptimizer.warn_inplace(ValueError("boom"), None, [], "some_opt", None)


def test_gof_opt_has_theanos_pre_graph_helpers_and_module_names(theano):
    from theano.gof.opt import config, logging, pre_constant_merge, pre_greedy_local_optimizer
    from theano.gof import opt as gof_opt
    from arignote.graph.rewriting.constant_folding import constant_folding  # an engine rewriter passes too
    assert config.floatX in ("float32", "float64") and logging.getLogger
    assert gof_opt.theano is theano
    x = theano.tensor.scalar("x")
    y = x + (theano.tensor.constant(2.0) * 3)
    assert len(pre_constant_merge(y)) == 1
    folded = pre_greedy_local_optimizer([constant_folding], y).owner.inputs[1]
    assert isinstance(folded, theano.gof.Constant) and float(folded.data) == 6.0
