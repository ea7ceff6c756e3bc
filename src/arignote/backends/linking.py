"""Link-time batches: what a backend gathers while one Function links, then does at once.

A backend that compiles kernels registers a hook: a context manager entered
around the making of a Function's thunks. Thunk factories add their node's
kernels to the batch the hook opened in that thread; when the Function has
linked, the hook builds the batch (the GPU layer: all of the function's
kernels as one program per device, at ``function()`` time; the native CPU
kernels: on first need, in the background, swapped in between two of the
Function's calls, so a hook may keep ``owner()``).

A thunk factory may also add a call check (:func:`add_call_check`): run by
the Function after its thunks on every call, before it writes any output or
update (the GPU index kernels' bounds statuses, read back once per call).
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from arignote.graph.basic import Apply


_HOOKS: list[Callable[[], contextlib.AbstractContextManager]] = []
_linking = threading.local()  # the linking Function, its call checks and memo, per thread


def register(hook: Callable[[], contextlib.AbstractContextManager]) -> Callable[[], contextlib.AbstractContextManager]:
    _HOOKS.append(hook)
    return hook


def owner() -> Any:
    """The Function whose thunks this thread is making (None outside ``link_batch``)."""
    return getattr(_linking, "owner", None)


def add_call_check(node: Apply, check: Callable[[], None], discard: Callable[[], None]) -> None:
    """Have the Function linking in this thread call ``check()`` after its thunks on each
    call (its errors reported as ``node``'s, unless the error names another node as its
    ``failed_node``), and ``discard()`` when a call fails (what it left for the check
    belongs to no later call)."""
    _linking.found.append((node, check, discard))


def link_memo() -> dict | None:
    """A dict for this thread's linking Function (what its thunk factories share), or None
    when no Function is linking."""
    return getattr(_linking, "memo", None)


@contextlib.contextmanager
def link_batch(fn: Any = None) -> Iterator[list[tuple[Apply, Callable[[], None], Callable[[], None]]]]:
    """Around the thunks of one Function ``fn``: every registered backend's batch. Yields
    the call checks the thunk factories add."""
    outer = owner(), getattr(_linking, "found", None), getattr(_linking, "memo", None)
    found: list = []
    _linking.owner, _linking.found, _linking.memo = fn, found, {}
    try:
        with contextlib.ExitStack() as stack:
            for hook in _HOOKS:
                stack.enter_context(hook())
            yield found
    finally:
        _linking.owner, _linking.found, _linking.memo = outer
