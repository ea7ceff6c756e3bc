"""FunctionGraph: a graph with fixed inputs and outputs that rewrites may edit."""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.errors import InconsistencyError
from arignote.graph.traversal import as_string, clone_get_equiv, io_toposort


class FunctionGraph:
    """Owns a copy of a graph and keeps ``clients`` current while it is edited.

    ``clients[v]`` lists ``(node, i)`` for each use of ``v`` as input ``i`` of
    ``node``; an output of the graph is used by ``("output", i)``. Features
    (objects with ``on_attach``, ``on_import``, ``on_prune``, ``on_change_input``)
    are told of every edit, which is how rewrites track what changed.
    """

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable],
                 clone: bool = True, features: Sequence[Any] = ()):
        self._order: list[Apply] | None = None  # the toposort, until the next edit
        self.edits = 0  # counts the edits: a pass can tell that nothing changed since it ran
        if clone:
            self.equiv = clone_get_equiv(inputs, outputs, copy_inputs=True)
            inputs = [self.equiv[i] for i in inputs]
            outputs = [self.equiv[o] for o in outputs]
        else:
            self.equiv = None
        self.inputs: list[Variable] = list(inputs)
        self._input_set = set(self.inputs)
        if len(self._input_set) != len(self.inputs):
            repeated = [str(v) for v in self._input_set if self.inputs.count(v) > 1]
            raise ValueError(f"FunctionGraph inputs repeat {', '.join(repeated)}: list each input once")
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
        if var in self.variables:
            return
        if var.owner is not None:
            self._import_node(var.owner)
            return
        if not isinstance(var, Constant) and var not in self._input_set:
            raise MissingInputError(var)
        self._add_variable(var)

    def _import_node(self, node: Apply) -> None:
        """Add ``node`` and every node it needs that is not in the graph yet.

        Everything is checked before anything is added, so a missing input leaves
        the graph as it was.
        """
        new_nodes = self._nodes_to_import(node)
        for new in new_nodes:
            for inp in new.inputs:
                if (inp.owner is None and inp not in self.variables
                        and not isinstance(inp, Constant) and inp not in self._input_set):
                    raise MissingInputError(inp, needed_by=new)
        self._order = None
        self.edits += 1
        for new in new_nodes:
            for inp in new.inputs:
                if inp.owner is None:
                    self._add_variable(inp)
            self.apply_nodes.add(new)
            for out in new.outputs:
                self._add_variable(out)
            for i, inp in enumerate(new.inputs):
                self.clients[inp].append((new, i))
            self._notify("on_import", new)

    def _nodes_to_import(self, node: Apply) -> list[Apply]:
        # Iterative post-order walk: deep graphs must not hit the recursion limit.
        order: list[Apply] = []
        seen: set[Apply] = set()
        stack = [(node, False)]
        while stack:
            current, expanded = stack.pop()
            if expanded:
                order.append(current)
                continue
            if current in seen or current in self.apply_nodes:
                continue
            seen.add(current)
            stack.append((current, True))
            stack.extend((i.owner, False) for i in reversed(current.inputs)
                         if i.owner is not None and i.owner not in self.apply_nodes
                         and i.owner not in seen)
        return order

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
            self._order = None
            self.edits += 1
            for out in node.outputs:
                self.variables.discard(out)
                self.clients.pop(out, None)
            self._notify("on_prune", node)
            for i, inp in enumerate(node.inputs):
                self.clients[inp].remove((node, i))
                stack.append(inp)

    def change_input(self, node: Any, i: int, new: Variable, reason: str | None = None) -> None:
        """Make input ``i`` of ``node`` (or output ``i`` if node is "output") be ``new``."""
        old = self.outputs[i] if node == "output" else node.inputs[i]
        if old is new:
            return
        self._check_type(old, new)
        self._import_var(new)  # first: a missing input must leave the graph unchanged
        self._order = None
        self.edits += 1
        if node == "output":
            self.outputs[i] = new
        else:
            node.inputs[i] = new
        self.clients[new].append((node, i))
        self.clients[old].remove((node, i))
        self._notify("on_change_input", node, i, old, new, reason)
        self._prune_if_unused(old)

    def replace(self, old: Variable, new: Variable, reason: str | None = None) -> None:
        """Use ``new`` wherever ``old`` is used.

        A ``new`` the graph does not hold yet (a rewrite's result) takes ``old``'s
        trace, so errors in it still point at the line where the user wrote ``old``.
        """
        if old is new:
            return
        if new not in self.variables and getattr(old.tag, "trace", None):
            new.tag.trace = old.tag.trace
        for node, i in list(self.clients.get(old, [])):
            self.change_input(node, i, new, reason)

    def replace_all(self, pairs: Sequence[tuple[Variable, Variable]], reason: str | None = None) -> None:
        for old, new in pairs:
            self.replace(old, new, reason)

    # Theano's names (its ReplaceValidate feature added them): each replacement is checked
    # as it is made (types, missing inputs); a feature with ``validate`` (DestroyHandler) then
    # judges the graph, and a replacement it refuses is undone before its error is raised.
    def replace_validate(self, old: Variable, new: Variable, reason: str | None = None, **_: Any) -> None:
        self.replace_all_validate([(old, new)], reason)

    def replace_all_validate(self, pairs: Sequence[tuple[Variable, Variable]], reason: str | None = None,
                             **_: Any) -> None:
        if not any(hasattr(f, "validate") for f in self.features):
            self.replace_all(pairs, reason)
            return
        journal = _Journal()
        self.features.append(journal)
        try:
            self.replace_all(pairs, reason)
            self.validate()
        except Exception:
            self.features.remove(journal)
            for node, i, old in reversed(journal.changes):
                self.change_input(node, i, old, reason="undo")
            raise
        self.features.remove(journal)

    def validate(self) -> None:
        """Ask every feature with ``validate`` whether the graph is sound (InconsistencyError if not)."""
        for feature in self.features:
            if hasattr(feature, "validate"):
                feature.validate(self)

    def consistent(self) -> bool:
        """Whether ``validate()`` passes."""
        try:
            self.validate()
        except InconsistencyError:
            return False
        return True

    @staticmethod
    def _check_type(old: Variable, new: Variable) -> None:
        if old.type != new.type:
            raise TypeError(f"cannot replace {old} of type {old.type} by {new} of type {new.type}")

    # ------------------------------------------------------------- features
    def attach_feature(self, feature: Any) -> None:
        """Attach ``feature``; one equal to an attached feature is not attached again."""
        if feature in self.features:
            return
        self.features.append(feature)
        if hasattr(feature, "on_attach"):
            feature.on_attach(self)

    def remove_feature(self, feature: Any) -> None:
        self.features.remove(feature)
        if hasattr(feature, "on_detach"):
            feature.on_detach(self)

    def _notify(self, event: str, *args: Any) -> None:
        for feature in self.features:
            callback = getattr(feature, event, None)
            if callback is not None:
                callback(self, *args)

    # --------------------------------------------------------------- queries
    def toposort(self) -> list[Apply]:
        """The apply nodes in an order where each comes after those it needs (computed once
        per state of the graph: rewriting passes that change nothing ask again)."""
        if self._order is None:
            self._order = io_toposort(self.inputs, self.outputs, self.orderings())
        return list(self._order)

    def orderings(self) -> dict[Apply, list[Apply]]:
        """Theano's ``orderings()``: for each node, the nodes that must run before it besides
        those it reads (the readers of what it overwrites, a DestroyHandler's readers
        through views)."""
        before = self._readers_first()
        for feature in self.features:
            for node, readers in getattr(feature, "orderings", lambda fg: {})(self).items():
                before.setdefault(node, []).extend(readers)
        return before

    def _readers_first(self) -> dict[Apply, list[Apply]]:
        """For each node that overwrites an input, the other nodes reading that input: they
        must run first. The in-place rewrite only overwrites a variable with no other
        reader; a graph built with a destroying op (``function(accept_inplace=True)``)
        may have some."""
        before: dict[Apply, list[Apply]] = {}
        for node in self.apply_nodes:
            for positions in node.op.destroy_map.values():
                for i in positions:
                    readers = [c for c, _ in self.clients.get(node.inputs[i], ())
                               if c != "output" and c is not node]
                    if readers:
                        before.setdefault(node, []).extend(readers)
        return before

    def check_integrity(self) -> None:
        """Raise ValueError if the bookkeeping disagrees with the graph itself.

        For tests and for debugging rewrites: the nodes must be exactly those
        between the inputs and outputs, and ``clients`` must list every use.
        """
        nodes = set(io_toposort(self.inputs, self.outputs))
        if nodes != self.apply_nodes:
            raise ValueError(f"apply_nodes has {len(self.apply_nodes - nodes)} unreachable and lacks "
                             f"{len(nodes - self.apply_nodes)} reachable nodes")
        uses: dict[Variable, list] = {v: [] for v in self.variables}
        for node in nodes:
            for i, inp in enumerate(node.inputs):
                if inp not in uses:
                    raise ValueError(f"input {i} of {node} ({inp}) is not among the variables")
                uses[inp].append((node, i))
            for out in node.outputs:
                if out not in self.variables:
                    raise ValueError(f"output {out} of {node} is not among the variables")
        for i, out in enumerate(self.outputs):
            uses.setdefault(out, []).append(("output", i))
        for var in set(uses) | set(self.clients):
            expected = sorted(uses.get(var, []), key=_client_key)
            if sorted(self.clients.get(var, []), key=_client_key) != expected:
                raise ValueError(f"clients of {var} are {self.clients.get(var)}, expected {expected}")

    def orphans(self) -> list[Variable]:
        return [v for v in self.variables if v.owner is None and v not in self.inputs]

    def clone(self) -> FunctionGraph:
        equiv = clone_get_equiv(self.inputs, self.outputs, copy_inputs=True)
        return FunctionGraph([equiv[i] for i in self.inputs], [equiv[o] for o in self.outputs],
                             clone=False)

    def __str__(self) -> str:
        """The outputs written as nested calls down to the inputs (as Theano printed a graph)."""
        return f"[{', '.join(as_string(self.inputs, self.outputs))}]"

    __repr__ = __str__

    def __reduce__(self) -> tuple:
        """The inputs, the outputs and plain attributes (``n_outputs``...); the bookkeeping
        is rebuilt on load, and features (rewrite helpers) are not kept."""
        extra = {k: v for k, v in self.__dict__.items() if k not in _BOOKKEEPING}
        return _load_fgraph, (self.inputs, self.outputs), extra


_BOOKKEEPING = frozenset(["equiv", "inputs", "_input_set", "outputs", "apply_nodes", "variables",
                          "clients", "features"])


def _load_fgraph(inputs: list[Variable], outputs: list[Variable]) -> FunctionGraph:
    return FunctionGraph(inputs, outputs, clone=False)


def _client_key(client: tuple[Any, int]) -> tuple[int, int]:
    node, i = client
    return (-1 if node == "output" else id(node), i)


class _Journal:
    """Records input changes so that a refused replacement can be undone."""

    def __init__(self) -> None:
        self.changes: list[tuple[Any, int, Variable]] = []

    def on_change_input(self, fgraph: FunctionGraph, node: Any, i: int, old: Variable, new: Variable,
                        reason: str | None = None) -> None:
        self.changes.append((node, i, old))


class MissingInputError(ValueError):
    """An output needs a variable that is neither an input, a shared variable nor a constant."""

    def __init__(self, var: Variable, needed_by: Apply | None = None):
        use = f" to compute {needed_by}" if needed_by is not None else ""
        super().__init__(
            f"the graph needs {var.describe()} of type {var.type}{use}, but it is not among the "
            "inputs: add it to the inputs list of function(), or replace it with givens=")
        self.variable = var
        self.needed_by = needed_by
