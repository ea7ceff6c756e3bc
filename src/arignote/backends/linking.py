"""Link-time batches: what a backend gathers while one Function links, then does at once.

A backend that compiles kernels registers a hook: a context manager entered
around the making of a Function's thunks. Thunk factories add their node's
kernels to the batch the hook opened in that thread; when the Function has
linked, the hook builds the batch (the GPU layer: all of the function's
kernels as one program per device, at ``function()`` time; the native CPU
kernels: on first need, in the background, swapped in between two of the
Function's calls, so a hook may keep ``owner()``).
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any


_HOOKS: list[Callable[[], contextlib.AbstractContextManager]] = []
_linking = threading.local()


def register(hook: Callable[[], contextlib.AbstractContextManager]) -> Callable[[], contextlib.AbstractContextManager]:
    _HOOKS.append(hook)
    return hook


def owner() -> Any:
    """The Function whose thunks this thread is making (None outside ``link_batch``)."""
    return getattr(_linking, "owner", None)


@contextlib.contextmanager
def link_batch(fn: Any = None) -> Iterator[None]:
    """Around the thunks of one Function ``fn``: every registered backend's batch."""
    outer, _linking.owner = owner(), fn
    try:
        with contextlib.ExitStack() as stack:
            for hook in _HOOKS:
                stack.enter_context(hook())
            yield
    finally:
        _linking.owner = outer
