"""``theano.gof`` and the modules of it code imports (``graph``, ``op``, ``type``, ``utils``):
arignote's graph IR under Theano's names."""
from __future__ import annotations

from arignote.graph.basic import Apply, Constant, Op, Type, Variable
from arignote.graph.fg import FunctionGraph, MissingInputError
from arignote.graph.traversal import (ancestors, clone, clone_get_equiv, graph_inputs, io_toposort,
                                      is_same_graph)
from arignote.graph.types import Generic, NullType, generic

__all__ = ["Apply", "Constant", "Op", "PureOp", "Type", "Variable", "FunctionGraph",
           "MissingInputError", "ancestors", "clone", "clone_get_equiv", "inputs", "io_toposort", "is_same_graph",
           "variables", "ops", "Generic", "generic", "NullType", "MethodNotDefined"]

PureOp = Op
# Theano raised MethodNotDefined for an interface method an op lacks (``grad``, ``perform``);
# arignote raises NotImplementedError there, which this name catches.
MethodNotDefined = NotImplementedError
inputs = graph_inputs


class PerformLinker:
    """Theano's linkers of a FunctionGraph (``PerformLinker``, ``DualLinker``, ...):
    ``linker.accept(fgraph).make_function()`` compiles the graph with ``function``. arignote
    has one implementation of each op, so DualLinker (Theano's C-versus-Python check) has
    nothing to compare, and all of them run the same compiled function."""

    def __init__(self, *args: object, **kwargs: object):
        self.fgraph: FunctionGraph | None = None

    def accept(self, fgraph: FunctionGraph, no_recycling: object = None) -> PerformLinker:
        self.fgraph = fgraph
        return self

    def make_function(self, unpack_single: bool = True, **kwargs: object) -> object:
        from arignote.compile.function import function

        if self.fgraph is None:
            raise TypeError("make_function before accept(fgraph): give the linker its graph first")
        fn = function(list(self.fgraph.inputs), list(self.fgraph.outputs), on_unused_input="ignore")

        def run(*args: object) -> object:
            out = fn(*args)
            return out[0] if unpack_single and len(out) == 1 else out
        return run


DualLinker = OpWiseCLinker = CLinker = PerformLinker
__all__ += ["PerformLinker", "DualLinker", "OpWiseCLinker", "CLinker"]


def variables(i: list, o: list) -> list:
    """Every variable between inputs ``i`` and outputs ``o`` (Theano's ``gof.graph.variables``)."""
    nodes = io_toposort(i, o)
    found = list(i) + [v for node in nodes for v in node.inputs + node.outputs]
    return list(dict.fromkeys(found))


def ops(i: list, o: list) -> set:
    """The Apply nodes between ``i`` and ``o``."""
    return set(io_toposort(i, o))
