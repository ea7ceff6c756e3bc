"""``theano.tensor.opt``: the decorators that put a user's rewrite into a phase of the default
modes (``register_canonicalize`` and its siblings), with the names code imports beside them.

``@register_specialize`` above a ``@gof.local_optimizer`` adds it to our rewrite database in
that phase, tagged ``fast_run`` (and any tags given), under its function's name, so
``mode.excluding(name)`` turns it off, as in Theano.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable

from arignote.compat.theano.optdb import in2out, local_optimizer, out2in
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.shape import Shape_i, shape_i

__all__ = ["register_canonicalize", "register_stabilize", "register_specialize",
           "register_uncanonicalize", "local_optimizer", "in2out", "out2in", "Shape_i", "shape_i"]


def _registrar(theano_phase: str, phase: str) -> Callable[..., Any]:
    def register(rewriter: Any = None, *tags: str, name: str | None = None, **ignored: Any) -> Any:
        if rewriter is None or isinstance(rewriter, str):  # @register_x('tag', ...) or @register_x()
            more = () if rewriter is None else (rewriter,)
            return lambda rw: register(rw, *more, *tags, name=name)
        rewrites.register(rewriter, phase, "fast_run", *tags, name=name or repr(rewriter))
        return rewriter
    register.__name__ = f"register_{theano_phase}"
    register.__doc__ = (f"Add a rewriter to the {phase} phase of the default modes (tagged fast_run "
                        "and ``tags``); usable as ``@register_...`` or ``@register_...('tag')``.")
    return register


register_canonicalize = _registrar("canonicalize", "canonicalize")
register_stabilize = _registrar("stabilize", "stabilize")
register_specialize = _registrar("specialize", "specialize")
# Theano's uncanonicalize ran after specialize and undid canonical forms for speed: ours is the
# specialize phase.
register_uncanonicalize = _registrar("uncanonicalize", "specialize")
