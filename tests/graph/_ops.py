"""Tensor-free ops for graph tests: the IR must work without any tensor code."""
from __future__ import annotations

from arignote.graph.basic import Apply, Op, Type, Variable


class Thing(Type):
    """A type whose values are anything; ``kind`` tells types apart."""

    def __init__(self, kind: str = "thing"):
        self.kind = kind

    def filter(self, value, strict=False, allow_downcast=None):
        return value

    def __eq__(self, other):
        return type(other) is Thing and other.kind == self.kind

    def __hash__(self):
        return hash((Thing, self.kind))

    def __str__(self):
        return self.kind


class Combine(Op):
    """Takes any number of inputs, returns ``nout`` outputs of type ``Thing(kind)``."""

    __props__ = ("label", "nout")

    def __init__(self, label: str = "f", nout: int = 1):
        self.label = label
        self.nout = nout

    def make_node(self, *inputs: Variable) -> Apply:
        return Apply(self, inputs, [Thing()() for _ in range(self.nout)])

    def perform(self, node, inputs, output_storage):
        for k, cell in enumerate(output_storage):
            cell[0] = (self.label, k, tuple(inputs))


def var(name: str, kind: str = "thing") -> Variable:
    return Thing(kind)(name)


f = Combine("f")
g = Combine("g")
two = Combine("two", nout=2)
