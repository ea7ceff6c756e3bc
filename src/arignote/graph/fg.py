"""FunctionGraph: a graph with fixed inputs and outputs that rewrites may edit."""
from __future__ import annotations

from typing import Any, Sequence

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.traversal import clone_get_equiv, io_toposort


class FunctionGraph:
    """Owns a copy of a graph and keeps ``clients`` current while it is edited.

    ``clients[v]`` lists ``(node, i)`` for each use of ``v`` as input ``i`` of
    ``node``; an output of the graph is used by ``("output", i)``. Features
    (objects with ``on_attach``, ``on_import``, ``on_prune``, ``on_change_input``)
    are told of every edit, which is how rewrites track what changed.
    """

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable],
                 clone: bool = True, features: Sequence[Any] = ()):
        if clone:
            self.equiv = clone_get_equiv(inputs, outputs, copy_inputs=True)
            inputs = [self.equiv[i] for i in inputs]
            outputs = [self.equiv[o] for o in outputs]
        else:
            self.equiv = None
        self.inputs: list[Variable] = list(inputs)
        self._input_set = set(self.inputs)
        self.outputs: list[Variable] = []
        self.apply_nodes: set[Apply] = set()
        self.variables: set[Variable] = set()
        self.clients: dict[Variable, list[tuple[Any, int]]] = {}
        self.features: list[Any] = []
        for inp in self.inputs:
            if inp.owner is not None:
                raise ValueError(f"graph input {inp} is computed by {inp.owner.op}; "
                                 "inputs must be ownerless")
            self._add_variable(inp)
        for i, out in enumerate(outputs):
            self._import_var(out)
            self.outputs.append(out)
            self.clients[out].append(("output", i))
        for feature in features:
            self.attach_feature(feature)

    # ---------------------------------------------------------------- edits
    def _add_variable(self, var: Variable) -> None:
        if var not in self.variables:
            self.variables.add(var)
            self.clients.setdefault(var, [])

    def _import_var(self, var: Variable) -> None:
        if var.owner is not None and var.owner not in self.apply_nodes:
            self._import_node(var.owner)
        elif var.owner is None and var not in self.variables:
            if not isinstance(var, Constant) and var not in self._input_set:
                raise MissingInputError(var)
            self._add_variable(var)

    def _import_node(self, node: Apply) -> None:
        # Iterative post-order walk: deep graphs must not hit the recursion limit.
        stack = [(node, False)]
        while stack:
            new, expanded = stack.pop()
            if new in self.apply_nodes:
                continue
            if not expanded:
                stack.append((new, True))
                stack.extend((i.owner, False) for i in reversed(new.inputs)
                             if i.owner is not None and i.owner not in self.apply_nodes)
                continue
            for inp in new.inputs:
                if inp.owner is None:
                    self._import_var(inp)
            self.apply_nodes.add(new)
            for out in new.outputs:
                self._add_variable(out)
            for i, inp in enumerate(new.inputs):
                self.clients[inp].append((new, i))
            self._notify("on_import", new)

    def _prune_if_unused(self, var: Variable) -> None:
        stack = [var]
        while stack:
            var = stack.pop()
            if self.clients.get(var) or var in self._input_set:
                continue
            node = var.owner
            if node is None:
                self.variables.discard(var)
                self.clients.pop(var, None)
                continue
            if node not in self.apply_nodes or any(self.clients.get(o) for o in node.outputs):
                continue
            self.apply_nodes.discard(node)
            for out in node.outputs:
                self.variables.discard(out)
                self.clients.pop(out, None)
            self._notify("on_prune", node)
            for i, inp in enumerate(node.inputs):
                self.clients[inp].remove((node, i))
                stack.append(inp)

    def change_input(self, node: Any, i: int, new: Variable, reason: str | None = None) -> None:
        """Make input ``i`` of ``node`` (or output ``i`` if node is "output") be ``new``."""
        if node == "output":
            old = self.outputs[i]
            self._check_type(old, new)
            self.outputs[i] = new
        else:
            old = node.inputs[i]
            self._check_type(old, new)
            node.inputs[i] = new
        if old is new:
            return
        self._import_var(new)
        self.clients[new].append((node, i))
        self.clients[old].remove((node, i))
        self._notify("on_change_input", node, i, old, new, reason)
        self._prune_if_unused(old)

    def replace(self, old: Variable, new: Variable, reason: str | None = None) -> None:
        """Use ``new`` wherever ``old`` is used."""
        if old is new:
            return
        for node, i in list(self.clients.get(old, [])):
            self.change_input(node, i, new, reason)

    def replace_all(self, pairs: Sequence[tuple[Variable, Variable]], reason: str | None = None) -> None:
        for old, new in pairs:
            self.replace(old, new, reason)

    @staticmethod
    def _check_type(old: Variable, new: Variable) -> None:
        if old.type != new.type:
            raise TypeError(f"cannot replace {old} of type {old.type} by {new} of type {new.type}")

    # ------------------------------------------------------------- features
    def attach_feature(self, feature: Any) -> None:
        self.features.append(feature)
        if hasattr(feature, "on_attach"):
            feature.on_attach(self)

    def _notify(self, event: str, *args: Any) -> None:
        for feature in self.features:
            callback = getattr(feature, event, None)
            if callback is not None:
                callback(self, *args)

    # --------------------------------------------------------------- queries
    def toposort(self) -> list[Apply]:
        """The apply nodes in an order where each comes after those it needs."""
        return io_toposort(self.inputs, self.outputs)

    def orphans(self) -> list[Variable]:
        return [v for v in self.variables if v.owner is None and v not in self.inputs]

    def clone(self) -> "FunctionGraph":
        equiv = clone_get_equiv(self.inputs, self.outputs, copy_inputs=True)
        return FunctionGraph([equiv[i] for i in self.inputs], [equiv[o] for o in self.outputs],
                             clone=False)

    def __str__(self) -> str:
        return f"FunctionGraph({', '.join(map(str, self.outputs))})"


class MissingInputError(ValueError):
    """An output needs a variable that is neither an input, a shared variable nor a constant."""

    def __init__(self, var: Variable):
        super().__init__(
            f"the graph needs {var.describe()} of type {var.type}, which is not among the "
            "inputs: add it to the inputs list of function(), or replace it with givens=")
        self.variable = var
