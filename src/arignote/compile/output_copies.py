"""Output copies: the ``DeepCopyOp`` node that keeps a function's memory promises.

A function output (or update) whose memory would be a caller's argument, a shared
variable's storage, a constant, or another output's buffer gets a copy node after
every rewrite (GPU placement included), as Theano's ``insert_deepcopy`` placed them:
the copy is part of the graph (``f.maker.fgraph.toposort()`` shows it, a profile
times it, the executor runs it like any node), and the executor hands every
output's buffer over as it is. How a value is copied is one table, ``RULES``, keyed
by the class of the variable's Type: the copying function, and the copy op that runs
where the value lives (a GPU array's copy is a ``GpuDeepCopyOp``, made on its device).
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from arignote.backends.cpu.thunks import Thunk, make_thunk
from arignote.compile.aliasing import alias_roots, overwritten_roots
from arignote.compile.io import In, Out
from arignote.graph.basic import Apply, Op, Type, Variable
from arignote.graph.fg import FunctionGraph

__all__ = ["DeepCopyOp", "deep_copy_op", "CopyRule", "RULES", "register_copy", "copier", "copy_op_for",
           "insert_copies"]

Copy = Callable[[Any], Any]


class DeepCopyOp(Op):
    """A copy of its input that shares no memory with it (Theano's ``deep_copy_op``)."""

    __props__ = ()
    stays_on_cpu = ("the copy of a host value a function hands out, made after GPU placement where "
                    "the value is (a GPU value's copy is a GpuDeepCopyOp)")

    def make_node(self, x: Any) -> Apply:
        if not isinstance(x, Variable):
            raise TypeError(f"deep_copy_op takes a symbolic variable, got {type(x).__name__} {x!r}")
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = copier(node.inputs[0].type)(inputs[0])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return input_shapes


deep_copy_op = DeepCopyOp()


def _by_method(value: Any) -> Any:
    return value.copy()


@dataclass(frozen=True)
class CopyRule:
    """How a value of one Type class is copied: ``of(ttype)`` is the copying function for
    values of ``ttype`` (by default the value's own ``copy()``: arrays, numpy, sparse or on
    a device); ``op(ttype)`` the copy op a graph applies to a variable of it."""

    of: Callable[[Type], Copy] = lambda ttype: _by_method
    op: Callable[[Type], DeepCopyOp] = lambda ttype: deep_copy_op


# Type class -> its rule; a Type's nearest class in the table decides. Arrays copy
# themselves; anything else (a RandomState, a Generic value) is deep-copied.
RULES: dict[type, CopyRule] = {Type: CopyRule(lambda ttype: copy.deepcopy)}


def register_copy(type_class: type, rule: CopyRule) -> None:
    """Values of ``type_class`` (and its subclasses without a rule) are copied by ``rule``."""
    RULES[type_class] = rule


def _rule(ttype: Type) -> CopyRule:
    return next(RULES[c] for c in type(ttype).__mro__ if c in RULES)


def copier(ttype: Type) -> Copy:
    """The function copying a value of ``ttype`` into memory nothing else holds."""
    return _rule(ttype).of(ttype)


def copy_op_for(var: Variable) -> DeepCopyOp:
    """The copy op for ``var``: one that runs where its values live."""
    return _rule(var.type).op(var.type)


def _register_builtin() -> None:
    from arignote.scalar.type import ScalarType
    from arignote.tensor.type import TensorType
    for type_class in (TensorType, ScalarType):
        register_copy(type_class, CopyRule())


_register_builtin()


@make_thunk.register(DeepCopyOp)
def _copy_thunk(op: DeepCopyOp, node: Apply, input_cells: list[list], output_cells: list[list]) -> Thunk:
    """The copy with its function looked up once, at link time."""
    (source,), (target,) = input_cells, output_cells
    copy_value = copier(node.inputs[0].type)

    def thunk() -> None:
        target[0] = copy_value(source[0])
    return thunk


def insert_copies(fgraph: FunctionGraph, inputs: Sequence[In], outputs: Sequence[Out],
                  updated: frozenset) -> None:
    """Put a copy on each output of ``fgraph`` whose memory the caller must not get.

    ``fgraph.outputs`` are the function's ``outputs`` then its updates' values; its
    inputs are the explicit ``inputs`` then the shared variables read, ``updated`` the
    ones updated. An output is copied (Theano's rule, in its order) when a later output
    shares its memory, unless both are ``Out(borrow=True)``: a shared variable that an
    in-place op of the user's graph overwrites counts as such a later output, since the
    call commits the overwritten copy as its value. Otherwise it is copied when its memory
    is a graph input's: a caller's argument unless ``In(borrow=True)``, a shared variable
    or constant unless ``Out(borrow=True)``. An update is copied unless its memory is
    computed by the call, or is the value of a shared variable updated too (``a, b = b, a``).
    Unlike Theano, a function output that is an updated shared variable's old value is
    copied as well: another thread's call may still be reading that buffer.
    """
    roots_of = alias_roots()
    n_out = len(outputs)
    explicit = dict(zip(fgraph.inputs, inputs))
    internal = {v for node in fgraph.apply_nodes for v in node.outputs}
    overwritten = overwritten_roots(fgraph.apply_nodes, roots_of)
    ends = list(fgraph.outputs) + [v for v in fgraph.inputs[len(inputs):]
                                   if v in overwritten and v not in updated]
    borrowed = [spec.borrow for spec in outputs] + [False] * (len(ends) - n_out)
    roots = [roots_of(v) for v in ends]

    def owned_elsewhere(root: Variable, i: int) -> bool:
        if root in explicit:
            return i >= n_out or not explicit[root].borrow
        return root not in updated if i >= n_out else not borrowed[i]

    later: set[Variable] = set()  # the roots of the outputs after i; of the unborrowed ones:
    later_owned: set[Variable] = set()
    for i in reversed(range(len(ends))):
        if i < len(fgraph.outputs):
            var = fgraph.outputs[i]
            if (roots[i] & (later_owned if borrowed[i] else later)
                    or any(owned_elsewhere(r, i) for r in roots[i] - internal)):
                fgraph.change_input("output", i, copy_op_for(var)(var), reason="insert_deepcopy")
        later |= roots[i]
        if not borrowed[i]:
            later_owned |= roots[i]
