"""``theano.gof`` and the modules of it code imports (``graph``, ``op``, ``type``, ``utils``):
arignote's graph IR under Theano's names."""
from __future__ import annotations


from arignote.compat.theano import opt as toolbox
from arignote.compat.theano.opt import (EquilibriumOptimizer, LocalOptimizer, MergeOptimizer, OpRemove, OpSub,
                                        Optimizer, PatternSub, SeqOptimizer, TopoOptimizer, local_optimizer,
                                        optimizer)
from arignote.compat.theano.optdb import EquilibriumDB, Query, SequenceDB
from arignote.graph.basic import Apply, Constant, Op, Type, Variable
from arignote.graph.fg import FunctionGraph, MissingInputError
from arignote.graph.traversal import (ancestors, as_string, clone, clone_get_equiv, general_toposort,
                                      graph_inputs, io_toposort, is_in_ancestors, is_same_graph, orphans,
                                      stack_search, view_roots)
from arignote.graph.types import Generic, NullType, generic

__all__ = ["Apply", "Constant", "Op", "PureOp", "Type", "Variable", "FunctionGraph", "MissingInputError",
           "ancestors", "clone", "clone_get_equiv", "inputs", "io_toposort", "is_same_graph", "variables",
           "ops", "Generic", "generic", "NullType", "MethodNotDefined", "general_toposort", "stack_search",
           "orphans", "variables_and_orphans", "ops_and_orphans", "view_roots", "list_of_nodes",
           "is_in_ancestors", "as_string", "toolbox", "EquilibriumOptimizer", "LocalOptimizer",
           "MergeOptimizer", "OpRemove", "OpSub", "Optimizer", "PatternSub", "SeqOptimizer",
           "TopoOptimizer", "local_optimizer", "optimizer", "EquilibriumDB", "Query", "SequenceDB"]

PureOp = Op
# Theano raised MethodNotDefined for an interface method an op lacks (``grad``, ``perform``);
# arignote raises NotImplementedError there, which this name catches.
MethodNotDefined = NotImplementedError
inputs = graph_inputs


def get_test_value(v: object) -> object:
    """Theano's ``gof.op.get_test_value``: ``v``'s test value (a constant's data, a shared
    variable's value, ``tag.test_value``); a number or array is made a constant first.
    Raises ``TestValueError`` (an AttributeError) when ``v`` has none."""
    if not isinstance(v, Variable):
        from arignote.tensor import as_tensor_variable
        v = as_tensor_variable(v)
    return v.get_test_value()


__all__.append("get_test_value")


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


def variables_and_orphans(i: list, o: list) -> tuple[list, list]:
    return variables(i, o), orphans(i, o)


def ops_and_orphans(i: list, o: list) -> tuple[set, list]:
    return ops(i, o), orphans(i, o)


def list_of_nodes(inputs: list, outputs: list) -> list:
    """The Apply nodes between ``inputs`` and ``outputs``, outputs' first."""
    return io_toposort(inputs, outputs)[::-1]
