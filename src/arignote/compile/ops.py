"""``as_op``: a Python function over numpy arrays as an Op (Theano's ``compile.ops``, which
also holds the copy op functions put on their outputs: compile/output_copies.py).

The quick way to put code the graph cannot express into it: the op calls the
function at run time. It has no gradient (differentiating through it raises)
and, unless ``infer_shape`` is given, no shape inference (``op(x).shape`` runs
it). Its results are checked against the declared types, so a wrong dtype or
rank is an error naming the function rather than a value that breaks a later
node, and a result that shares memory with an input is copied (the op promises
no views, which the in-place rewrites rely on).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.compile.output_copies import DeepCopyOp, deep_copy_op
from arignote.graph.basic import Apply, Op, Type, Variable
from arignote.tensor.variable import as_tensor_variable

__all__ = ["as_op", "FromFunctionOp", "DeepCopyOp", "deep_copy_op"]


class FromFunctionOp(Op):
    """The op ``as_op`` makes: ``fn(*input_arrays)`` returns the output array, or a list
    or tuple of them when there are several ``otypes``."""

    __props__ = ("fn", "itypes", "otypes", "infer_shape_fn")

    def __init__(self, fn: Callable, itypes: Sequence[Type], otypes: Sequence[Type],
                 infer_shape: Callable | None):
        self.fn, self.itypes, self.otypes = fn, tuple(itypes), tuple(otypes)
        self.infer_shape_fn = infer_shape
        self.__name__ = getattr(fn, "__name__", type(self).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)

    def __str__(self) -> str:
        return f"FromFunctionOp{{{self.__name__}}}"

    def __reduce__(self) -> tuple:
        """By the function's name in its module, where ``@as_op`` left this op (Theano's
        way; the function itself cannot be pickled by name, as the op took its place)."""
        return _load_back, (self.fn.__module__, self.fn.__qualname__, self.itypes, self.otypes,
                            self.infer_shape_fn)

    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != len(self.itypes):
            raise TypeError(f"{self} takes {len(self.itypes)} inputs, got {len(inputs)}")
        variables = []
        for k, (var, want) in enumerate(zip(inputs, self.itypes)):
            var = var if isinstance(var, Variable) else as_tensor_variable(var)
            converted = want.convert_variable(var)
            if converted is None:
                raise TypeError(f"{self}: input {k} {var.describe()} is {var.type}, but "
                                f"{self.__name__} was declared with itypes[{k}] = {want}: pass a "
                                "variable of that type (cast it, or declare the type it has)")
            variables.append(converted)
        return Apply(self, variables, [t() for t in self.otypes])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        results = self.fn(*inputs)
        if not isinstance(results, (list, tuple)):
            results = [results]
        if len(results) != len(output_storage):
            raise ValueError(f"{self.__name__} returned {len(results)} values, but as_op declared "
                             f"{len(output_storage)} otypes")
        for k, (cell, value, want) in enumerate(zip(output_storage, results, self.otypes)):
            value = want.filter(value, allow_downcast=False, name=f"output {k} of {self.__name__}",
                                relax=f"declare otypes[{k}] with the dtype it returns")
            if any(isinstance(i, np.ndarray) and np.may_share_memory(value, i) for i in inputs):
                value = value.copy()
            cell[0] = value

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        if self.infer_shape_fn is None:
            return super().infer_shape(fgraph, node, input_shapes)
        return self.infer_shape_fn(node, input_shapes)


def as_op(itypes: Type | Sequence[Type], otypes: Type | Sequence[Type],
          infer_shape: Callable | None = None) -> Callable[[Callable], FromFunctionOp]:
    """Decorator: the function (numpy arrays in, arrays out) becomes an op of these input
    and output types; ``infer_shape(node, input_shapes) -> output_shapes`` is optional.

    ``@as_op(itypes=[T.fmatrix, T.fmatrix], otypes=[T.fmatrix])`` over ``def dot(a, b)``.
    """
    itypes = list(itypes) if isinstance(itypes, (list, tuple)) else [itypes]
    otypes = list(otypes) if isinstance(otypes, (list, tuple)) else [otypes]
    for what, types in (("itypes", itypes), ("otypes", otypes)):
        for t in types:
            if not isinstance(t, Type):
                raise TypeError(f"as_op: {what} must be types such as arignote.tensor.fmatrix, "
                                f"got {t!r}" + (" (a variable: pass its .type)" if isinstance(t, Variable)
                                                else ""))
    if infer_shape is not None and not callable(infer_shape):
        raise TypeError(f"as_op: infer_shape must be a callable (node, input_shapes) -> "
                        f"output_shapes, got {infer_shape!r}")
    return lambda fn: FromFunctionOp(fn, itypes, otypes, infer_shape)


def _load_back(module: str, qualname: str, itypes: tuple, otypes: tuple,
               infer_shape: Callable | None) -> FromFunctionOp:
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found if isinstance(found, FromFunctionOp) else FromFunctionOp(found, itypes, otypes, infer_shape)
