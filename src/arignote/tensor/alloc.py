"""Ops that make new arrays: alloc and fill, zeros/ones, arange, eye.

Shapes may be Python ints or symbolic integer scalars, so one graph serves any
size. Every op here writes a fresh array (never a view of an input), which is
why none of them declares a ``view_map``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.config import config
from arignote.graph.basic import Apply, Constant, Op, Variable
from arignote.scalar.dtypes import COMPLEX, INTEGER, upcast
from arignote.scalar.ops import ScalarOp
from arignote.tensor import math as _math
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.shape import Shape, Shape_i, shape_i, vector_entry, vector_length
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["Alloc", "AllocEmpty", "ARange", "Eye", "Tri", "alloc", "arange", "eye", "fill", "full", "full_like",
           "identity_like", "ones", "ones_like", "second", "tri", "tril", "triu", "zeros", "zeros_like"]


# ------------------------------------------------------------------ fill / second
def _second_dtype(model: str, value: str) -> str:
    return value


class _Second(ScalarOp):
    """Theano's ``second``: the second input, broadcast against the first.

    An elementwise op (not a special one) so that fusion and the GPU renderer
    treat ``fill`` like any other Elemwise; its kernel expression is ``{1}``.
    The model's values are never read, so its dtype is never converted.
    """

    def __init__(self) -> None:
        super().__init__("second", 2, _second_impl, _second_dtype, c_expr="{1}")

    def compute_dtype(self, out_dtype: str, *dtypes: str) -> None:
        return None


def _second_impl(model: np.ndarray, value: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(model.shape, value.shape), dtype=value.dtype)
    out[...] = value
    return out


_SECOND = Elemwise(_Second())


# Theano's ``fill``/``second``: the Elemwise op itself, called on tensors (``node.op == fill``
# tells a fill node, as Theano's tests check of the zero gradients).
second = fill = _math.ElemwiseFunction(_SECOND.scalar_op)
second.__doc__ = "``value`` broadcast to the shape of ``model`` (and of itself), in ``value``'s dtype."


def zeros_like(x: Any, dtype: str | None = None) -> Variable:
    """Zeros of ``x``'s shape, in ``dtype`` (default: ``x``'s dtype)."""
    return full_like(x, 0, dtype)


def ones_like(x: Any, dtype: str | None = None) -> Variable:
    """Ones of ``x``'s shape, in ``dtype`` (default: ``x``'s dtype)."""
    return full_like(x, 1, dtype)


def full_like(x: Any, fill_value: Any, dtype: str | None = None) -> Variable:
    """``fill_value`` in ``x``'s shape, in ``dtype`` (default: ``x``'s dtype)."""
    x = as_tensor_variable(x)
    return second(x, _value_of_dtype(fill_value, _dtype_name(dtype) or x.dtype))


# -------------------------------------------------------------------------- alloc
class Alloc(Op):
    """Broadcast ``value`` to the shape given by the other inputs (int64 scalars).

    The output is a new array; ``value`` must broadcast to the shape with numpy's
    rules. A dimension is broadcastable in the output type only when its length
    is the constant 1.
    """

    __props__ = ()

    def make_node(self, value: Any, *shape: Any) -> Apply:
        value = as_tensor_variable(value)
        dims = [as_shape_scalar(s, f"alloc shape[{i}]") for i, s in enumerate(shape)]
        if len(dims) < value.ndim:
            raise TypeError(f"alloc: the value {value.describe()} has {value.ndim} dimensions but the "
                            f"shape {tuple(map(str, dims))} has only {len(dims)}: give a length for "
                            "each dimension of the result")
        broadcastable = tuple(_constant_int(d) == 1 for d in dims)
        return Apply(self, [value] + dims, [TensorType(value.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        value = inputs[0]
        shape = tuple(int(s) for s in inputs[1:])
        if any(n < 0 for n in shape):
            raise ValueError(f"alloc: negative length in shape {shape}")
        cell = output_storage[0]
        out = cell[0]
        if out is None or out.shape != shape:
            out = np.empty(shape, dtype=node.outputs[0].type.numpy_dtype)
        try:
            out[...] = value
        except ValueError:
            raise ValueError(f"alloc: the value {node.inputs[0].describe()} of shape {value.shape} "
                             f"does not broadcast to the shape {shape}") from None
        cell[0] = out

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [tuple(node.inputs[1:])]


# ``alloc(value, *shape)``: ``value`` broadcast to ``shape``, whose lengths are ints or symbolic
# int scalars. The op itself, as in Theano (``node.op == tensor.alloc`` holds for its nodes).
alloc = Alloc()


class AllocEmpty(Op):
    """An array of ``dtype`` and the given shape whose contents are left as they are in memory
    (numpy.empty, Theano's AllocEmpty): for results that are written before they are read.
    Never folded into a constant; no gradient flows to the lengths."""

    __props__ = ("dtype",)
    foldable = False

    def __init__(self, dtype: str):
        self.dtype = _dtype_name(dtype)

    def make_node(self, *shape: Any) -> Apply:
        dims = [as_shape_scalar(s, f"AllocEmpty shape[{i}]") for i, s in enumerate(shape)]
        broadcastable = tuple(_constant_int(d) == 1 for d in dims)
        return Apply(self, dims, [TensorType(self.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        shape = tuple(int(s) for s in inputs)
        if any(n < 0 for n in shape):
            raise ValueError(f"AllocEmpty: negative length in shape {shape}")
        if output_storage[0][0] is None or output_storage[0][0].shape != shape:
            output_storage[0][0] = np.empty(shape, dtype=self.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [tuple(node.inputs)]


def zeros(shape: Any, dtype: str | None = None) -> Variable:
    """Zeros of ``shape`` (an int, a sequence, or a symbolic int vector such as ``x.shape``)."""
    return full(shape, 0, _dtype_name(dtype) or config.floatX)


def ones(shape: Any, dtype: str | None = None) -> Variable:
    """Ones of ``shape`` (an int, a sequence, or a symbolic int vector such as ``x.shape``)."""
    return full(shape, 1, _dtype_name(dtype) or config.floatX)


def full(shape: Any, fill_value: Any, dtype: str | None = None) -> Variable:
    """``fill_value`` broadcast to ``shape``; ``dtype`` defaults to the value's own."""
    dtype = _dtype_name(dtype)
    value = as_tensor_variable(fill_value) if dtype is None else _value_of_dtype(fill_value, dtype)
    return alloc(value, *shape_list(shape))


# -------------------------------------------------------------------------- arange
class ARange(Op):
    """``numpy.arange(start, stop, step)`` of a fixed dtype; the bounds are scalars."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str):
        self.dtype = np.dtype(dtype).name

    def make_node(self, start: Any, stop: Any, step: Any) -> Apply:
        args = [_real_scalar(v, f"arange {name}") for v, name in
                ((start, "start"), (stop, "stop"), (step, "step"))]
        if isinstance(args[2], Constant) and args[2].data == 0:
            raise ValueError("arange: the step is 0; use a nonzero step")
        return Apply(self, args, [TensorType(self.dtype, (False,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        start, stop, step = (v.item() for v in inputs)
        if step == 0:
            raise ValueError(f"arange: the step {node.inputs[2].describe()} is 0; use a nonzero step")
        output_storage[0][0] = np.arange(start, stop, step, dtype=self.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        start, stop, step = node.inputs
        if all(isinstance(v, Constant) for v in node.inputs):
            return [(int(np.arange(start.data.item(), stop.data.item(), step.data.item()).size),)]
        if all(v.dtype in INTEGER for v in node.inputs):
            start, stop, step = (_math.cast(v, "int64") for v in node.inputs)
            # ceil((stop - start) / step) in exact integer arithmetic, any sign of step.
            length = _math.neg(_math.int_div(_math.sub(start, stop), step))
        else:
            span = _math.sub(_math.cast(stop, "float64"), _math.cast(start, "float64"))
            length = _math.cast(_math.ceil(_math.true_div(span, _math.cast(step, "float64"))), "int64")
        return [(_math.maximum(length, constant(0, dtype="int64")),)]


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: str | None = None) -> Variable:
    """Evenly spaced values in ``[start, stop)``, like ``numpy.arange``.

    The dtype, unless given, is Theano's (its default cast_policy, 'custom', the only
    one here): the upcast of the arguments' dtypes, with any integer widened to int64
    (uint64 when all are unsigned), so ``arange(10)`` cannot overflow. One op per
    dtype is shared by every call.
    """
    if stop is None:
        start, stop = 0, start
    args = [_real_scalar(v, f"arange {name}") for v, name in
            ((start, "start"), (stop, "stop"), (step, "step"))]
    dtype = _dtype_name(dtype) or _arange_dtype([a.dtype for a in args])
    if dtype not in _ARANGE_OPS:
        _ARANGE_OPS[dtype] = ARange(dtype)
    return _ARANGE_OPS[dtype](*args)


_ARANGE_OPS: dict[str, ARange] = {}


def _arange_dtype(dtypes: list[str]) -> str:
    dtype = upcast(*dtypes)
    if dtype in INTEGER:
        return "uint64" if dtype.startswith("u") else "int64"
    return dtype


# ----------------------------------------------------------------------------- eye
class Eye(Op):
    """``numpy.eye(n, m, k)`` of a fixed dtype; ``n``, ``m``, ``k`` are int64 scalars."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str | None = None):
        self.dtype = np.dtype(_dtype_name(dtype) or config.floatX).name

    def make_node(self, n: Any, m: Any, k: Any) -> Apply:
        n = as_shape_scalar(n, "eye n")
        m = as_shape_scalar(m, "eye m")
        k = as_int_scalar(k, "eye k")
        broadcastable = (_constant_int(n) == 1, _constant_int(m) == 1)
        return Apply(self, [n, m, k], [TensorType(self.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        n, m, k = (int(v) for v in inputs)
        if n < 0 or m < 0:
            raise ValueError(f"eye: negative size ({n}, {m})")
        output_storage[0][0] = np.eye(n, m, k, dtype=self.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(node.inputs[0], node.inputs[1])]


def eye(n: Any, m: Any = None, k: Any = 0, dtype: str | None = None) -> Variable:
    """An ``n`` x ``m`` matrix with ones on diagonal ``k``; dtype defaults to floatX."""
    return Eye(_dtype_name(dtype) or config.floatX)(n, n if m is None else m, k)


class Tri(Op):
    """``numpy.tri(n, m, k)`` (ones on and below diagonal ``k``) of a fixed dtype."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str | None = None):
        self.dtype = np.dtype(_dtype_name(dtype) or config.floatX).name

    def make_node(self, n: Any, m: Any, k: Any) -> Apply:
        n = as_shape_scalar(n, "tri n")
        m = as_shape_scalar(m, "tri m")
        k = as_int_scalar(k, "tri k")
        broadcastable = (_constant_int(n) == 1, _constant_int(m) == 1)
        return Apply(self, [n, m, k], [TensorType(self.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        n, m, k = (int(v) for v in inputs)
        if n < 0 or m < 0:
            raise ValueError(f"tri: negative size ({n}, {m})")
        output_storage[0][0] = np.tri(n, m, k, dtype=self.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(node.inputs[0], node.inputs[1])]


def tri(N: Any, M: Any = None, k: Any = 0, dtype: str | None = None) -> Variable:
    """An ``N`` x ``M`` matrix with ones on and below diagonal ``k`` (``numpy.tri``);
    dtype defaults to floatX."""
    return Tri(_dtype_name(dtype) or config.floatX)(N, N if M is None else M, k)


def tril(m: Any, k: Any = 0) -> Variable:
    """``m`` with the entries above diagonal ``k`` zeroed (``numpy.tril``; ``m`` a matrix)."""
    m = _matrix(m, "tril")
    return _math.mul(m, tri(shape_i(m, 0), shape_i(m, 1), k, dtype=m.dtype))


def triu(m: Any, k: Any = 0) -> Variable:
    """``m`` with the entries below diagonal ``k`` zeroed (``numpy.triu``; ``m`` a matrix)."""
    m = _matrix(m, "triu")
    return _math.mul(m, _math.sub(constant(np.ones((), m.dtype)),
                                  tri(shape_i(m, 0), shape_i(m, 1), _below(k), dtype=m.dtype)))


def _below(k: Any) -> Any:
    return k - 1 if isinstance(k, (int, np.integer)) else _math.sub(k, constant(1, dtype=k.dtype))


def _matrix(m: Any, what: str) -> Variable:
    m = as_tensor_variable(m)
    if m.ndim != 2:
        raise TypeError(f"{what} expects a matrix, got {m.describe()} of type {m.type}")
    return m


def identity_like(x: Any) -> Variable:
    """The identity matrix of ``x``'s shape and dtype (``x`` is a matrix)."""
    x = as_tensor_variable(x)
    if x.ndim != 2:
        raise TypeError(f"identity_like expects a matrix, got {x.describe()} of type {x.type}: "
                        "use eye(n, m) for a matrix of another shape")
    return eye(shape_i(x, 0), shape_i(x, 1), 0, dtype=x.dtype)


# --------------------------------------------------------------------------- helpers
def as_int_scalar(value: Any, what: str) -> Variable:
    """``value`` as a 0-d integer variable (Python ints become int64 constants)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got the boolean {value!r}")
    if isinstance(value, (int, np.integer)):
        return constant(int(value), dtype="int64")
    if not isinstance(value, Variable):
        raise TypeError(f"{what} must be an int or a symbolic integer scalar, got "
                        f"{type(value).__name__} {value!r}")
    var = as_tensor_variable(value)
    if var.ndim != 0 or var.dtype not in INTEGER:
        raise TypeError(f"{what} must be an integer scalar, got {var.describe()} of type {var.type}: "
                        "pass an int, or a symbolic integer scalar (cast it with tensor.cast(v, 'int64'))")
    return var


def as_shape_scalar(value: Any, what: str) -> Variable:
    """``value`` as an int64 scalar usable as a length (constants must be >= 0)."""
    var = as_int_scalar(value, what)
    if isinstance(var, Constant) and int(var.data) < 0:
        raise ValueError(f"{what} is negative ({int(var.data)}); lengths are >= 0")
    return _math.cast(var, "int64")


def shape_list(shape: Any) -> list:
    """The lengths in ``shape``: an int, a sequence of ints/int scalars, or an int vector."""
    if isinstance(shape, (list, tuple)):
        return list(shape)
    if isinstance(shape, Variable) and getattr(shape.type, "ndim", None) == 1:
        if shape.dtype not in INTEGER:
            raise TypeError(f"a shape must be an integer vector, got {shape.describe()} of type "
                            f"{shape.type}: cast it with tensor.cast(shape, 'int64')")
        length = vector_length(shape)
        if length is None:
            raise TypeError(f"the length of the shape vector {shape.describe()} is not known before "
                            "the function runs, so it cannot give the number of dimensions: pass a "
                            "tuple of lengths instead, e.g. (v[0], v[1])")
        if shape.owner is not None and isinstance(shape.owner.op, Shape):
            # ``zeros(x.shape)``: Shape_i nodes, 1 or not, so the result still reads x (Theano's).
            return [shape[i] for i in range(length)]
        return [vector_entry(shape, i) for i in range(length)]
    return [shape]


def _constant_int(var: Variable) -> int | None:
    """The value of a constant integer scalar (through a cast), else None; the length of a
    broadcastable dimension (``x.shape[i]``, a Shape_i node) is 1, as Theano's alloc knew."""
    while not isinstance(var, Constant):
        owner = var.owner
        if owner is not None and isinstance(owner.op, Shape_i):
            return 1 if owner.inputs[0].broadcastable[owner.op.i] else None
        if owner is None or not isinstance(owner.op, Elemwise) or not owner.op.scalar_op.name.startswith(
                "convert_to_"):
            return None
        var = owner.inputs[0]
    return int(var.data) if var.data.ndim == 0 else None


def _real_scalar(value: Any, what: str) -> Variable:
    var = as_tensor_variable(value)
    if var.ndim != 0 or var.dtype in COMPLEX or var.dtype == "bool":
        raise TypeError(f"{what} must be a real number or a symbolic real scalar, got "
                        f"{var.describe()} of type {var.type}")
    return var


def _value_of_dtype(value: Any, dtype: str) -> Variable:
    if isinstance(value, Variable):
        return _math.cast(value, dtype)
    return constant(np.asarray(value, dtype=dtype))


def _dtype_name(dtype: Any) -> str | None:
    if dtype is None:
        return None
    return config.floatX if dtype == "floatX" else np.dtype(dtype).name
