"""``HostOp``: the base of ops computed by numpy (or LAPACK) on the host, with no GPU kernel.

Placement quotes ``stays_on_cpu`` for such a node (backends/gpu/placement.py),
so ``explain()`` says why it did not move to the device.
"""
from __future__ import annotations

from arignote.graph.basic import Op


class HostOp(Op):
    """An op whose ``perform`` is the only implementation: numpy on the host."""

    __props__ = ()

    host_reason = "numpy runs it on the host"

    @property
    def stays_on_cpu(self) -> str:
        return f"no GPU kernel for {type(self).__name__}: {self.host_reason}"
