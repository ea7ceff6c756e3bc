"""Signal-processing ops under Theano's names: ``tensor.signal.pool``."""
from arignote.tensor.signal import pool  # noqa: F401
