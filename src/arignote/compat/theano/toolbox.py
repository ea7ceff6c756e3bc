"""``theano.gof.toolbox``: the optimizer toolbox of compat/theano/opt.py plus the graph
features of graph/features.py."""
from __future__ import annotations

from arignote.compat.theano import opt
from arignote.compat.theano.opt import *  # noqa: F403  (Theano's toolbox names live there)
from arignote.graph.features import NodeFinder

__all__ = [*opt.__all__, "NodeFinder"]
