"""``theano.compile.mode``: arignote's ``compile.mode`` (modes, ``OPT_FAST_RUN`` and the other
queries), with Theano's ``optdb`` beside them, where Theano's tests take it
(``theano.compile.mode.optdb.query(theano.compile.mode.OPT_FAST_RUN).optimize(fgraph)``)."""
from arignote.compat.theano.optdb import optdb

__all__ = ["optdb"]
