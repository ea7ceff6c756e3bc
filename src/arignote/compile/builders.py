"""``OpFromGraph``: an Op whose computation is a graph (Theano's ``compile.builders``).

``op = OpFromGraph([x, y], [x + y * 2])`` is an op that ``op(a, b)`` applies like
any other. Shared variables the graph reads become hidden inputs of each node
(so gradients reach them and ``givens`` can replace them). By default the graph
runs as a compiled function of its own; ``inline=True`` puts its nodes in the
graph that uses it when that is compiled, so they are rewritten together.
Its gradient is another OpFromGraph, built once (tensor/grad/builders.py): the
graph's own gradient, or the ``grad_overrides``/``lop_overrides`` given.
"""
from __future__ import annotations

import threading
from typing import Any

from arignote.compile.function import function
from arignote.compile.sharedvalue import SharedVariable
from arignote.graph.basic import Apply, Op, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.graph.traversal import clone_get_equiv, graph_inputs, io_toposort
from arignote.tensor.rewrites.shape_feature import outer_shapes
from arignote.tensor.shape import shape_i
from arignote.tensor.variable import as_tensor_variable

__all__ = ["OpFromGraph"]


class OpFromGraph(Op):
    """An op computing ``outputs`` from ``inputs`` (lists of variables), with Theano's arguments.

    ``grad_overrides``: 'default' (the graph's gradient), a callable ``f(inputs,
    output_grads) -> [one gradient per input]``, an OpFromGraph taking inputs +
    output gradients, a NullType/DisconnectedType variable (for every input), or
    a list with one of 'default', a callable returning that input's gradient,
    or such a variable per input. ``lop_overrides`` is the same with callables
    ``f(inputs, outputs, output_grads)``. ``rop_overrides``: 'default', a callable
    ``f(inputs, eval_points) -> [one R-op per output]``, an OpFromGraph taking inputs
    + eval points, a NullType/DisconnectedType variable, or a list with one of these
    per output (``gradient.Rop`` reaches it through the gradient's gradient).
    ``connection_pattern`` replaces the one read from the graph. Other keyword
    arguments go to ``function()`` when the inner graph is compiled.
    """

    stays_on_cpu = ("OpFromGraph runs its graph as a function of its own (compiled for the same "
                    "device): pass inline=True to put its nodes in this graph")

    def __init__(self, inputs: list, outputs: list, inline: bool = False, lop_overrides: Any = "default",
                 grad_overrides: Any = "default", rop_overrides: Any = "default",
                 connection_pattern: list | None = None, name: str | None = None, **kwargs: Any):
        if not isinstance(outputs, list):
            raise TypeError(f"OpFromGraph: outputs must be a list of variables, got {type(outputs).__name__}")
        for var in list(inputs) + outputs:
            if not isinstance(var, Variable):
                raise TypeError(f"OpFromGraph: inputs and outputs must be symbolic variables, got {var!r}")
        if "updates" in kwargs or "givens" in kwargs:
            raise TypeError("OpFromGraph: updates and givens are not allowed (the op is a pure function)")
        if not _is_default(lop_overrides) and not _is_default(grad_overrides):
            raise ValueError("OpFromGraph: give lop_overrides or grad_overrides, not both")
        self.inputs, self.outputs = list(inputs), outputs
        self.shared_inputs = [v for v in graph_inputs(outputs) if isinstance(v, SharedVariable)]
        proxies = [v.type(v.name) for v in self.shared_inputs]
        equiv = clone_get_equiv(self.inputs, outputs, copy_inputs=False,
                                replace=dict(zip(self.shared_inputs, proxies)))
        self.local_inputs = self.inputs + proxies
        self.local_outputs = [equiv[o] for o in outputs]
        self.input_types = [v.type for v in self.inputs]
        self.output_types = [v.type for v in outputs]
        self.is_inline, self.name, self.kwargs = inline, name, kwargs
        self.lop_type = "grad" if _is_default(lop_overrides) else "lop"
        self.override = grad_overrides if _is_default(lop_overrides) else lop_overrides
        self.rop_overrides = rop_overrides
        self._connection_pattern = connection_pattern
        self.__setstate__({})

    def __getstate__(self) -> dict:
        """The op's definition; its compiled functions are built again where it is loaded."""
        state = dict(self.__dict__)
        for key in ("_fn", "_grad", "_lock"):
            del state[key]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _fn=None, _grad=None, _lock=threading.Lock())

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __str__(self) -> str:
        return f"{self.name or type(self).__name__}{{inline={self.is_inline}}}"

    # ---------------------------------------------------------------- graph
    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != len(self.inputs):
            raise TypeError(f"{self} takes {len(self.inputs)} inputs, got {len(inputs)}")
        inputs = [v if isinstance(v, Variable) else as_tensor_variable(v) for v in inputs]
        for k, (var, want) in enumerate(zip(inputs, self.input_types)):
            if var.type != want:
                converted = want.convert_variable(var)
                if converted is None:
                    raise TypeError(f"{self}: input {k} {var.describe()} is {var.type}, but the graph "
                                    f"expects {want}")
                inputs[k] = converted
        return Apply(self, inputs + self.shared_inputs, [t() for t in self.output_types])

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Which outputs each input reaches, through the inner nodes' own patterns (an
        inner node with several outputs connects an input to only some of them)."""
        if self._connection_pattern is not None:
            return [list(row) for row in self._connection_pattern]
        from arignote.gradient import connected_outputs
        nodes = io_toposort(self.local_inputs, self.local_outputs)
        rows = []
        for inp in self.local_inputs:
            reached = {inp}
            for inner in nodes:
                reached.update(connected_outputs(inner, reached))
            rows.append([out in reached for out in self.local_outputs])
        return rows

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        """The inner graph's shapes in terms of the node's inputs, so ``op(x).shape``
        does not run the op; an output whose shape reads an inner value reads its own."""
        known = {v: tuple(s) for v, s in zip(self.local_inputs, input_shapes) if hasattr(v.type, "ndim")}
        inner = outer_shapes(self.local_outputs, known)
        return [shape if shape is not None else
                tuple(shape_i(out, d) for d in range(out.ndim)) if hasattr(out.type, "ndim") else ()
                for shape, out in zip(inner, node.outputs)]

    # ---------------------------------------------------------------- running
    def inner_function(self) -> Any:
        if self._fn is None:
            with self._lock:
                if self._fn is None:
                    kwargs = {"on_unused_input": "ignore", **self.kwargs}
                    self._fn = function(self.local_inputs, self.local_outputs, **kwargs)
        return self._fn

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        for cell, value in zip(output_storage, self.inner_function()(*inputs)):
            cell[0] = value

    def cached_gradient(self, build: Any) -> Any:
        """``build()`` once (the gradient op, tensor/grad/builders.py), then its result."""
        if self._grad is None:
            with self._lock:
                if self._grad is None:
                    self._grad = build()
        return self._grad


def _is_default(override: Any) -> bool:
    return isinstance(override, str) and override == "default"


@node_rewriter([OpFromGraph])
def inline_ofg_expansion(fgraph: FunctionGraph, node: Apply):
    """An ``inline=True`` OpFromGraph is replaced by its graph."""
    op = node.op
    if not op.is_inline:
        return None
    equiv = clone_get_equiv(op.local_inputs, op.local_outputs, copy_inputs=False,
                            replace=dict(zip(op.local_inputs, node.inputs)))
    return [equiv[o] for o in op.local_outputs]


rewrites.register(inline_ofg_expansion, "canonicalize", "fast_run", "fast_compile")
