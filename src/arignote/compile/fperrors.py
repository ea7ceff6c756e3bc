"""numpy's floating-point error reports, off while a compiled function runs.

Theano's C code gave inf and nan silently (and Theano set ``np.seterr(all='ignore')``
for the whole process at import); numpy's kernels, which run here where no native
kernel does, would print "RuntimeWarning: divide by zero encountered in log" from
inside a call. NanGuardMode is the tool for catching those values. So each call
switches numpy's error state to "ignore" for its own duration, in its own thread
and context only, and restores the caller's state however the call ends: the
user's numpy code outside a call warns (or raises) as they configured it.

``QUIET`` is (set, state, reset): the generated call does ``token = set(state)``
on entry and ``reset(token)`` on exit. On numpy 2 that is numpy's own context
variable of the error state (about 0.1 µs a call; ``with np.errstate(...)``
costs 2.4 µs); on numpy 1 it enters and leaves an ``np.errstate``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def _errstate_enter(state: dict[str, str]) -> np.errstate:
    quiet = np.errstate(**state)
    quiet.__enter__()
    return quiet


def _errstate_exit(quiet: np.errstate) -> None:
    quiet.__exit__(None, None, None)


ERRSTATE_QUIET: tuple[Callable[[Any], Any], Any, Callable[[Any], None]] = (
    _errstate_enter, {"all": "ignore"}, _errstate_exit)


def _context_variable_quiet() -> tuple[Callable[[Any], Any], Any, Callable[[Any], None]] | None:
    """numpy 2 keeps the error state in a context variable: set it to the state
    ``np.errstate(all="ignore")`` makes, and reset it by the token."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as state
    except ImportError:  # numpy 1
        return None
    with np.errstate(all="ignore"):
        ignore = state.get()
    return state.set, ignore, state.reset


QUIET = _context_variable_quiet() or ERRSTATE_QUIET
