"""``tensor.io``: ``load``, a tensor read from a ``.npy`` file when the function runs.

The path is a graph input (a ``Generic`` variable holding a string), so one
compiled function reads whichever file it is given. ``mmap_mode='c'`` maps the
file copy-on-write: only the parts read come from disk, and in-place ops
downstream write to private pages, never to the file; numpy's other modes
would let the graph modify or depend on the file and are refused.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Op, Variable
from arignote.graph.types import Generic
from arignote.tensor.type import TensorType

__all__ = ["load", "LoadFromDisk"]


class LoadFromDisk(Op):
    """Read the ``.npy`` file named by the input; the array must have ``dtype`` and
    ``len(broadcastable)`` dimensions (length 1 where broadcastable)."""

    __props__ = ("dtype", "broadcastable", "mmap_mode")
    foldable = False  # the file's content belongs to the call, not to the graph

    def __init__(self, dtype: str, broadcastable: Sequence[bool], mmap_mode: str | None = None):
        self.dtype = np.dtype(dtype).name
        self.broadcastable = tuple(bool(b) for b in broadcastable)
        if mmap_mode not in (None, "c"):
            raise ValueError(f"load: mmap_mode must be None (read into memory) or 'c' (mapped "
                             f"copy-on-write), got {mmap_mode!r}: the graph may overwrite its "
                             "input in place, which must never reach the file")
        self.mmap_mode = mmap_mode

    def make_node(self, path: Any) -> Apply:
        if not isinstance(getattr(path, "type", None), Generic):
            raise TypeError(f"load: the path must be a Generic variable (Variable(Generic())) that "
                            f"holds the file name, got {path!r}")
        return Apply(self, [path], [TensorType(self.dtype, self.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        (path,) = inputs
        if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
            raise TypeError(f"load: the path input must be a file name, got {type(path).__name__} {path!r}")
        value = np.load(path, mmap_mode=self.mmap_mode)
        out = node.outputs[0]
        if value.dtype != self.dtype or value.ndim != len(self.broadcastable):
            raise TypeError(f"load: {path} holds a {value.ndim}d {value.dtype} array, but the graph "
                            f"expects {out.type.describe()}: pass load() that dtype and pattern")
        if any(b and n != 1 for b, n in zip(self.broadcastable, value.shape)):
            raise ValueError(f"load: {path} holds shape {value.shape}, which has a length other than "
                             f"1 where the pattern {self.broadcastable} is broadcastable")
        output_storage[0][0] = value

    def __str__(self) -> str:
        return f"Load{{dtype: {self.dtype}, broadcastable: {self.broadcastable}, mmap: {self.mmap_mode}}}"


def load(path: Variable, dtype: str, broadcastable: Sequence[bool], mmap_mode: str | None = None
         ) -> Variable:
    """The array in the ``.npy`` file named by ``path`` (a Generic variable), of ``dtype``
    and ``broadcastable`` pattern; ``mmap_mode`` None (read it) or ``'c'`` (map it)."""
    return LoadFromDisk(dtype, broadcastable, mmap_mode)(path)
