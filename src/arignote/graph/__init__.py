"""The generic graph IR: variables, apply nodes, ops, function graphs."""
from arignote.graph.basic import Apply, Constant, Op, Type, Variable
from arignote.graph.fg import FunctionGraph, MissingInputError
from arignote.graph.traversal import ancestors, clone, clone_get_equiv, graph_inputs, io_toposort

__all__ = ["Apply", "Constant", "Op", "Type", "Variable", "FunctionGraph", "MissingInputError",
           "ancestors", "clone", "clone_get_equiv", "graph_inputs", "io_toposort"]
