"""Signal-processing ops under Theano's names: ``tensor.signal.pool`` and ``tensor.signal.conv``."""
from arignote.tensor.signal import conv, pool  # noqa: F401
