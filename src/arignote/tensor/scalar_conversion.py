"""The conversions between 0-d tensors and scalar-typed variables, with their gradients.

``tensor_from_scalar(s)`` is the 0-d tensor of the scalar ``s`` (how a scalar
enters a tensor expression: ``as_tensor_variable`` applies it), and
``scalar_from_tensor(t)`` the scalar of a 0-d tensor (``scalar.as_scalar``
applies it). A scalar op's gradient is its tensor rule, taken here through
these two conversions, so no rule is written twice.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Op, Variable
from arignote.scalar.dtypes import DISCRETE
from arignote.scalar.type import ScalarType, get_scalar_type
from arignote.scalar.variable import as_scalar
from arignote.tensor.type import TensorType

__all__ = ["TensorFromScalar", "ScalarFromTensor", "tensor_from_scalar", "scalar_from_tensor"]


class TensorFromScalar(Op):
    """The 0-d tensor of a scalar variable, of the same dtype."""

    __props__ = ()

    def make_node(self, s: Any) -> Apply:
        if isinstance(s, Variable) and not isinstance(s.type, ScalarType):
            raise TypeError(f"tensor_from_scalar takes a scalar variable, got {s.describe()} of type "
                            f"{s.type}: it is a tensor already")
        s = as_scalar(s)
        return Apply(self, [s], [TensorType(s.type.dtype, ())()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(inputs[0], dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [()]

    def grad(self, inputs: list, output_grads: list) -> list:
        if inputs[0].type.dtype in DISCRETE:
            return [None]
        return [as_scalar(output_grads[0])]


class ScalarFromTensor(Op):
    """The scalar variable of a 0-d tensor, of the same dtype."""

    __props__ = ()

    def make_node(self, t: Any) -> Apply:
        from arignote.tensor.variable import as_tensor_variable

        t = as_tensor_variable(t)
        if t.ndim != 0:
            raise TypeError(f"scalar_from_tensor takes a 0-d tensor, got {t.describe()} of type {t.type} "
                            f"({t.ndim} dimensions): index or reduce it to one value first")
        return Apply(self, [t], [get_scalar_type(t.dtype)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(inputs[0])[()]

    def grad(self, inputs: list, output_grads: list) -> list:
        if inputs[0].dtype in DISCRETE:
            return [None]
        from arignote.tensor.variable import as_tensor_variable

        return [as_tensor_variable(output_grads[0])]  # a scalar gradient, or one already a tensor


tensor_from_scalar = TensorFromScalar()
scalar_from_tensor = ScalarFromTensor()


def scalar_gradients(op: Any, inputs: list, output_grads: list) -> list:
    """The gradients of a scalar op's inputs (scalar variables): the Elemwise rule of the
    op on them as 0-d tensors, each result taken back as a scalar (None: no gradient)."""
    from arignote.gradient import input_grads
    from arignote.graph.types import NullType
    from arignote.tensor.elemwise import Elemwise
    from arignote.tensor.variable import as_tensor_variable

    node = Elemwise(op).make_node(*[tensor_from_scalar(i) for i in inputs])
    grads = input_grads(node, [as_tensor_variable(g) for g in output_grads])
    return [g if g is None or isinstance(g.type, NullType) else scalar_from_tensor(g) for g in grads]


def elemwise_grads_from_scalar_rule(op: Any, inputs: list, gz: Variable) -> list:
    """The input gradients of ``Elemwise(op)`` where ``op`` has a ``grad`` of its own written on
    scalar variables (Theano's user scalar ops): that rule applied to scalar stand-ins, and the
    scalar graph it gives rebuilt over the tensors, each scalar op an Elemwise."""
    from arignote.graph.types import DisconnectedType, NullType

    stand_ins = [get_scalar_type(x.dtype)() for x in inputs]
    g_stand_in = get_scalar_type(gz.dtype)()
    grads = op.grad(stand_ins, [g_stand_in])
    mapping: dict[Variable, Variable] = dict(zip(stand_ins, inputs))
    mapping[g_stand_in] = gz
    return [g if g is None or isinstance(g.type, (NullType, DisconnectedType)) else _over_tensors(g, mapping)
            for g in grads]


def _over_tensors(var: Variable, mapping: dict[Variable, Variable]) -> Variable:
    """``var`` (a scalar graph over the keys of ``mapping``) computed over their tensors."""
    from arignote.graph.basic import Constant
    from arignote.graph.traversal import io_toposort
    from arignote.scalar.ops import ScalarOp
    from arignote.tensor.elemwise import Elemwise
    from arignote.tensor.variable import constant

    def tensor_of(v: Variable) -> Variable:
        if v not in mapping:
            if not isinstance(v, Constant):
                raise ValueError(f"the scalar gradient rule used {v.describe()}, which is not one of "
                                 "its inputs: build the gradient from the inputs and output gradients")
            mapping[v] = constant(np.asarray(v.data))
        return mapping[v]

    for node in io_toposort(list(mapping), [var]):
        args = [tensor_of(i) for i in node.inputs]
        if isinstance(node.op, ScalarOp):
            out = Elemwise(node.op)(*args)
        elif isinstance(node.op, (TensorFromScalar, ScalarFromTensor)):
            out = args[0]  # tensors throughout: the conversions drop out
        else:
            out = node.op(*args)
        mapping[node.outputs[0]] = out
    return tensor_of(var)
