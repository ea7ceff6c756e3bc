"""``jacobian`` and ``hessian``: one gradient per element of an expression.

When the graph fixes the expression's length (and it is small), the
gradients are unrolled into one symbolic graph, which stays differentiable
and rewritable. Otherwise a ``JacobianOp`` computes them at run time: it
compiles the gradient of element ``k`` once and calls it for every ``k``.
(A scan op, once there is one, can take that job.)
"""
from __future__ import annotations

import itertools
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.compile.function import function
from arignote.compile.sharedvalue import SharedVariable
from arignote.gradient import grad
from arignote.graph.basic import Apply, Constant, Op, Variable
from arignote.graph.traversal import graph_inputs
from arignote.tensor.join import stack
from arignote.tensor.shape import flatten, reshape, shape_i, vector_length
from arignote.tensor.shape import shape as _shape
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

UNROLL_LIMIT = 32  # elements; past this one graph per element costs more than a loop
_ids = itertools.count()


def jacobian(expression: Any, wrt: Variable | Sequence[Variable],
             consider_constant: Sequence[Variable] | None = None,
             disconnected_inputs: str = "raise") -> Any:
    """d``expression``/d``wrt``, of shape ``expression.shape + wrt.shape``.

    ``wrt`` is one variable, a list or a tuple (the result has the same form).
    A 0-d expression gives its gradient.
    """
    as_tuple = isinstance(wrt, tuple)
    single = not isinstance(wrt, (list, tuple))
    wrts = [wrt] if single else list(wrt)
    expression = as_tensor_variable(expression)
    if expression.ndim == 0:
        result = grad(expression, wrts, consider_constant, disconnected_inputs)
        return result[0] if single else tuple(result) if as_tuple else result
    # Connectivity (and the checks of grad) on the sum, whose graph is otherwise unused.
    grad(expression.sum(), wrts, consider_constant, disconnected_inputs)
    flat = flatten(expression) if expression.ndim > 1 else expression
    length = vector_length(flat)
    if length is not None and 0 < length <= UNROLL_LIMIT:
        rows = [grad(flat[k], wrts, consider_constant, "ignore") for k in range(length)]
        stacked = [stack([row[i] for row in rows]) for i in range(len(wrts))]
    else:
        stacked = _jacobian_op(flat, wrts, consider_constant)
    if expression.ndim > 1:
        stacked = [reshape(s, [shape_i(expression, d) for d in range(expression.ndim)]
                           + [shape_i(w, d) for d in range(w.ndim)], ndim=expression.ndim + w.ndim)
                   for s, w in zip(stacked, wrts)]
    return stacked[0] if single else tuple(stacked) if as_tuple else stacked


def hessian(cost: Any, wrt: Variable | Sequence[Variable],
            consider_constant: Sequence[Variable] | None = None,
            disconnected_inputs: str = "raise") -> Any:
    """The second derivatives of the scalar ``cost``: for each ``wrt``, of shape
    ``wrt.shape + wrt.shape`` (a matrix for a vector ``wrt``)."""
    as_tuple = isinstance(wrt, tuple)
    single = not isinstance(wrt, (list, tuple))
    wrts = [wrt] if single else list(wrt)
    result = [jacobian(grad(cost, w, consider_constant, disconnected_inputs), w, consider_constant,
                       disconnected_inputs="ignore") for w in wrts]
    return result[0] if single else tuple(result) if as_tuple else result


def _jacobian_op(flat: Variable, wrts: list[Variable], consider_constant: Any) -> list[Variable]:
    roots = [flat] + wrts
    free = [v for v in graph_inputs(roots) if not isinstance(v, Constant)]
    op = JacobianOp(flat, wrts, free, consider_constant)
    outputs = op(shape_i(flat, 0), *free)
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


class JacobianOp(Op):
    """Row ``k`` of each output is the gradient of element ``k`` of a 1-d expression.

    Its inputs are the expression's length and the free variables of its graph
    (shared variables included, so ``givens`` reach them); the gradient graph
    is compiled on first use, with those variables as plain inputs. Each op is
    its own identity: two of them never merge.
    """

    __props__ = ("identity",)

    def __init__(self, flat: Variable, wrts: list[Variable], free: list[Variable],
                 consider_constant: Any):
        self.identity = next(_ids)
        index = TensorType("int64", ())("k")
        rows = grad(flat[index], wrts, consider_constant, "ignore")
        self._free = free
        self._index = index
        self._rows = rows
        self._shapes = [_shape(w) for w in wrts]
        self._wrt_types = [w.type for w in wrts]
        self._compiled: Any = None

    def __str__(self) -> str:
        return f"JacobianOp{{{self.identity}}}"

    def __getstate__(self) -> dict:
        return dict(super().__getstate__(), _compiled=None)  # compiled again where it is loaded

    def __setstate__(self, state: dict) -> None:
        # A loaded op must not take the identity of one made in this process.
        self.__dict__.update(state, identity=next(_ids))

    def make_node(self, length: Any, *free: Any) -> Apply:
        length = as_tensor_variable(length)
        outputs = [TensorType(t.dtype, (False,) + t.broadcastable)() for t in self._wrt_types]
        return Apply(self, [length] + list(free), outputs)

    def _compile(self) -> tuple:
        if self._compiled is None:
            plain = [v.type(v.name) for v in self._free]
            givens = {v: p for v, p in zip(self._free, plain) if isinstance(v, SharedVariable)}
            inputs = [p if isinstance(v, SharedVariable) else v for v, p in zip(self._free, plain)]
            rows = function([self._index] + inputs, self._rows, givens=givens,
                            on_unused_input="ignore")
            shapes = function(inputs, self._shapes, givens=givens, on_unused_input="ignore")
            self._compiled = rows, shapes
        return self._compiled

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        rows_fn, shapes_fn = self._compile()
        length, free = int(inputs[0]), inputs[1:]
        per_row = [rows_fn(np.asarray(k, dtype="int64"), *free) for k in range(length)]
        if length == 0:
            shapes = shapes_fn(*free)
        for i, (cell, out) in enumerate(zip(output_storage, node.outputs)):
            if length:
                cell[0] = np.stack([row[i] for row in per_row]).astype(out.type.dtype, copy=False)
            else:
                cell[0] = np.zeros((0,) + tuple(shapes[i]), dtype=out.type.dtype)

    def grad(self, inputs: list, output_grads: list) -> list:
        raise NotImplementedError("the gradient of a jacobian computed element by element "
                                  "(JacobianOp) is not available: differentiate the expression "
                                  "before taking its jacobian, or give it a length the graph "
                                  f"fixes (at most {UNROLL_LIMIT} elements) so the jacobian is "
                                  "unrolled")
