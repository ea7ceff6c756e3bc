"""Turn: the lock a Function's calls take, as cheap as a lock can be when uncontended.

A call takes the turn by popping the one token from ``token`` (a list; ``pop``
and ``append`` are single atomic operations) and gives it back by appending it.
That costs about 45 ns a call, where ``threading.Lock.acquire``/``release`` cost
about 220 and a ``queue.SimpleQueue`` 125 (measured in the generated call path
with thread CPU time). Only when the token is gone, because a call is running,
does a thread take the slow path: it waits on a condition, and whoever gives the
token back while someone waits wakes one waiter.

No wake-up is lost: a waiter counts itself in ``waiting`` and retries the pop
while holding the condition's lock, and a giver that sees a waiter notifies
under that lock, so a notify cannot fall between a waiter's failed pop and its
wait; a giver that does not see the waiter yet has already put the token back,
so the waiter's pop succeeds. The generated call inlines ``take``/``give``:

    try:
        TAKE()              # self.token.pop
    except IndexError:
        WAIT()              # self.wait
    try:
        <the call>
    finally:
        GIVE(True)          # self.token.append
        if WAITING[0]:      # self.waiting
            WAKE()          # self.wake
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


class Turn:
    """Mutual exclusion for one Function's calls (not reentrant)."""

    __slots__ = ("token", "waiting", "_cond")

    def __init__(self) -> None:
        self.token = [True]
        self.waiting = [0]
        self._cond = threading.Condition(threading.Lock())

    def wait(self) -> None:
        """Block until the token is free, then take it."""
        with self._cond:
            self.waiting[0] += 1
            try:
                while True:
                    try:
                        self.token.pop()
                        return
                    except IndexError:
                        self._cond.wait()
            finally:
                self.waiting[0] -= 1

    def wake(self) -> None:
        with self._cond:
            self._cond.notify()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """The turn, taken as a call takes it, for work that must not overlap a call."""
        try:
            self.token.pop()
        except IndexError:
            self.wait()
        try:
            yield
        finally:
            self.token.append(True)
            if self.waiting[0]:
                self.wake()
