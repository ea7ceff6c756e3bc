"""numpy's floating-point error reports, off while a compiled function runs.

Theano's C code gave inf and nan silently (and Theano set ``np.seterr(all='ignore')``
for the whole process at import); numpy's kernels, which run here where no native
kernel does, would print "RuntimeWarning: divide by zero encountered in log" from
inside a call. NanGuardMode is the tool for catching those values. So each call
switches numpy's error state to "ignore" for its own duration, in its own thread
and context only, and restores the caller's state however the call ends: the
user's numpy code outside a call warns (or raises) as they configured it.

``QUIET`` is (get, set, state, reset): the generated call does
``token = get() is not state and set(state)`` on entry and ``reset(token)`` on exit
when it set it. On numpy 2 that is numpy's own context variable of the error state
(0.25 µs a call; 0.02 µs for a call inside a call, a scan's inner function; ``with
np.errstate(...)`` costs 1.5 µs); on numpy 1 it enters and leaves an ``np.errstate``.
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


Quiet = tuple[Callable[[], Any], Callable[[Any], Any], Any, Callable[[Any], None]]
# numpy 1: ``dict()`` is never the state, so every call enters an errstate.
ERRSTATE_QUIET: Quiet = (dict, _errstate_enter, {"all": "ignore"}, _errstate_exit)


def _context_variable_quiet() -> Quiet | None:
    """numpy 2 keeps the error state in a context variable: set it to the state
    ``np.errstate(all="ignore")`` makes, and reset it by the token."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as state
    except ImportError:  # numpy 1
        return None
    with np.errstate(all="ignore"):
        ignore = state.get()
    return state.get, state.set, ignore, state.reset


QUIET = _context_variable_quiet() or ERRSTATE_QUIET
