"""What rewriting did to a FunctionGraph: each replacement, and where each new node came from.

A FunctionGraph starts as a clone of the user's graph, so its variables carry
the user's names and the lines that built them. Rewrites then replace them
with variables of their own making, which know neither. ``RewriteHistory``,
attached before rewriting, records every replacement (old, new, the rewrite's
name) and gives each node a rewrite brought in the variable it stands for, so
errors raised while the rewritten graph runs can still name the user's
variable and the rewrite responsible (DebugMode, NanGuardMode).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.traversal import clone_get_equiv


@dataclass(frozen=True)
class Replacement:
    old: Variable
    new: Variable
    reason: str


class RewriteHistory:
    """A FunctionGraph feature, attached before rewriting: ``original`` (a copy of the graph as
    it was), ``replacements``, ``origin_of``, ``original_of`` and ``introduced_by``."""

    def on_attach(self, fgraph: Any) -> None:
        # The graph before any rewrite, kept apart (rewrites edit nodes in place).
        self._twin = clone_get_equiv(fgraph.inputs, fgraph.outputs, copy_inputs=True)
        self.original = FunctionGraph([self._twin[i] for i in fgraph.inputs],
                                      [self._twin[o] for o in fgraph.outputs], clone=False)
        self.replacements: list[Replacement] = []
        self._origin: dict[Variable, Variable] = {}
        self._reason: dict[Apply, str] = {}
        self._pending: list[Apply] = []

    def on_import(self, fgraph: Any, node: Apply) -> None:
        self._pending.append(node)

    def on_change_input(self, fgraph: Any, node: Any, i: int, old: Variable, new: Variable,
                        reason: str | None) -> None:
        # FunctionGraph imports the replacement's new nodes just before it
        # reports the change: they compute (part of) what ``old`` computed.
        reason = reason or "an unnamed rewrite"
        origin = self.origin_of(old)
        for imported in self._pending:
            self._reason.setdefault(imported, reason)
            for out in imported.outputs:
                self._origin.setdefault(out, origin)
        self._pending.clear()
        self._origin.setdefault(new, origin)
        if not self.replacements or self.replacements[-1].new is not new or \
                self.replacements[-1].old is not old:  # one entry per replacement, not per client
            self.replacements.append(Replacement(old, new, reason))

    def origin_of(self, var: Variable) -> Variable:
        """The variable of the graph as it was cloned from the user's that ``var`` stands for
        (``var`` itself when no rewrite made it); it has the user's name and line."""
        return self._origin.get(var, var)

    def original_of(self, var: Variable) -> Variable | None:
        """The twin in ``original`` (the graph before rewriting) of what ``var`` stands for."""
        return self._twin.get(self.origin_of(var))

    def introduced_by(self, node: Apply) -> str | None:
        """The name of the rewrite that brought ``node`` into the graph, or None if it was there."""
        return self._reason.get(node)


def history_of(fgraph: Any) -> RewriteHistory | None:
    return next((f for f in getattr(fgraph, "features", ()) if isinstance(f, RewriteHistory)), None)


def describe_node(fgraph: Any, node: Apply) -> str:
    """``node``, the user's variable it computes (name and the line that built it), and the
    rewrite that made it, as far as the graph's history knows."""
    history = history_of(fgraph)
    out = node.outputs[0]
    origin = history.origin_of(out) if history is not None else out
    text = f"{node}, computing {origin.describe()}"
    trace = getattr(origin.tag, "trace", None)
    if origin.name and trace:
        text += f" (built at {trace})"
    reason = history.introduced_by(node) if history is not None else None
    if reason:
        text += f"; the node was made by the rewrite {reason}"
    return text
