"""Elemwise (a scalar op mapped over broadcast arrays) and DimShuffle."""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Constant, Op, user_variable
from arignote.scalar.composite import Composite
from arignote.scalar.ops import ScalarOp, TransferType
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable


class Elemwise(Op):
    """Apply ``scalar_op`` elementwise, broadcasting as the types say (Theano's rule).

    Inputs of fewer dimensions are padded on the left with broadcastable
    dimensions (a DimShuffle is inserted), as numpy does. Only dimensions a type
    marks broadcastable stretch: a length-1 dimension that is not broadcastable
    must meet length 1, so every gradient, summed over the broadcastable
    dimensions of its input, has that input's shape (``BroadcastRule``).
    ``inplace_pattern`` ``{out: in}`` makes output ``out`` overwrite input
    ``in``; only the in-place rewrite sets it, after proving that input is not
    needed elsewhere.
    """

    __props__ = ("scalar_op", "inplace_pattern")

    def __init__(self, scalar_op: ScalarOp, inplace_pattern: dict[int, int] | None = None,
                 name: str | None = None, nfunc_spec: Any = None, openmp: Any = None):
        """``name`` is the printed name (Theano's signature; ``nfunc_spec`` and ``openmp``,
        its numpy-function and C-compiler hints, are accepted: the thunks are generated)."""
        self.scalar_op = scalar_op
        self.inplace_pattern = tuple(sorted((inplace_pattern or {}).items()))
        self.destroy_map = {o: [i] for o, i in self.inplace_pattern}
        if name is not None:
            self.name = name

    def _props(self) -> tuple:
        # Theano's identity of an in-place op: its scalar op and pattern. tensor.inplace's ops
        # hold the scalar op as a TransferType into the input they overwrite, the in-place
        # rewrite the scalar op itself; where both are valid they make the same output, so
        # they are one op (``inplace.neg_inplace == Elemwise{neg,inplace}``, equal hashes).
        scalar_op = self.scalar_op
        if (isinstance(scalar_op, TransferType) and self.inplace_pattern
                and all(i == scalar_op.index for _, i in self.inplace_pattern)):
            scalar_op = scalar_op.base
        return (scalar_op, self.inplace_pattern)

    def __str__(self) -> str:
        if "name" in vars(self):
            return self.name
        if self.inplace_pattern:
            return f"Elemwise{{{self.scalar_op},inplace}}"
        return f"Elemwise{{{self.scalar_op},no_inplace}}"

    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != self.scalar_op.nin and self.scalar_op.nin >= 0:  # nin < 0: any number (Theano's -1)
            raise TypeError(f"{self.scalar_op} takes {self.scalar_op.nin} inputs, got {len(inputs)}")
        inputs = [as_tensor_variable(i) for i in inputs]
        ndim = max(i.ndim for i in inputs)
        inputs = [pad_left(i, ndim) for i in inputs]
        dtypes = [i.dtype for i in inputs]
        try:
            dtype = self.scalar_op.output_dtype(*dtypes)
        except TypeError:  # again, naming the inputs (describing them costs, so only now)
            names = [f"input {k} ({i.describe()})" for k, i in enumerate(inputs)]
            dtype = self.scalar_op.output_dtype(*dtypes, names=names)
        broadcastable = tuple(all(bs) for bs in zip(*[i.broadcastable for i in inputs])) if ndim else ()
        for _out, inp in self.inplace_pattern:
            if inputs[inp].dtype != dtype or inputs[inp].broadcastable != broadcastable:
                raise TypeError(f"{self}: input {inp} cannot hold the output in place")
        node = Apply(self, inputs, [TensorType(dtype, broadcastable)()])
        node.tag.elemwise_dtypes = self._dtypes(node)
        return node

    @staticmethod
    def shape_rule(node: Apply) -> BroadcastRule:
        """The node's BroadcastRule over all its inputs, found once."""
        rule = getattr(node.tag, "broadcast_rule", None)
        if rule is None:
            rule = node.tag.broadcast_rule = BroadcastRule(node, range(len(node.inputs)))
        return rule

    def _dtypes(self, node: Apply) -> tuple[np.dtype, str | None]:
        """(output dtype, dtype to compute in): fixed by the node's types, so found once."""
        out = node.outputs[0].type.dtype
        return np.dtype(out), self.scalar_op.compute_dtype(out, *[i.type.dtype for i in node.inputs])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        try:
            out_dtype, compute = node.tag.elemwise_dtypes
        except AttributeError:  # a node cloned without make_node
            out_dtype, compute = node.tag.elemwise_dtypes = self._dtypes(node)
        if compute is not None:
            inputs = [i.astype(compute) if i.dtype != compute else i for i in inputs]
        op = self.scalar_op
        cell = output_storage[0]
        first = inputs[0].shape
        shape = first if all(i.shape == first for i in inputs) else self.shape_rule(node)(
            *[i.shape for i in inputs])
        if self.inplace_pattern:
            result = _apply(op, inputs, inputs[self.inplace_pattern[0][1]])
        else:
            target = cell[0]
            if (target is not None and op.ufunc is not None and target.dtype == out_dtype
                    and target.shape == shape):
                result = op.ufunc(*inputs, out=target)
            else:
                result = op.impl(*inputs)
                if type(result) is not np.ndarray:
                    result = np.asarray(result)
        if result.dtype != out_dtype:
            result = result.astype(out_dtype)
        cell[0] = result

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        out_shape = []
        for dim, b in enumerate(node.outputs[0].broadcastable):
            if b:
                out_shape.append(1)
                continue
            candidates = [s[dim] for s, i in zip(input_shapes, node.inputs) if not i.broadcastable[dim]]
            out_shape.append(candidates[0])
        return [tuple(out_shape)]


def _apply(op: ScalarOp, inputs: list, out: np.ndarray | None) -> np.ndarray:
    if out is not None and op.ufunc is not None:  # unsafe: tensor.inplace casts into its input
        return op.ufunc(*inputs, out=out, casting="unsafe")
    result = op.impl(*inputs)
    if out is not None:
        np.copyto(out, result, casting="unsafe")
        return out
    return result if type(result) is np.ndarray else np.asarray(result)


class BroadcastRule:
    """The output shape of an elementwise node from its inputs' shapes, by the types.

    In each dimension, the inputs whose type does not mark it broadcastable must
    all have the same length, which is the output's; broadcastable dimensions
    have length 1 and stretch. This is Theano's rule, stricter than numpy's
    (which stretches any length-1 dimension): the types, and so the gradients,
    stay true to the values. Call it only when the shapes differ (equal shapes
    need no check). ``positions`` are the inputs whose shapes are passed; the
    others must be broadcastable in every dimension. Plain data only, so it
    pickles with the node it is kept on.
    """

    __slots__ = ("node", "positions", "dims")

    def __init__(self, node: Apply, positions: Sequence[int]):
        self.node = node
        self.positions = tuple(positions)
        patterns = [node.inputs[p].type.broadcastable for p in self.positions]
        # For each dimension, which of the passed shapes must agree there.
        self.dims = tuple(tuple(k for k, b in enumerate(patterns) if not b[d])
                          for d in range(len(node.outputs[0].type.broadcastable)))

    def __call__(self, *shapes: tuple) -> tuple:
        out = []
        for d, agree in enumerate(self.dims):
            if not agree:
                out.append(1)
                continue
            n = shapes[agree[0]][d]
            for k in agree[1:]:
                if shapes[k][d] != n:
                    raise self.mismatch(shapes, d)
            out.append(n)
        return tuple(out)

    def source(self, names: Sequence[str]) -> tuple[str, str]:
        """The rule as Python expressions over the shapes called ``names``: (the condition
        under which they fit, the output shape then), for generated code."""
        checks = [f"{names[k]}[{d}] == {names[agree[0]]}[{d}]"
                  for d, agree in enumerate(self.dims) for k in agree[1:]]
        dims = [f"{names[agree[0]]}[{d}]" if agree else "1" for d, agree in enumerate(self.dims)]
        return " and ".join(checks) or "True", f"({', '.join(dims)}{',' if len(dims) == 1 else ''})"

    def mismatch(self, shapes: Sequence[tuple], d: int) -> ValueError:
        """The error for shapes that disagree in dimension ``d``: it names the user's variables."""
        entries = [(self.node.inputs[p], s) for p, s in zip(self.positions, shapes)]
        entries = [(var, s) for k, (var, s) in enumerate(entries) if k in self.dims[d]]
        # A length-1 dimension the type does not let broadcast is the likely mistake.
        ones = [(var, s) for var, s in entries if s[d] == 1]
        longer = [(var, s) for var, s in entries if s[d] != 1]
        label = _label(self.node)
        if ones and longer:
            (a, sa), (b, sb) = ones[0], longer[0]
            hint = _python_name(a)
            return ValueError(
                f"{label}: {_describe(a)} has shape {sa} and {_describe(b)} has shape {sb}. "
                f"Dimension {d} of {_describe(a)} has length 1 but is not broadcastable in its type "
                f"({a.type.describe()}), so it is not stretched to {sb[d]}: only dimensions the types "
                "mark broadcastable are (Theano's rule, which keeps every gradient the shape of its "
                f"input). To broadcast it there, say so in its type: tensor.addbroadcast({hint}, {d}), "
                f"or build it with tensor.shape_padleft({hint}) or {hint}.dimshuffle('x', ...) (or as "
                "a tensor.row() / tensor.col()); otherwise fix the shapes")
        (a, sa), (b, sb) = entries[0], next(e for e in entries if e[1][d] != entries[0][1][d])
        return ValueError(
            f"{label}: {_describe(a)} has shape {sa} and {_describe(b)} has shape {sb}, which "
            f"differ in dimension {d} ({sa[d]} and {sb[d]}): elementwise operands must have equal "
            "lengths in every dimension their types do not mark broadcastable")


def _label(node: Apply) -> str:
    scalar_op = node.op.scalar_op
    if not isinstance(scalar_op, Composite):
        return f"elementwise {scalar_op.name}"
    where = node.outputs[0].tag.trace
    return "the fused elementwise expression" + (f" built at {where}" if where else "")


def _describe(var: Any) -> str:
    var = user_variable(var)
    if isinstance(var, Constant) and var.name is None:
        text = str(np.asarray(var.data))
        return f"the constant {text if len(text) <= 30 else text[:27] + '...'}"
    return var.describe()


def _python_name(var: Any) -> str:
    """How to write ``var`` in the suggested fix: its name when it is an identifier."""
    name = user_variable(var).name
    return name if name and name.isidentifier() else "x"


def pad_left(var: Any, ndim: int) -> Any:
    """``var`` with broadcastable dimensions added on the left up to ``ndim``."""
    if var.ndim == ndim:
        return var
    pattern = ["x"] * (ndim - var.ndim) + list(range(var.ndim))
    return DimShuffle(var.broadcastable, pattern)(var)


class DimShuffle(Op):
    """Permute dimensions, drop length-1 ones and add broadcastable ones (``'x'``).

    The output is always a view of the input, which ``view_map`` declares.
    """

    __props__ = ("input_broadcastable", "new_order")
    view_map = {0: [0]}

    def __init__(self, input_broadcastable: Sequence[bool], new_order: Sequence[int | str]):
        self.input_broadcastable = tuple(bool(b) for b in input_broadcastable)
        order = []
        for item in new_order:
            if item == "x":
                order.append("x")
            elif isinstance(item, (int, np.integer)) and 0 <= item < len(self.input_broadcastable):
                order.append(int(item))
            else:
                raise ValueError(f"dimshuffle pattern {tuple(new_order)}: {item!r} is neither 'x' "
                                 f"nor an axis of the {len(self.input_broadcastable)}-d input")
        self.new_order = tuple(order)
        kept = [i for i in order if i != "x"]
        if len(set(kept)) != len(kept):
            raise ValueError(f"dimshuffle pattern {self.new_order} repeats an axis: an axis may not "
                             "appear twice")
        self.drop = tuple(i for i in range(len(self.input_broadcastable)) if i not in kept)
        for axis in self.drop:
            if not self.input_broadcastable[axis]:
                raise ValueError(
                    f"dimshuffle pattern {self.new_order} drops axis {axis}, which is not known to "
                    "have length 1: list it in the pattern, or make it broadcastable first "
                    "(tensor.addbroadcast / specify the shape)")
        # Precomputed numpy steps: index away dropped axes, transpose, then add new axes.
        remaining = [i for i in range(len(self.input_broadcastable)) if i not in self.drop]
        self._drop_index = tuple(0 if i in self.drop else slice(None)
                                 for i in range(len(self.input_broadcastable))) + (Ellipsis,)
        self._perm = tuple(remaining.index(i) for i in kept)
        self._expand = tuple(None if i == "x" else slice(None) for i in order)
        self.passes_value = kept == sorted(kept)  # axes kept in order: errors name the input

    def __str__(self) -> str:
        return f"InplaceDimShuffle{{{','.join(map(str, self.new_order))}}}"

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.broadcastable != self.input_broadcastable:
            if x.ndim != len(self.input_broadcastable) or any(
                    b and not xb for b, xb in zip(self.input_broadcastable, x.broadcastable)):
                raise TypeError(f"{self} expects input of broadcastable pattern "
                                f"{self.input_broadcastable}, got {x} of type {x.type}")
        broadcastable = tuple(True if i == "x" else x.broadcastable[i] for i in self.new_order)
        return Apply(self, [x], [TensorType(x.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        y = inputs[0]
        if self.drop:
            y = y[self._drop_index]
        if self._perm != tuple(range(len(self._perm))):
            y = y.transpose(self._perm)
        if "x" in self.new_order:
            y = y[self._expand]
        output_storage[0][0] = y

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = input_shapes[0]
        return [tuple(1 if i == "x" else shape[i] for i in self.new_order)]


_REDUCTION_OPS = ("CAReduce", "Sum", "Prod", "ProdWithoutZeros")


def __getattr__(name: str) -> Any:
    """Theano kept its reduction ops here (``tensor.elemwise.CAReduce``, ``Sum``, ``Prod``,
    ``ProdWithoutZeros``);
    ours live in ``tensor.reduction``, which builds on this module (hence the late import)."""
    if name in _REDUCTION_OPS:
        from arignote.tensor import reduction
        return getattr(reduction, name)
    raise AttributeError(f"module 'arignote.tensor.elemwise' has no attribute {name!r}")
