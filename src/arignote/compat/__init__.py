"""Aliases that let legacy code run unchanged: ``compat.theano`` maps ``import theano``
onto arignote (see docs/theano-differences.md). Nothing here is imported by arignote
itself, so a process that never installs an alias sees no ``theano``."""
