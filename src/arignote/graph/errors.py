"""Errors about a graph's consistency, shared by the graph layer and the ops that check it."""
from __future__ import annotations

__all__ = ["InconsistencyError"]


class InconsistencyError(Exception):
    """A graph that cannot be run as built: an in-place op would overwrite memory that another
    of its inputs (or another node) still reads. Theano's ``theano.gof.InconsistencyError``;
    ``args[0]`` may be a short kind that code compares, the message its arguments joined."""

    def __str__(self) -> str:
        return ": ".join(map(str, self.args))
