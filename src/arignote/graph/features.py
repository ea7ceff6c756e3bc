"""Graph features (Theano's ``gof.toolbox``): objects a FunctionGraph tells of each change
as rewrites edit it, to keep an index current (``NodeFinder``), to undo changes
(``History``), to keep names (``PreserveNames``) or to watch the rewrites work
(``PrintListener``), or to refuse some (``NoOutputFromInplace``)."""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply, Op, Variable
from arignote.graph.errors import InconsistencyError

__all__ = ["Bookkeeper", "NodeFinder", "History", "PreserveNames", "PrintListener", "NoOutputFromInplace"]


class Bookkeeper:
    """Base of features that keep something per node: attaching one imports every node
    of the graph into it (``on_import``, inputs first), detaching prunes them all
    (``on_prune``, last first), so it needs no code of its own for the nodes already there."""

    def on_attach(self, fgraph: Any) -> None:
        for node in fgraph.toposort():
            self.on_import(fgraph, node, "on_attach")

    def on_detach(self, fgraph: Any) -> None:
        for node in reversed(fgraph.toposort()):
            self.on_prune(fgraph, node, "Bookkeeper.detach")

    def on_import(self, fgraph: Any, node: Apply, *reason: Any) -> None:
        pass

    def on_prune(self, fgraph: Any, node: Apply, *reason: Any) -> None:
        pass


class NodeFinder(Bookkeeper):
    """Theano's ``toolbox.NodeFinder``: attached to a graph, it gives it
    ``fgraph.get_nodes(op)``, the nodes applying ``op`` (an equal op) now, kept current
    through every import and prune, in the order they entered the graph."""

    def __init__(self) -> None:
        self.fgraph: Any = None
        self.by_op: dict[Op, dict[Apply, None]] = {}

    def on_attach(self, fgraph: Any) -> None:
        if self.fgraph is not None:
            raise ValueError("this NodeFinder is attached to another graph already: make one per graph")
        if hasattr(fgraph, "get_nodes"):
            raise ValueError("the graph has a get_nodes already (another NodeFinder?)")
        self.fgraph = fgraph
        fgraph.get_nodes = self.get_nodes
        super().on_attach(fgraph)

    def on_detach(self, fgraph: Any) -> None:
        del fgraph.get_nodes
        self.fgraph, self.by_op = None, {}

    def on_import(self, fgraph: Any, node: Apply, *reason: Any) -> None:
        self.by_op.setdefault(node.op, {})[node] = None

    def on_prune(self, fgraph: Any, node: Apply, *reason: Any) -> None:
        nodes = self.by_op.get(node.op)
        if nodes is not None:
            nodes.pop(node, None)
            if not nodes:
                del self.by_op[node.op]

    def get_nodes(self, op: Op) -> list[Apply]:
        return list(self.by_op.get(op, ()))


class History:
    """Records every input change of the graphs it is attached to, so that a graph can be
    put back: ``mark = fgraph.checkpoint()``, then ``fgraph.revert(mark)`` undoes each
    change made since, last first (nodes the changes pruned come back)."""

    def __init__(self) -> None:
        self.history: dict[Any, list[tuple[Any, int, Variable]]] = {}
        self._reverting: set[int] = set()

    def on_attach(self, fgraph: Any) -> None:
        if hasattr(fgraph, "checkpoint") or hasattr(fgraph, "revert"):
            raise ValueError("the graph has a checkpoint/revert already (another History?)")
        self.history[fgraph] = []
        fgraph.checkpoint = lambda: len(self.history[fgraph])
        fgraph.revert = lambda checkpoint: self.revert(fgraph, checkpoint)

    def on_detach(self, fgraph: Any) -> None:
        del fgraph.checkpoint, fgraph.revert
        del self.history[fgraph]

    def on_change_input(self, fgraph: Any, node: Any, i: int, old: Variable, new: Variable,
                        reason: str | None = None) -> None:
        if id(fgraph) not in self._reverting:
            self.history[fgraph].append((node, i, old))

    def revert(self, fgraph: Any, checkpoint: int) -> None:
        """Undo the changes made to ``fgraph`` after ``checkpoint`` (a ``fgraph.checkpoint()``)."""
        changes = self.history[fgraph]
        if not 0 <= checkpoint <= len(changes):
            raise ValueError(f"History.revert: checkpoint {checkpoint} is not one of this graph's "
                             f"(0 to {len(changes)}): take one with fgraph.checkpoint()")
        self._reverting.add(id(fgraph))
        try:
            while len(changes) > checkpoint:
                node, i, old = changes.pop()
                fgraph.change_input(node, i, old, reason="History.revert")
        finally:
            self._reverting.discard(id(fgraph))


class PreserveNames:
    """A replacement without a name takes the name of the variable it replaces, so a
    rewritten graph still shows (and errors still name) the user's variables."""

    def on_change_input(self, fgraph: Any, node: Any, i: int, old: Variable, new: Variable,
                        reason: str | None = None) -> None:
        if old.name is not None and new.name is None:
            new.name = old.name


class PrintListener:
    """Prints each change to the graph as it is made (attach, detach, each node imported
    or pruned, each input changed, with the rewrite that did it): to watch rewrites work.
    ``active=False`` keeps it quiet."""

    def __init__(self, active: bool = True):
        self.active = active

    def _say(self, text: str) -> None:
        if self.active:
            print(text)

    def on_attach(self, fgraph: Any) -> None:
        self._say(f"-- attached to {fgraph}")

    def on_detach(self, fgraph: Any) -> None:
        self._say(f"-- detached from {fgraph}")

    def on_import(self, fgraph: Any, node: Apply, *reason: Any) -> None:
        self._say(f"-- imported {node}{_because(reason)}")

    def on_prune(self, fgraph: Any, node: Apply, *reason: Any) -> None:
        self._say(f"-- pruned {node}{_because(reason)}")

    def on_change_input(self, fgraph: Any, node: Any, i: int, old: Variable, new: Variable,
                        reason: str | None = None) -> None:
        where = f"output {i}" if node == "output" else f"input {i} of {node}"
        self._say(f"-- changed {where} from {old} to {new}{_because((reason,))}")


def _because(reason: tuple) -> str:
    return f" ({reason[0]})" if reason and reason[0] is not None else ""


class NoOutputFromInplace:
    """Refuses any change after which one of the graph's outputs ``first_output_idx`` to
    ``last_output_idx`` (a slice of ``fgraph.outputs``) is computed by overwriting an input:
    a caller that keeps those outputs' buffers across calls (Theano's scan) needs each one to
    be memory of its own. The in-place passes ask it (``replace_validate``) and leave such a
    node as it was; attach it before they run (``Mode.register((AddFeatureOptimizer(
    NoOutputFromInplace()), 49.9))``)."""

    def __init__(self, first_output_idx: int = 0, last_output_idx: int | None = None):
        self.first_idx, self.last_idx = first_output_idx, last_output_idx

    def validate(self, fgraph: Any) -> None:
        for out in fgraph.outputs[self.first_idx:self.last_idx]:
            node = out.owner
            if node is not None and node.outputs.index(out) in node.op.destroy_map:
                raise InconsistencyError(
                    f"output {out} would be computed by {node.op} overwriting its input "
                    f"{node.inputs[node.op.destroy_map[node.outputs.index(out)][0]]}, and the graph's "
                    "NoOutputFromInplace feature asks that its outputs be memory of their own")
