"""MonitorMode: call the user's functions before and after every node runs (Theano's).

``pre_func(i, node, fn)`` and ``post_func(i, node, fn)`` get the node's position in
the schedule, the node, and ``fn`` whose ``inputs`` and ``outputs`` are the node's
storage cells (``fn.inputs[k][0]`` is the value of input ``k``), as Theano's thunk
gave them. ``detect_nan`` is the post_func Theano's documentation suggests.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any
from collections.abc import Callable

import numpy as np

from arignote.compile.mode import Mode
from arignote.graph.basic import Apply

Hook = Callable[[int, Apply, Any], None]


class MonitorMode(Mode):
    """``mode=MonitorMode(pre_func=..., post_func=...)``; ``optimizer='default'`` is
    ``config.optimizer``, else ``'fast_run'``; ``linker`` is accepted and unused."""

    def __init__(self, pre_func: Hook | None = None, post_func: Hook | None = None,
                 optimizer: Any = "default", linker: Any = None):
        super().__init__("cpu", optimizer, name="MonitorMode")
        self.pre_func, self.post_func = pre_func, post_func

    def wrap_thunks(self, fn: Any, nodes: list[Apply], thunks: list[Callable]) -> list[Callable]:
        storage = fn.storage_map
        return [self._watched(k, node, thunk, SimpleNamespace(
                    inputs=[storage[v] for v in node.inputs], outputs=[storage[v] for v in node.outputs]))
                for k, (node, thunk) in enumerate(zip(nodes, thunks))]

    def _watched(self, k: int, node: Apply, thunk: Callable, cells: SimpleNamespace) -> Callable:
        def watched() -> None:
            if self.pre_func is not None:
                self.pre_func(k, node, cells)
            thunk()
            if self.post_func is not None:
                self.post_func(k, node, cells)
        return watched


def detect_nan(i: int, node: Apply, fn: Any) -> None:
    """A post_func: print the node, its inputs and outputs when an output holds a NaN."""
    from arignote.printing import debugprint
    for output in fn.outputs:
        value = output[0]
        if isinstance(value, np.ndarray) and value.dtype.kind in "fc" and np.isnan(value).any():
            print("*** NaN detected ***")
            debugprint(node)
            print(f"Inputs : {[cell[0] for cell in fn.inputs]}")
            print(f"Outputs: {[cell[0] for cell in fn.outputs]}")
            break
