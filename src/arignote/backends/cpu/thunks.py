"""Thunks for the CPU: closures that run one node on values in storage cells.

Dispatch is on the Op class (``make_thunk.register``): an op with a faster CPU
path registers it here; every other op runs its reference ``perform``.
"""
from __future__ import annotations

from functools import singledispatch
from collections.abc import Callable

from arignote.graph.basic import Apply, Op, perform_of

Thunk = Callable[[], None]


@singledispatch
def make_thunk(op: Op, node: Apply, input_cells: list[list], output_cells: list[list]) -> Thunk:
    return perform_thunk(op, node, input_cells, output_cells)


def perform_thunk(op: Op, node: Apply, input_cells: list[list], output_cells: list[list]) -> Thunk:
    """A thunk that runs the op's reference ``perform`` (with its params, if it has them)."""
    perform = perform_of(node)
    if len(input_cells) == 1:
        (cell,) = input_cells

        def thunk() -> None:
            perform(node, [cell[0]], output_cells)
    elif len(input_cells) == 2:
        first, second = input_cells

        def thunk() -> None:
            perform(node, [first[0], second[0]], output_cells)
    else:
        def thunk() -> None:
            perform(node, [c[0] for c in input_cells], output_cells)
    return thunk
