"""``theano.gof`` and the modules of it code imports (``graph``, ``op``, ``type``, ``utils``):
arignote's graph IR under Theano's names."""
from __future__ import annotations


from collections.abc import Callable, Iterable
from typing import Any

from arignote.compat.theano import gof_utils as utils
from arignote.compat.theano import toolbox
from arignote.compile.linkers import Container, LocalLinker, PerformLinker, VM_Linker, WrapLinker, WrapLinkerMany
from arignote.compat.theano.opt import (EquilibriumOptimizer, LocalOptimizer, MergeOptimizer, OpRemove, OpSub,
                                        Optimizer, PatternSub, SeqOptimizer, TopoOptimizer, local_optimizer,
                                        optimizer)
from arignote.compat.theano.optdb import EquilibriumDB, Query, SequenceDB
from arignote.graph.basic import Apply, Constant, Op, Type, Variable
from arignote.graph.destroyhandler import DestroyHandler
from arignote.graph.enums import CEnumType, EnumList, EnumType
from arignote.graph.errors import InconsistencyError
from arignote.graph.fg import FunctionGraph, MissingInputError
from arignote.graph.traversal import (as_string, clone, clone_get_equiv, general_toposort,
                                      io_toposort, is_in_ancestors, is_same_graph, orphans,
                                      stack_search, view_roots)
from arignote.graph.testvalue import debug_error_message, get_debug_values
from arignote.graph.types import Generic, NullType, generic
from arignote.graph import traversal as _traversal

__all__ = ["Apply", "Constant", "Op", "PureOp", "Type", "Variable", "FunctionGraph", "MissingInputError",
           "ancestors", "clone", "clone_get_equiv", "inputs", "io_toposort", "is_same_graph", "variables",
           "ops", "Generic", "generic", "NullType", "MethodNotDefined", "general_toposort", "stack_search",
           "orphans", "variables_and_orphans", "ops_and_orphans", "view_roots", "list_of_nodes",
           "is_in_ancestors", "as_string", "toolbox", "EquilibriumOptimizer", "LocalOptimizer",
           "MergeOptimizer", "OpRemove", "OpSub", "Optimizer", "PatternSub", "SeqOptimizer",
           "TopoOptimizer", "local_optimizer", "optimizer", "EquilibriumDB", "Query", "SequenceDB"]

PureOp = Op
MethodNotDefined = utils.MethodNotDefined


def ancestors(variable_list: Iterable[Variable], blockers: Iterable[Variable] | None = None) -> list[Variable]:
    """The variables ``variable_list`` depends on, in Theano's order: its search takes the *last*
    variable of the list first (a stack), then each node's inputs left to right. Library code
    relies on it: Lasagne's ``collect_shared_vars`` passes its list reversed to get the parameters
    in the order they were written."""
    return _traversal.ancestors(list(variable_list)[::-1], blockers or ())


def inputs(variable_list: Iterable[Variable], blockers: Iterable[Variable] | None = None) -> list[Variable]:
    """The ownerless variables among :func:`ancestors`, in its order."""
    return [v for v in ancestors(variable_list, blockers) if v.owner is None]


def get_test_value(v: object) -> object:
    """Theano's ``gof.op.get_test_value``: ``v``'s test value (a constant's data, a shared
    variable's value, ``tag.test_value``); a number or array is made a constant first.
    Raises ``TestValueError`` (an AttributeError) when ``v`` has none."""
    if not isinstance(v, Variable):
        from arignote.tensor import as_tensor_variable
        v = as_tensor_variable(v)
    return v.get_test_value()


__all__ += ["get_test_value", "get_debug_values", "debug_error_message", "utils", "InconsistencyError",
            "DestroyHandler", "EnumType", "EnumList", "CEnumType"]

# Theano's gof exported its graph features at the top.
Feature, Bookkeeper, History, Validator = toolbox.Feature, toolbox.Bookkeeper, toolbox.History, toolbox.Validator
ReplaceValidate, NodeFinder, PrintListener = toolbox.ReplaceValidate, toolbox.NodeFinder, toolbox.PrintListener
NoOutputFromInplace = toolbox.NoOutputFromInplace
__all__ += ["Feature", "Bookkeeper", "History", "Validator", "ReplaceValidate", "NodeFinder", "PrintListener",
            "NoOutputFromInplace"]


class OpWiseCLinker(PerformLinker):
    """Theano's linker of C thunks falling back on ``perform``: arignote's ops have one
    implementation, so this is ``PerformLinker`` under Theano's signature."""

    def __init__(self, fallback_on_perform: bool = True, allow_gc: bool | None = None,
                 nice_errors: bool = True, schedule: Callable[[Any], list] | None = None):
        super().__init__(allow_gc=allow_gc, schedule=schedule)


class DualLinker(PerformLinker):
    """Theano's C-versus-Python checking linker: with one implementation per op there is
    nothing to compare, so it runs the graph once (``checker`` is never called)."""

    def __init__(self, checker: Callable[..., Any] | None = None, schedule: Callable[[Any], list] | None = None):
        super().__init__(schedule=schedule)


class CLinker(PerformLinker):
    """Theano's whole-graph C linker: arignote generates no C for a graph (its native
    kernels are per node), so this runs the nodes' thunks as ``PerformLinker`` does."""

    def __init__(self, schedule: Callable[[Any], list] | None = None):
        super().__init__(schedule=schedule)


__all__ += ["PerformLinker", "DualLinker", "OpWiseCLinker", "CLinker", "LocalLinker", "WrapLinker",
            "WrapLinkerMany", "Container", "VM_Linker"]


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
