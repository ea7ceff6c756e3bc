"""Progress of long tasks (a compile, ``arignote check``) on a terminal.

A task that has run for more than ``DELAY`` seconds shows its current step on
one line of stderr, rewritten in place, and a last line saying how long it
took; a quick task, or any task whose stderr is not a terminal (a log, a
pipe, a test), prints nothing. Tasks started while another runs in the same
thread (the inner function of a loop compiled during a compile) report as
steps of the outer one. The cost of a step is a clock read.
"""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import TextIO
from collections.abc import Iterator

DELAY = 2.0  # seconds a task runs before it shows progress
INTERVAL = 0.1  # seconds between two updates of the line
_clock = time.monotonic  # tests replace it
_local = threading.local()
_write_lock = threading.Lock()  # one line on one terminal: threads take turns


class _Task:
    def __init__(self, label: str, stream: TextIO):
        self.label = label
        self.stream = stream
        self.start = self.last = _clock()
        self.shown = False
        self.terminal = bool(getattr(stream, "isatty", lambda: False)())

    def show(self, text: str) -> None:
        now = _clock()
        if not self.terminal or now - self.start < DELAY or now - self.last < INTERVAL:
            return
        self.last = now
        with _write_lock:
            self.stream.write(f"\r\033[K[arignote] {self.label}: {text} ({now - self.start:.1f} s)")
            self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown:
            with _write_lock:
                self.stream.write(f"\r\033[K[arignote] {self.label}: done in "
                                  f"{_clock() - self.start:.1f} s\n")
                self.stream.flush()


@contextlib.contextmanager
def task(label: str) -> Iterator[None]:
    """Run the body as a task called ``label``; steps inside it report to it."""
    stack = _stack()
    if stack:
        stack.append(label)  # a step of the outer task, with this label in front
        step("")
        try:
            yield
        finally:
            stack.pop()
        return
    current = _Task(label, sys.stderr)
    stack.append(current)
    try:
        yield
    finally:
        stack.pop()
        current.finish()


def step(text: str) -> None:
    """Say what the current task is doing now (nothing when no task runs)."""
    stack = _stack()
    if stack:
        stack[0].show(": ".join([*stack[1:], text]) if text else ": ".join(stack[1:]))


def _stack() -> list:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack
