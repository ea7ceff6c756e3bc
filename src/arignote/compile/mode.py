"""Modes: which rewrites run and which linker builds the thunks."""
from __future__ import annotations

from typing import Any, Callable

from arignote.config import config
from arignote.graph.fg import FunctionGraph

Rewriter = Callable[[FunctionGraph], Any]


class Mode:
    """A rewrite pipeline (``optimizer``) plus a linker name.

    ``optimizer`` is None (no rewrites), a callable taking the FunctionGraph, or
    the name of a predefined pipeline.
    """

    def __init__(self, linker: str = "cpu", optimizer: Rewriter | str | None = "fast_run",
                 name: str | None = None):
        if linker not in ("cpu", "py"):
            raise ValueError(f"unknown linker {linker!r}: use 'cpu'")
        self.linker = linker
        self.optimizer_name = optimizer if isinstance(optimizer, str) or optimizer is None else None
        self.optimizer = _PIPELINES[optimizer] if isinstance(optimizer, str) else optimizer
        self.name = name or f"Mode(linker={linker!r}, optimizer={self.optimizer_name!r})"

    def rewrite(self, fgraph: FunctionGraph) -> None:
        if self.optimizer is not None:
            self.optimizer(fgraph)

    def __repr__(self) -> str:
        return self.name


def _no_rewrites(fgraph: FunctionGraph) -> None:
    """Until the rewrite pipeline lands, both named modes run the graph as built."""


_PIPELINES: dict[str, Rewriter] = {"fast_run": _no_rewrites, "fast_compile": _no_rewrites}


def register_pipeline(name: str, rewriter: Rewriter) -> None:
    _PIPELINES[name] = rewriter


def get_mode(mode: Mode | str | None) -> Mode:
    """``None`` means ``config.mode``; strings name the predefined modes."""
    if isinstance(mode, Mode):
        return mode
    name = config.mode if mode is None else mode
    if name == "FAST_RUN":
        return Mode("cpu", "fast_run", "FAST_RUN")
    if name == "FAST_COMPILE":
        return Mode("cpu", "fast_compile", "FAST_COMPILE")
    if name == "Mode":
        return Mode()
    raise ValueError(f"unknown mode {name!r}: use 'FAST_RUN', 'FAST_COMPILE' or a Mode instance")
