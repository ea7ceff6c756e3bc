"""``theano.gof.toolbox``: the optimizer toolbox of compat/theano/opt.py plus the graph
features of graph/features.py."""
from __future__ import annotations

from typing import Any

from arignote.compat.theano import opt
from arignote.compat.theano.opt import *  # noqa: F403  (Theano's toolbox names live there)
from arignote.graph.features import Bookkeeper, History, NodeFinder, NoOutputFromInplace, PreserveNames, PrintListener

__all__ = [*opt.__all__, "Bookkeeper", "History", "NodeFinder", "PreserveNames", "PrintListener", "Validator",
           "NoOutputFromInplace"]


class Validator:
    """Theano's feature that gave a graph ``validate()`` and ``consistent()``. Every
    FunctionGraph here has both, asking its features with a ``validate`` (the
    DestroyHandler); attaching this one checks that the graph is sound now."""

    def on_attach(self, fgraph: Any) -> None:
        fgraph.validate()
