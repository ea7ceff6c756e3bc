"""Private names of ``theano.tensor`` that Theano's own tests and some user code import."""
from arignote.compile.sharedvalue import tensor_constructor as _shared

__all__ = ["_shared"]
