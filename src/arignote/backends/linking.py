"""Link-time batches: what a backend gathers while one Function links, then does at once.

A backend that compiles kernels registers a hook: a context manager entered
around the making of a Function's thunks. Thunk factories add their node's
kernels to the batch the hook opened in that thread; when the Function has
linked, the hook builds the batch (the GPU layer: all of the function's
kernels as one program per device, at ``function()`` time).
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator


_HOOKS: list[Callable[[], contextlib.AbstractContextManager]] = []


def register(hook: Callable[[], contextlib.AbstractContextManager]) -> Callable[[], contextlib.AbstractContextManager]:
    _HOOKS.append(hook)
    return hook


@contextlib.contextmanager
def link_batch() -> Iterator[None]:
    """Around the thunks of one Function: every registered backend's batch."""
    with contextlib.ExitStack() as stack:
        for hook in _HOOKS:
            stack.enter_context(hook())
        yield
