"""When a call with ``allow_gc=True`` frees each intermediate value: right after the thunk
that last reads it, as Theano's garbage collector did, so a call holds at once only what is
still to be read (and its outputs), not every value it made.

The thunks run in the lazy schedule's order (compile/lazy.py): a node inside a branch of an
``ifelse`` runs only when that branch is taken, just before the branching node. A value is
freed in the innermost block that holds its producer and all its readers, after the last
item of that block that reads it (a ``Branch`` item reads what any node inside it reads,
and ends with its branching node's thunk). The executor empties those cells there
(callgen.py); the memory profile frees in the same places (compile/memory.py).
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

from arignote.compile.lazy import Branch
from arignote.graph.basic import Apply, Variable

Path = tuple[int, ...]  # positions through the nested blocks: (p, side, p, side, ..., p)


def free_points(nodes: Sequence[Apply], schedule: list, keep: Collection[Variable]) -> dict[int, list[Variable]]:
    """Thunk index -> the node outputs (none of ``keep``) to free right after that thunk."""
    paths = _paths(schedule)
    item_at = {path: k for k, path in paths.items()}
    readers: dict[Variable, list[Path]] = {}
    for k, node in enumerate(nodes):
        for var in node.inputs:
            readers.setdefault(var, []).append(paths[k])
    frees: dict[int, list[Variable]] = {}
    for k, node in enumerate(nodes):
        for var in node.outputs:
            if var in keep:
                continue
            every = [paths[k], *readers.get(var, [])]
            block = _common_block(every)
            last = max(path[len(block)] for path in every)
            frees.setdefault(item_at[block + (last,)], []).append(var)
    return frees


def _paths(schedule: list, prefix: Path = ()) -> dict[int, Path]:
    """Each thunk's place in the nested schedule (a branching node's is its Branch item's)."""
    found: dict[int, Path] = {}
    for position, item in enumerate(schedule):
        if isinstance(item, Branch):
            found.update(_paths(item.then, prefix + (position, 0)))
            found.update(_paths(item.orelse, prefix + (position, 1)))
            found[item.index] = prefix + (position,)
        else:
            found[item] = prefix + (position,)
    return found


def _common_block(paths: list[Path]) -> Path:
    """The innermost block (a prefix of even length) that every path lies in."""
    block: Path = ()
    while True:
        depth = len(block)
        if any(len(p) <= depth + 2 for p in paths):
            return block
        step = paths[0][depth:depth + 2]
        if any(p[depth:depth + 2] != step for p in paths):
            return block
        block += step
