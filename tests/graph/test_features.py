"""Graph features: NodeFinder keeps fgraph.get_nodes(op) current through edits."""
from __future__ import annotations

import pytest

from arignote.graph.features import NodeFinder
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
