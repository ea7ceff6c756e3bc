"""DestroyHandler: validating graphs with destroying ops, undoing refused replacements."""
from __future__ import annotations

import copy

import pytest

from arignote.graph.basic import Apply, Constant, Op
from arignote.graph.destroyhandler import DestroyHandler
from arignote.graph.fg import FunctionGraph, InconsistencyError
from tests.graph._ops import Thing, var


class Mem(Op):
    """An op with a chosen view_map / destroy_map and tolerations."""

    __props__ = ("label", "nin", "vmap", "dmap", "same", "aliased")

    def __init__(self, label, nin=1, vmap=(), dmap=(), same=(), aliased=()):
        self.label, self.nin = label, nin
        self.vmap, self.dmap, self.same, self.aliased = vmap, dmap, same, aliased
        self.view_map = {o: [i] for o, i in vmap}
        self.destroy_map = {o: [i] for o, i in dmap}
        self.destroyhandler_tolerate_same = list(same)
        self.destroyhandler_tolerate_aliased = list(aliased)

    def make_node(self, *inputs):
        assert len(inputs) == self.nin
        return Apply(self, list(inputs), [Thing()()])

    def __str__(self):
        return self.label


view = Mem("view", vmap=[(0, 0)])
pure = Mem("pure")
pure2 = Mem("pure2", 2)
inplace = Mem("inplace", 2, dmap=[(0, 0)])
inplace_same = Mem("inplace_same", 2, dmap=[(0, 0)], same=[(0, 1)])
inplace_aliased = Mem("inplace_aliased", 2, dmap=[(0, 0)], aliased=[(0, 1)])


def graph(inputs, outputs, validate=True):
    fg = FunctionGraph(inputs, outputs, clone=False)
    fg.attach_feature(DestroyHandler())
    if validate:
        fg.validate()
    return fg


def test_views_alone_are_consistent_and_destroyers_are_named():
    x, y = var("x"), var("y")
    out = inplace(view(view(x)), y)
    fg = graph([x, y], [out])
    assert fg.consistent() and fg.destroyers(x) == [out.owner]
    assert fg.destroyers(y) == []


@pytest.mark.parametrize("build, ok", [
    (lambda x: inplace(x, x), False),
    (lambda x: inplace(x, view(x)), False),
    (lambda x: inplace_same(x, x), True),
    (lambda x: inplace_same(x, view(x)), False),
    (lambda x: inplace_aliased(x, x), True),
    (lambda x: inplace_aliased(x, view(x)), True),
])
def test_an_overwritten_input_aliased_by_another_input(build, ok):
    x = var("x")
    assert graph([x], [build(x)], validate=False).consistent() is ok


def test_a_reader_needing_the_overwritten_memory_later_is_refused():
    x, y = var("x"), var("y")
    fg = graph([x, y], [pure2(pure(inplace(x, y)), view(x))], validate=False)
    assert not fg.consistent()  # pure2 reads view(x), but needs inplace(x, y) first
    with pytest.raises(InconsistencyError, match="must run before inplace"):
        fg.validate()
    ok = graph([x, y], [pure2(inplace(x, y), pure(x))])  # pure(x) can run first
    order = ok.toposort()
    assert [str(n.op) for n in order].index("pure") < [str(n.op) for n in order].index("inplace")


def test_constants_and_indestructible_variables_are_never_overwritten():
    x, y = var("x"), var("y")
    x.tag.indestructible = True
    x2 = copy.copy(x)
    assert x2.tag.indestructible
    assert not graph([x, y], [inplace(view(x), y)], validate=False).consistent()
    c = Constant(Thing(), 3)
    assert not graph([y], [inplace(c, y)], validate=False).consistent()


def test_replace_validate_undoes_a_refused_replacement():
    x, y = var("x"), var("y")
    e1, e2 = pure2(x, y), pure2(y, x)
    fg = graph([x, y], [e1, e2])
    fg.replace_validate(e1, inplace(x, y))
    assert fg.consistent()
    before = [str(o.owner.op) for o in fg.outputs]
    with pytest.raises(InconsistencyError):
        fg.replace_validate(e2, inplace(y, x))  # each would overwrite what the other reads
    assert [str(o.owner.op) for o in fg.outputs] == before and fg.consistent()
    fg.check_integrity()


def test_two_overwriters_of_one_variable_are_refused():
    x, y, z = var("x"), var("y"), var("z")
    fg = graph([x, y, z], [inplace(view(x), y), inplace(x, z)], validate=False)
    with pytest.raises(InconsistencyError, match="both overwrite x"):
        fg.validate()


def test_without_a_validating_feature_replace_validate_is_replace():
    x, y = var("x"), var("y")
    fg = FunctionGraph([x, y], [pure2(x, y)], clone=False)
    fg.replace_validate(fg.outputs[0], inplace(x, x))
    assert fg.consistent() and str(fg.outputs[0].owner.op) == "inplace"


def test_a_walk_with_a_failure_callback_skips_the_replacements_refused():
    """pure2(pure2(x, y), pure2(x, y)) -> inplace: the first node may overwrite x, the
    second then may not (x would be overwritten twice); the walk reports it and goes on."""
    from arignote.graph.rewriting.basic import WalkingRewriter, node_rewriter

    @node_rewriter([Mem])
    def make_inplace(fgraph, node):
        return [inplace(*node.inputs)] if node.op == pure2 else None

    x, y = var("x"), var("y")
    out = pure(pure2(pure2(x, y), pure2(x, y)))
    fg = graph([x, y], [out])
    refused = []
    walk = WalkingRewriter([make_inplace], failure_callback=lambda *args: refused.append(args))
    assert walk.apply(fg) == 2  # the outer node and one of the inner ones
    assert fg.consistent() and len(fg.destroyers(x)) == 1
    (error, walker, pairs, rewriter, node), = refused
    assert isinstance(error, InconsistencyError) and walker is walk and rewriter is make_inplace
    assert node.op == pure2 and pairs[0][0] is node.outputs[0]
