"""The CPU backend: numpy thunks."""
from arignote.backends.cpu.thunks import make_thunk

__all__ = ["make_thunk"]
