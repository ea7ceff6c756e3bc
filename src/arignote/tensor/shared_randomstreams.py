"""Theano's import path: ``from arignote.tensor.shared_randomstreams import RandomStreams``."""
from arignote.tensor.random.streams import RandomStreams
from arignote.tensor.random.type import RandomStateSharedVariable

__all__ = ["RandomStreams", "RandomStateSharedVariable"]
