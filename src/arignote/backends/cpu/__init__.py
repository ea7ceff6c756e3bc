"""The CPU backend: numpy thunks, with faster ones registered per Op class."""
from arignote.backends import linking
from arignote.backends.cpu import elemwise, native_reduce  # noqa: F401  (register thunks)
from arignote.backends.cpu.native import link_batch
from arignote.backends.cpu.thunks import make_thunk

linking.register(link_batch)  # a Function's native kernels: one compiler run, on first need

__all__ = ["link_batch", "make_thunk"]
