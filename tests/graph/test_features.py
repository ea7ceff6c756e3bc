"""Graph features: NodeFinder keeps fgraph.get_nodes(op) current through edits; History undoes them;
PreserveNames keeps names; PrintListener shows them; Bookkeeper replays the nodes already there."""
from __future__ import annotations

import pytest

from arignote.graph.features import Bookkeeper, History, NodeFinder, PreserveNames, PrintListener
from arignote.graph.fg import FunctionGraph
from tests.graph._ops import Combine, f, g, var


def test_node_finder_tracks_imports_and_prunes():
    x, y = var("x"), var("y")
    a = f(x)
    b = g(a, y)
    out = f(b, f(y))
    fg = FunctionGraph([x, y], [out], clone=False)
    fg.attach_feature(NodeFinder())
    assert len(fg.get_nodes(f)) == 3 and fg.get_nodes(g) == [b.owner]
    assert fg.get_nodes(Combine("h")) == []
    replacement = Combine("h")(a, y)
    fg.replace(b, replacement)
    assert fg.get_nodes(g) == [] and fg.get_nodes(Combine("h")) == [replacement.owner]
    assert len(fg.get_nodes(f)) == 3


def test_node_finder_once_per_graph_and_detaches():
    x = var("x")
    fg = FunctionGraph([x], [f(x)], clone=False)
    finder = NodeFinder()
    fg.attach_feature(finder)
    with pytest.raises(ValueError, match="another graph"):
        FunctionGraph([x], [g(x)], clone=False).attach_feature(finder)
    fg.remove_feature(finder)
    assert not hasattr(fg, "get_nodes")


def test_bookkeeper_sees_the_nodes_already_there_on_attach_and_detach():
    class Seen(Bookkeeper):
        def __init__(self):
            self.events = []

        def on_import(self, fgraph, node, *reason):
            self.events.append(("import", node.op.label, reason))

        def on_prune(self, fgraph, node, *reason):
            self.events.append(("prune", node.op.label, reason))
    x = var("x")
    fg = FunctionGraph([x], [g(f(x))], clone=False)
    seen = Seen()
    fg.attach_feature(seen)
    assert seen.events == [("import", "f", ("on_attach",)), ("import", "g", ("on_attach",))]
    fg.remove_feature(seen)
    assert [e[:2] for e in seen.events[2:]] == [("prune", "g"), ("prune", "f")]


def test_history_reverts_to_a_checkpoint_and_brings_pruned_nodes_back():
    x, y = var("x"), var("y")
    a = f(x)
    out = g(a, y)
    fg = FunctionGraph([x, y], [out], clone=False)
    fg.attach_feature(History())
    start = fg.checkpoint()
    fg.replace(a, f(y))
    middle = fg.checkpoint()
    fg.replace(out, Combine("h")(y))
    assert a.owner not in fg.apply_nodes and fg.outputs[0].owner.op == Combine("h")
    fg.revert(middle)
    assert fg.outputs[0] is out and out.owner.inputs[0].owner.inputs == [y]
    fg.revert(start)
    assert fg.outputs == [out] and out.owner.inputs == [a, y] and a.owner in fg.apply_nodes
    assert fg.checkpoint() == start  # undoing is not recorded
    with pytest.raises(ValueError, match="checkpoint 5"):
        fg.revert(5)
    with pytest.raises(ValueError, match="another History"):
        fg.attach_feature(History())


def test_preserve_names_names_an_unnamed_replacement():
    x = var("x")
    a = f(x)
    a.name = "a"
    fg = FunctionGraph([x], [g(a)], clone=False)
    fg.attach_feature(PreserveNames())
    new, named = f(x, x), f(x)
    named.name = "mine"
    fg.replace(a, new)
    assert new.name == "a"
    fg.replace(new, named)
    assert named.name == "mine"


def test_print_listener_shows_each_change(capsys):
    x = var("x")
    a = f(x)
    fg = FunctionGraph([x], [g(a)], clone=False)
    listener = PrintListener()
    fg.attach_feature(listener)
    fg.replace(a, Combine("h")(x), reason="my_rewrite")
    text = capsys.readouterr().out
    assert text.startswith("-- attached to ")
    h, f_ = "Combine{label=h, nout=1}", "Combine{label=f, nout=1}"
    assert text.splitlines()[1:] == [
        f"-- imported {h}(x)",
        f"-- changed input 0 of Combine{{label=g, nout=1}}({h}.0) from {f_}.0 to {h}.0 (my_rewrite)",
        f"-- pruned {f_}(x)"]
    listener.active = False
    fg.replace(fg.outputs[0], f(x))
    assert capsys.readouterr().out == ""


def test_theano_gof_exports_the_features():
    from arignote.compat.theano import gof, toolbox
    assert gof.History is History and toolbox.PrintListener is PrintListener and gof.Bookkeeper is Bookkeeper
    x = var("x")
    fg = FunctionGraph([x], [f(x)], clone=False)
    fg.attach_feature(toolbox.Validator())  # a sound graph: nothing raised


def test_no_output_from_inplace_refuses_a_replacement_that_makes_an_output_overwrite_an_input():
    from arignote.graph.basic import Apply, Op
    from arignote.graph.errors import InconsistencyError
    from arignote.graph.features import NoOutputFromInplace

    class Destroy(Op):
        __props__ = ()
        destroy_map = {0: [0]}

        def make_node(self, v):
            return Apply(self, [v], [v.type()])

    x = var("x")
    mid = f(x)
    fg = FunctionGraph([x], [f(mid), mid], clone=False)
    fg.attach_feature(NoOutputFromInplace(0, 1))
    inner = fg.outputs[0]
    with pytest.raises(InconsistencyError, match="NoOutputFromInplace"):
        fg.replace_validate(inner, Destroy()(mid))
    assert fg.outputs[0] is inner  # undone
    fg.replace_validate(mid, Destroy()(f(x)))  # output 1 is outside the slice it guards
