"""``OrderedUpdates``: a mapping of shared variables to their next values, joined with ``+``.

Scan returns one, and code gathers the updates of several layers with
``updates_a + updates_b``: a shared variable given two different update
expressions is a collision (KeyError), rather than one silently winning.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

from arignote.compile.sharedvalue import SharedVariable

__all__ = ["OrderedUpdates"]


class OrderedUpdates(OrderedDict):
    """Shared variable -> update expression, in insertion order (Python dicts keep it)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()
        self.update(*args, **kwargs)

    def __setitem__(self, key: Any, value: Any) -> None:
        if not isinstance(key, SharedVariable):
            raise TypeError(f"OrderedUpdates keys must be shared variables, got {key!r}")
        super().__setitem__(key, value)

    def update(self, other: Any = None, **kwargs: Any) -> None:  # type: ignore[override]
        """Add ``other``'s pairs; a key already present with another value is a collision."""
        if kwargs:
            raise TypeError("OrderedUpdates keys are shared variables, not keyword names")
        if other is None:
            return
        for key, value in (other.items() if hasattr(other, "items") else other):
            if key in self:
                if self[key] is value:
                    continue
                raise KeyError(f"OrderedUpdates: collision on {key}: it already has the update "
                               f"{self[key]}, and {value} was added; combine the two expressions")
            self[key] = value

    def __add__(self, other: Any) -> OrderedUpdates:
        joined = OrderedUpdates(self)
        joined.update(other)
        return joined

    def __radd__(self, other: Any) -> OrderedUpdates:
        joined = OrderedUpdates(other)
        joined.update(self)
        return joined
