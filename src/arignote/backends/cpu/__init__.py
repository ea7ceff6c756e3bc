"""The CPU backend: numpy thunks, with faster ones registered per Op class."""
from arignote.backends.cpu import elemwise, native_reduce  # noqa: F401  (register thunks)
from arignote.backends.cpu.native import link_batch
from arignote.backends.cpu.thunks import make_thunk

__all__ = ["link_batch", "make_thunk"]
