"""Modes: which rewrites run and which linker builds the thunks.

A mode names tags of the rewrite database: ``FAST_RUN`` takes every rewrite
tagged ``fast_run`` (canonicalize, stabilize, specialize, fusion, in-place),
``FAST_COMPILE`` only the cheap ones tagged ``fast_compile``, and
``Mode(optimizer=None)`` none. ``including``/``excluding`` derive new modes.
"""
from __future__ import annotations

import copy
from typing import Any
from collections.abc import Callable

import arignote.tensor.rewrites  # noqa: F401  (registers the tensor rewrites)
from arignote.config import config
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.db import rewrites

_PRESETS = {"fast_run": ("fast_run",), "fast_compile": ("fast_compile",)}


class Mode:
    """A rewrite selection plus a linker.

    ``optimizer`` is ``'fast_run'``, ``'fast_compile'``, None (no rewrites), or
    a callable that rewrites a FunctionGraph in place.
    """

    def __init__(self, linker: str = "cpu", optimizer: str | Callable[[FunctionGraph], Any] | None = "fast_run",
                 include: tuple[str, ...] = (), exclude: tuple[str, ...] = (), name: str | None = None):
        if linker not in ("cpu", "py"):
            raise ValueError(f"unknown linker {linker!r}: use 'cpu'")
        if isinstance(optimizer, str) and optimizer not in _PRESETS:
            raise ValueError(f"unknown optimizer {optimizer!r}: use 'fast_run', 'fast_compile', "
                             "None, or a callable")
        self.linker = linker
        self.optimizer = optimizer
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.name = name

    def including(self, *tags: str) -> Mode:
        """This mode plus the rewrites carrying any of ``tags``."""
        return self._derived(self.include + tags, tuple(t for t in self.exclude if t not in tags))

    def excluding(self, *tags: str) -> Mode:
        """This mode without the rewrites carrying any of ``tags`` (a phase, a name, or a tag)."""
        return self._derived(tuple(t for t in self.include if t not in tags), self.exclude + tags)

    def _derived(self, include: tuple[str, ...], exclude: tuple[str, ...]) -> Mode:
        # A copy keeps the class and its settings (DebugMode's checks, NanGuardMode's).
        mode = copy.copy(self)
        mode.include, mode.exclude = include, exclude
        return mode

    def wrap_thunks(self, fn: Any, nodes: list, thunks: list[Callable]) -> list[Callable]:
        """The thunks ``fn`` runs, one per node in order: these ones, or the checking
        wrappers of a mode that watches every node (DebugMode, NanGuardMode)."""
        return thunks

    def rewrite(self, fgraph: FunctionGraph) -> None:
        if self.optimizer is None and not self.include:
            return
        if callable(self.optimizer):
            self.optimizer(fgraph)
            if not self.include:
                return
        preset = _PRESETS.get(self.optimizer, ()) if isinstance(self.optimizer, str) else ()
        rewrites.query(preset + self.include, self.exclude).apply(fgraph)

    def __repr__(self) -> str:
        if self.name and not self.include and not self.exclude:
            return self.name
        return (f"Mode(linker={self.linker!r}, optimizer={self.optimizer!r}, "
                f"include={self.include}, exclude={self.exclude})")


FAST_RUN = Mode("cpu", "fast_run", name="FAST_RUN")
FAST_COMPILE = Mode("cpu", "fast_compile", name="FAST_COMPILE")

# Mode names -> the mode (or a function making it); modules defining modes add theirs.
PREDEFINED: dict[str, Mode | Callable[[], Mode]] = {
    "FAST_RUN": FAST_RUN, "FAST_COMPILE": FAST_COMPILE, "Mode": Mode}


def get_mode(mode: Mode | str | None) -> Mode:
    """``None`` means ``config.mode``; strings name the predefined modes."""
    if isinstance(mode, Mode):
        return mode
    name = config.mode if mode is None else mode
    found = PREDEFINED.get(name)
    if found is None:
        raise ValueError(f"unknown mode {name!r}: use one of {', '.join(map(repr, PREDEFINED))} "
                         "or a Mode instance")
    return found if isinstance(found, Mode) else found()
