"""``theano.gof`` and the modules of it code imports (``graph``, ``op``, ``type``, ``utils``):
arignote's graph IR under Theano's names."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from arignote.graph.basic import Apply, Constant, Op, Type, Variable
from arignote.graph.fg import FunctionGraph, MissingInputError
from arignote.graph.traversal import (ancestors, clone, clone_get_equiv, general_toposort, graph_inputs,
                                      io_toposort, is_in_ancestors, is_same_graph, orphans, stack_search,
                                      view_roots)
from arignote.graph.types import Generic, NullType, generic

__all__ = ["Apply", "Constant", "Op", "PureOp", "Type", "Variable", "FunctionGraph",
           "MissingInputError", "ancestors", "clone", "clone_get_equiv", "inputs", "io_toposort", "is_same_graph",
           "variables", "ops", "Generic", "generic", "NullType", "MethodNotDefined", "general_toposort",
           "stack_search", "orphans", "variables_and_orphans", "ops_and_orphans", "view_roots",
           "list_of_nodes", "is_in_ancestors", "as_string"]

PureOp = Op
# Theano raised MethodNotDefined for an interface method an op lacks (``grad``, ``perform``);
# arignote raises NotImplementedError there, which this name catches.
MethodNotDefined = NotImplementedError
inputs = graph_inputs


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


def _node_string(node: Apply, args: list[str]) -> str:
    return f"{node.op}({', '.join(args)})"


def as_string(i: list, o: list, leaf_formatter: Callable[[Variable], str] = str,
              node_formatter: Callable[[Apply, list[str]], str] = _node_string) -> list[str]:
    """One string per output of ``o``, its graph written as nested calls down to ``i``.

    A node whose outputs are used more than once is written out at its first use, marked
    ``*n -> ...``, and is ``*n`` afterwards (``*n.k`` for its output ``k`` when it has several).
    Variables of ``i`` and ownerless ones are written by ``leaf_formatter``.
    """
    given = set(i)
    uses: Counter = Counter(o)
    for node in io_toposort(i, o):
        uses.update(node.inputs)
    shared_nodes = {v.owner for v, n in uses.items() if n > 1 and v.owner is not None and v not in given}
    labels: dict[Apply, int] = {}

    def write(var: Variable) -> str:
        node = var.owner
        if node is None or var in given:
            return leaf_formatter(var)
        label = "" if len(node.outputs) == 1 else f".{node.outputs.index(var)}"
        if node in labels:
            return f"*{labels[node]}{label}"
        if node not in shared_nodes:
            return node_formatter(node, [write(inp) for inp in node.inputs])
        labels[node] = len(labels) + 1
        return f"*{labels[node]}{label} -> " + node_formatter(node, [write(inp) for inp in node.inputs])

    return [write(out) for out in o]
