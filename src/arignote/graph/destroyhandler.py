"""Whether a node may overwrite one of its inputs: the proof in-place rewrites need.

Overwriting ``var`` is safe only when nothing else can observe it: it is
computed inside the graph (never a shared variable's storage or a constant, nor
a function input unless ``In(mutable=True)`` put it in ``fgraph.destroyable_inputs``),
it is not a graph output, it is not itself a view of another
buffer, and the node is its only client, so no other node reads it (or a view
of it) before or after.

``DestroyHandler`` is Theano's general rule, for graphs a user's rewrites make with
destroying ops: a feature that validates every replacement (below).
"""
from __future__ import annotations

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.errors import InconsistencyError
from arignote.graph.fg import FunctionGraph


def is_view(var: Variable) -> bool:
    node = var.owner
    if node is None:
        return False
    op = node.op
    return bool(op.view_map.get(var.index) or op.destroy_map.get(var.index))


def can_destroy(fgraph: FunctionGraph, node: Apply, index: int) -> bool:
    var = node.inputs[index]
    if var.owner is None and var not in getattr(fgraph, "destroyable_inputs", ()):
        return False  # an input may be overwritten only when In(mutable=True) allows it
    if is_view(var):
        return False
    if var in fgraph.outputs:
        return False
    clients = fgraph.clients.get(var, [])
    return len(clients) == 1 and clients[0] == (node, index) and node.inputs.count(var) == 1


def replace_in_place(fgraph: FunctionGraph, old: Variable, new: Variable, reason: str) -> bool:
    """Install an in-place rewrite's ``new`` (``can_destroy`` proved it safe) when the graph's
    features agree (``replace_validate``: a feature such as ``NoOutputFromInplace`` may refuse
    it): True when made, False when refused (the graph is then as before)."""
    try:
        fgraph.replace_validate(old, new, reason=reason)
    except InconsistencyError:
        return False
    return True


class DestroyHandler:
    """Theano's feature that keeps a FunctionGraph with destroying (in-place) ops sound.

    Attached (``fgraph.attach_feature(DestroyHandler())``), it makes ``fgraph.validate()``
    raise ``InconsistencyError`` (and ``replace_validate`` undo its replacement) when a node
    overwrites memory that something else still needs: a constant or a variable tagged
    ``tag.indestructible`` (or a view of one), memory another node overwrites too, memory
    another input of the same node shares (unless the op lists the pair of input positions
    in ``destroyhandler_tolerate_same``, for the very same variable, or in
    ``destroyhandler_tolerate_aliased``), or memory a node must read after it has been
    overwritten (every other reader of it or of its views must run first, which a reader
    that depends on the overwriting node cannot). Graph inputs may be overwritten, as in
    Theano; ``function`` protects its inputs itself. The graph's toposort puts those other
    readers first, and ``fgraph.destroyers(var)`` names the nodes overwriting ``var``'s memory.
    """

    def __init__(self, do_imports_on_attach: bool = True, algo: str | None = None):
        self.fgraph: FunctionGraph | None = None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if getattr(fgraph, "destroy_handler", None) not in (None, self):
            raise ValueError("the graph has a DestroyHandler already")
        self.fgraph = fgraph
        fgraph.destroy_handler = self
        fgraph.destroyers = lambda var: destroyers(fgraph, var)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        del fgraph.destroy_handler, fgraph.destroyers
        self.fgraph = None

    def validate(self, fgraph: FunctionGraph) -> None:
        problem = check(fgraph)[1]
        if problem is not None:
            raise InconsistencyError(problem)

    def orderings(self, fgraph: FunctionGraph) -> dict[Apply, list[Apply]]:
        return {node: list(readers) for node, readers in check(fgraph)[0].items()}


def view_roots_of(var: Variable) -> frozenset[Variable]:
    """The variables whose memory ``var`` is (through ``view_map`` outputs; a destroying
    op's output is memory of its own)."""
    node = var.owner
    if node is None or not node.op.view_map.get(var.index):
        return frozenset([var])
    return frozenset().union(*[view_roots_of(node.inputs[i]) for i in node.op.view_map[var.index]])


def destroyers(fgraph: FunctionGraph, var: Variable) -> list[Apply]:
    """The nodes of ``fgraph`` that overwrite ``var``'s memory (``var`` or what it views)."""
    roots = view_roots_of(var)
    return [node for node in fgraph.toposort() for positions in node.op.destroy_map.values()
            for i in positions if view_roots_of(node.inputs[i]) & roots]


def check(fgraph: FunctionGraph) -> tuple[dict[Apply, set[Apply]], str | None]:
    """(for each destroying node, the nodes that must run before it; what is unsound, or None)."""
    roots = {v: view_roots_of(v) for v in fgraph.variables}
    aliases: dict[Variable, list[Variable]] = {}
    for var, rs in roots.items():
        for r in rs:
            aliases.setdefault(r, []).append(var)
    before: dict[Apply, set[Apply]] = {}
    owner_of: dict[Variable, Apply] = {}
    for node in fgraph.apply_nodes:
        op = node.op
        for i in sorted({i for positions in op.destroy_map.values() for i in positions}):
            target = node.inputs[i]
            for root in roots.get(target, view_roots_of(target)):
                if isinstance(root, Constant) or getattr(root.tag, "indestructible", False):
                    return before, f"{node} overwrites {root}, which is a constant or indestructible"
                if owner_of.setdefault(root, node) is not node:
                    return before, f"{owner_of[root]} and {node} both overwrite {root}"
                for j, other in enumerate(node.inputs):
                    if j == i or root not in roots.get(other, view_roots_of(other)):
                        continue
                    same = other is target and (i, j) in getattr(op, "destroyhandler_tolerate_same", ())
                    if not same and (i, j) not in getattr(op, "destroyhandler_tolerate_aliased", ()):
                        return before, (f"{node} overwrites its input {i} ({target}) while its input {j} "
                                        f"({other}) is the same memory")
                readers = before.setdefault(node, set())
                for alias in aliases.get(root, [root]):
                    readers.update(c for c, _ in fgraph.clients.get(alias, ()) if c != "output" and c is not node)
    cycle = _cycle(fgraph, before)
    if cycle is not None:
        reader, node = cycle
        return before, (f"{reader} must run before {node} overwrites memory it reads, but it needs "
                        "that node's result")
    return before, None


def _cycle(fgraph: FunctionGraph, before: dict[Apply, set[Apply]]) -> tuple[Apply, Apply] | None:
    """(reader, destroyer) where the reader must run first but depends on the destroyer."""
    for node, readers in before.items():
        for reader in readers:
            if _depends(reader, node, fgraph, before):
                return reader, node
    return None


def _depends(a: Apply, b: Apply, fgraph: FunctionGraph, before: dict[Apply, set[Apply]]) -> bool:
    """Whether ``a`` must come after ``b``: through data, or through the readers-first orders."""
    stack, seen = [a], set()
    while stack:
        node = stack.pop()
        if node is b:
            return True
        if node in seen:
            continue
        seen.add(node)
        stack.extend(v.owner for v in node.inputs if v.owner is not None and v.owner in fgraph.apply_nodes)
        stack.extend(before.get(node, ()))
    return False
