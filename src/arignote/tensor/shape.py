"""Shape ops: reading a shape, reshaping, and changing what the type knows about it.

``shape``/``shape_i`` read lengths at run time; ``reshape`` and ``flatten``
change the layout (a view when numpy can make one); ``transpose``, ``squeeze``
and the ``shape_pad*`` helpers are DimShuffles; ``specify_shape`` and
``Rebroadcast`` check at run time what the graph assumes, so a wrong
assumption fails loudly instead of broadcasting silently.

The helpers ``static_value``, ``vector_length``, ``static_entry`` and
``vector_entry`` read what a graph fixes about small integer vectors (shapes,
split sizes); ops use them to type their outputs and to write ``infer_shape``.
"""
from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Constant, Op, Variable
from arignote.scalar.dtypes import DISCRETE
from arignote.tensor import math as _math
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.scalar_conversion import ScalarFromTensor, TensorFromScalar
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["Shape", "Shape_i", "Reshape", "SpecifyShape", "Rebroadcast", "shape", "shape_i",
           "transpose", "reshape", "flatten", "squeeze", "shape_padleft", "shape_padright",
           "shape_padaxis", "specify_shape", "get_vector_length", "addbroadcast", "unbroadcast",
           "patternbroadcast", "get_scalar_constant_value", "NotScalarConstantError", "EmptyConstantError",
           "extract_constant"]

_INT64 = TensorType("int64", ())


# ------------------------------------------------------------ reading shapes
def _shaped(x: Any) -> Variable:
    """``x`` as a variable with a shape: a tensor, or a sparse matrix (arignote.sparse) as it is."""
    return x if getattr(getattr(x, "type", None), "sparse", False) else as_tensor_variable(x)


class Shape(Op):
    """The shape of a tensor (or of a sparse matrix), as an int64 vector."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = _shaped(x)
        return Apply(self, [x], [TensorType("int64", (False,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(node.inputs[0].ndim,)]


class Shape_i(Op):
    """The length of dimension ``i`` of a tensor, as an int64 scalar."""

    __props__ = ("i",)

    def __init__(self, i: int):
        self.i = int(i)

    def make_node(self, x: Any) -> Apply:
        x = _shaped(x)
        if not 0 <= self.i < x.ndim:
            raise ValueError(f"shape_i: {x.describe()} has {x.ndim} dimensions, so it has no "
                             f"dimension {self.i}; use shape_i(x, i) with -{x.ndim} <= i < {x.ndim}")
        return Apply(self, [x], [_INT64()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(inputs[0].shape[self.i], dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [()]


def shape(x: Any) -> Variable:
    """The shape of ``x`` as a symbolic int64 vector (``x.shape``)."""
    return Shape()(x)


def shape_i(x: Any, i: int) -> Variable:
    """The length of dimension ``i`` of ``x`` (negative counts from the end), an int64 scalar.

    A broadcastable dimension is known to have length 1, so that case is a constant.
    """
    x = _shaped(x)
    axis = checked_axis(x, i, "shape_i")
    if x.broadcastable[axis]:
        return constant(1, dtype="int64")
    return Shape_i(axis)(x)


# ------------------------------------------------- what a graph fixes statically
class NotScalarConstantError(ValueError):
    """``get_scalar_constant_value`` met a variable whose value the graph does not fix."""


class EmptyConstantError(NotScalarConstantError):
    """``get_scalar_constant_value`` met a constant with no entries."""


def get_scalar_constant_value(v: Any, elemwise: bool = True, only_process_constants: bool = False,
                              max_recur: int = 10) -> np.ndarray:
    """Theano's ``get_scalar_constant_value``: the one value ``v`` holds, as a 0-d array, when
    the graph fixes it (a constant whose entries are all equal, or casts, dimshuffles and,
    with ``elemwise``, arithmetic of such), else NotScalarConstantError.

    ``only_process_constants`` looks at constants only; ``max_recur`` is accepted for
    Theano's signature (the walk ends at the graph's inputs).
    """
    if isinstance(v, (int, float, complex, np.number, np.ndarray, bool, np.bool_)):
        v = constant(np.asarray(v))
    if not isinstance(v, Variable):
        raise NotScalarConstantError(f"get_scalar_constant_value: {v!r} is not a variable or number")
    if not only_process_constants:
        v = _through_value_passing(v)
    if isinstance(v, Constant):
        data = np.asarray(v.data)
    elif only_process_constants or not hasattr(v.type, "ndim"):
        data = None
    elif elemwise:
        data = static_value(v)
    else:
        node = v.owner
        data = static_value(v) if node is not None and isinstance(node.op, (DimShuffle, Shape_i)) else None
    if data is not None and data.size == 0:
        raise EmptyConstantError(f"get_scalar_constant_value: {v.describe()} is empty, so it holds "
                                 "no value")
    if data is None or not np.all(data == data.flat[0]):
        raise NotScalarConstantError(f"get_scalar_constant_value: the graph does not fix one value "
                                     f"for {v.describe()}")
    return np.asarray(data.flat[0])


def _through_value_passing(v: Variable) -> Variable:
    """``v`` without the nodes that only spread or pass a value on: ``fill(model, value)``
    (its value), ``alloc(value, ...)``, DimShuffle, Rebroadcast, SpecifyShape, the
    conversions between 0-d tensors and scalars, and an Assert whose conditions the graph
    fixes as true."""
    while v.owner is not None:
        op, inputs = v.owner.op, v.owner.inputs
        if isinstance(op, Elemwise) and getattr(op.scalar_op, "name", None) == "second":
            v = inputs[1]
        elif isinstance(op, (Rebroadcast, SpecifyShape, DimShuffle, _alloc.Alloc, ScalarFromTensor,
                             TensorFromScalar)) or (
                isinstance(op, _checks.Assert) and all(
                    (c := static_value(i)) is not None and bool(c) for i in inputs[1:])):
            v = inputs[0]
        else:
            break
    return v


def extract_constant(x: Any, elemwise: bool = True, only_process_constants: bool = False) -> Any:
    """Theano's ``extract_constant``: the value ``get_scalar_constant_value`` finds (a 0-d
    array), or ``x`` itself where the graph does not fix one."""
    try:
        return get_scalar_constant_value(x, elemwise, only_process_constants)
    except NotScalarConstantError:
        return x


def static_value(var: Any) -> np.ndarray | None:
    """The value of a small (0-d or 1-d) ``var`` when the graph fixes it, else None.

    Follows constants through DimShuffles, Elemwise ops (casts, arithmetic),
    joins and subtensors, which is how Python ints given to ``reshape`` or
    ``split`` arrive (and the entries of a constant shape vector). Each variable is
    looked at once per question: shape graphs share their subexpressions (a recurrent
    layer's masks and states), and a walk of every path was exponential in their depth.
    """
    return _static_value(var, {})


def _static_value(var: Any, memo: dict[int, Any]) -> np.ndarray | None:
    key = id(var)
    if key not in memo:
        memo[key] = _static_value_of(var, memo)
    return memo[key]


def _static_value_of(var: Any, memo: dict[int, Any]) -> np.ndarray | None:
    if isinstance(var, Constant):
        return var.data
    node = getattr(var, "owner", None)
    if node is None or var.ndim > 1:
        return None
    if isinstance(node.op, Shape_i):
        x = node.inputs[0]
        if isinstance(x, Constant):
            return np.asarray(np.shape(x.data)[node.op.i], "int64")
        return np.asarray(1, "int64") if x.broadcastable[node.op.i] else None
    if (isinstance(node.op, _read.Subtensor) and var.ndim == 0 and node.inputs[0].ndim == 1
            and var.dtype in DISCRETE and _static_value(node.inputs[0], memo) is None):
        # One entry of an int vector whose other entries may not be fixed (stack([b, 2, 3])[1]).
        item = node.op.idx_list[0]
        k = item if isinstance(item, int) else _static_value(node.inputs[1], memo)
        length = vector_length(node.inputs[0])
        if k is None or length is None or not -length <= int(k) < length:
            return None
        entry = static_entry(node.inputs[0], int(k) % length)
        return None if entry is None else np.asarray(entry, var.dtype)
    if not isinstance(node.op, (DimShuffle, Elemwise, _join.Join, _join.MakeVector, _read.Subtensor)):
        return None
    values = [_static_value(i, memo) for i in node.inputs]
    if any(v is None for v in values):
        return None
    cells: list[list] = [[None] for _ in node.outputs]
    with np.errstate(all="ignore"):
        node.op.perform(node, values, cells)
    return cells[var.index][0]


def vector_length(vector: Variable) -> int | None:
    """The length of a 1-d ``vector`` when the graph fixes it, else None."""
    value = static_value(vector)
    if value is not None:
        return len(value)
    if vector.broadcastable == (True,):
        return 1
    node = vector.owner
    if node is None:
        return None
    if isinstance(node.op, Shape):
        return node.inputs[0].ndim
    if isinstance(node.op, _join.MakeVector):
        return len(node.inputs)
    if isinstance(node.op, _join.Join) and all(i.broadcastable == (True,) for i in node.inputs[1:]):
        return len(node.inputs) - 1
    if isinstance(node.op, _read.Subtensor) and len(node.op.idx_list) == 1:
        # A constant slice of a vector of known length (``x.shape[:2]``).
        item = node.op.idx_list[0]
        if isinstance(item, IndexSlice) and all(f is None or isinstance(f, int) for f in item):
            base = vector_length(node.inputs[0])
            return None if base is None else len(range(base)[slice(*item)])
    return None


def get_vector_length(v: Any) -> int:
    """The length of the 1-d ``v`` when the graph fixes it (a shape, a constant, a stack of
    scalars, a constant slice of those); Theano's function, which iteration uses.

    Raises TypeError when ``v`` is not a vector, ValueError when its length is not known."""
    v = as_tensor_variable(v)
    if v.ndim != 1:
        raise TypeError(f"get_vector_length: {v.describe()} has {v.ndim} dimensions; it takes a "
                        "vector")
    length = vector_length(v)
    if length is None:
        raise ValueError(f"the length of {v.describe()} is not known until the function runs "
                         "(it is known for shapes, constants, stacks of scalars and constant "
                         "slices of those): index it (x[i]) or use arignote.scan")
    return length


def static_entry(vector: Variable, i: int) -> int | None:
    """Entry ``i`` of an int vector when the graph fixes it, else None (builds no nodes)."""
    value = static_value(vector)
    if value is not None:
        return int(value[i])
    node = vector.owner
    if node is None:
        return None
    if isinstance(node.op, Shape):
        return 1 if node.inputs[0].broadcastable[i] else None
    if isinstance(node.op, _join.MakeVector):
        value = static_value(node.inputs[i])
        return None if value is None else int(value)
    if isinstance(node.op, _join.Join) and vector_length(vector) == len(node.inputs) - 1:
        return static_entry(node.inputs[1 + i], 0)
    if isinstance(node.op, DimShuffle) and node.op.new_order == ("x",):
        value = static_value(node.inputs[0])
        return None if value is None else int(value)
    return None


def vector_entry(vector: Variable, i: int) -> int | Variable:
    """Entry ``i`` of an int vector for shape graphs: an int when fixed, else an int64 scalar."""
    value = static_entry(vector, i)
    if value is not None:
        return value
    node = vector.owner
    if node is not None:
        if isinstance(node.op, Shape):
            return shape_i(node.inputs[0], i)
        if isinstance(node.op, _join.MakeVector):
            return _math.cast(node.inputs[i], "int64")
        if isinstance(node.op, _join.Join) and vector_length(vector) == len(node.inputs) - 1:
            return vector_entry(node.inputs[1 + i], 0)
        if isinstance(node.op, DimShuffle) and node.op.new_order == ("x",):
            return _math.cast(node.inputs[0], "int64")
    return _math.cast(vector[i], "int64")


def _static_or(scalar: Variable) -> int | Variable:
    value = static_value(scalar)
    return scalar if value is None else int(value)


def product(items: Sequence[int | Variable]) -> int | Variable:
    """The product of shape entries (ints and int64 scalars); an int when all are ints."""
    static = 1
    symbolic = []
    for item in items:
        if isinstance(item, (int, np.integer)):
            static *= int(item)
        else:
            symbolic.append(item)
    if not symbolic:
        return static
    result = _math.mul(*symbolic) if len(symbolic) > 1 else symbolic[0]
    return result if static == 1 else _math.mul(result, constant(static, dtype="int64"))


def as_shape_vector(entries: Any, what: str, allow_none: bool = False) -> Variable:
    """Turn a shape given as ints, int scalars (``None`` -> -1 when allowed) or an int
    vector into an int64 vector variable, constant when every entry is an int."""
    if isinstance(entries, Variable):
        if entries.dtype not in DISCRETE or entries.ndim > 1:
            raise TypeError(f"{what}: the shape must be an int vector, got {entries.describe()} "
                            f"({entries.type.describe()}): cast it with tensor.cast(shape, 'int64')")
        return _math.cast(entries if entries.ndim == 1 else entries.dimshuffle("x"), "int64")
    if isinstance(entries, (int, np.integer)):
        entries = (entries,)
    if isinstance(entries, np.ndarray):
        entries = entries.tolist()
    if not isinstance(entries, (list, tuple)):
        raise TypeError(f"{what}: the shape must be a tuple of ints or an int vector, "
                        f"got {type(entries).__name__} {entries!r}")
    items: list[Any] = []
    for entry in entries:
        if entry is None and allow_none:
            items.append(-1)
        elif isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
            items.append(int(entry))
        elif isinstance(entry, Variable) and entry.ndim == 0 and entry.dtype in DISCRETE:
            items.append(entry)
        else:
            raise TypeError(f"{what}: shape entry {entry!r} is not an int"
                            f"{', None' if allow_none else ''} or an int scalar variable: "
                            "give each length as one of those")
    if all(isinstance(i, int) for i in items):
        return constant(np.array(items, dtype="int64"))
    return _join.stack([_math.cast(constant(i, dtype="int64") if isinstance(i, int) else i, "int64")
                        for i in items])


# ---------------------------------------------------------------- reshaping
class Reshape(Op):
    """``x`` reshaped to the int64 vector ``shape`` (one entry may be -1).

    The output is ``numpy.reshape``'s, a view of the input whenever the memory
    layout allows, so ``view_map`` declares it.
    """

    __props__ = ("ndim",)
    view_map = {0: [0]}

    def __init__(self, ndim: int):
        self.ndim = int(ndim)

    def make_node(self, x: Any, shp: Any) -> Apply:
        x = as_tensor_variable(x)
        shp = as_shape_vector(shp, "reshape")
        length = vector_length(shp)
        if length is not None and length != self.ndim:
            raise ValueError(f"reshape: the new shape has {length} entries but the op makes a "
                             f"{self.ndim}-d tensor; give ndim={length}")
        value = static_value(shp)
        if value is not None:
            _check_reshape(x, value)
        entries = [static_entry(shp, i) for i in range(self.ndim)] if length else [None] * self.ndim
        broadcastable = tuple(e == 1 for e in entries)
        return Apply(self, [x, shp], [TensorType(x.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, shp = inputs
        if len(shp) != self.ndim:
            raise ValueError(f"reshape of {node.inputs[0].describe()}: the shape {tuple(shp)} has "
                             f"{len(shp)} entries, but this reshape was built for {self.ndim}: build it "
                             "with ndim= equal to the length of the shape it is given")
        try:
            output_storage[0][0] = np.reshape(x, shp)
        except ValueError:
            raise ValueError(f"cannot reshape {node.inputs[0].describe()} of shape {x.shape} "
                             f"({x.size} elements) to {tuple(int(s) for s in shp)}: the new shape "
                             "must have as many elements (one entry may be -1)") from None

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shp = node.inputs[1]
        entries = [vector_entry(shp, i) for i in range(self.ndim)]
        total = product(input_shapes[0])
        static_rest = [e for e in entries if not (isinstance(e, int) and e == -1)]
        out = []
        for entry in entries:
            if isinstance(entry, int) and entry == -1:
                rest = product(static_rest)
                out.append(total // rest if isinstance(total, int) and isinstance(rest, int)
                           else _math.int_div(total, rest))
            elif isinstance(entry, int) or -1 in entries:
                out.append(entry)
            else:
                # A symbolic entry may be -1: the product of all entries is then minus
                # the product of the others, which recovers the missing length.
                divisor = _math.maximum(_math.neg(product(entries)), constant(1, dtype="int64"))
                out.append(_math.switch(_math.eq(entry, -1), _math.int_div(total, divisor), entry))
        return [tuple(out)]


def _check_reshape(x: Variable, shp: np.ndarray) -> None:
    wanted = tuple(int(s) for s in shp)
    if sum(s == -1 for s in wanted) > 1 or any(s < -1 for s in wanted):
        raise ValueError(f"reshape of {x.describe()} to {wanted}: entries must be >= 0, with at "
                         "most one -1 (the length numpy infers)")
    size = x.data.size if isinstance(x, Constant) else (1 if all(x.broadcastable) else None)
    if size is None:
        return
    known = int(np.prod([s for s in wanted if s != -1]))
    fits = known == size if -1 not in wanted else (known != 0 and size % known == 0)
    if not fits:
        raise ValueError(f"cannot reshape {x.describe()} ({size} elements) to {wanted}: the new "
                         "shape must have as many elements")


def reshape(x: Any, newshape: Any, ndim: int | None = None) -> Variable:
    """``x`` with shape ``newshape``: a tuple of ints and int scalars, or an int vector.

    One entry may be -1 (inferred, as in numpy). When ``newshape`` is a symbolic
    vector whose length the graph does not fix, pass ``ndim``.
    """
    x = as_tensor_variable(x)
    shp = as_shape_vector(newshape, "reshape")
    length = vector_length(shp)
    if ndim is None:
        if length is None:
            raise ValueError(f"reshape of {x.describe()}: the length of the new shape "
                             f"{newshape} is not known until run time; pass ndim=")
        ndim = length
    return Reshape(ndim)(x, shp)


def flatten(x: Any, ndim: int | None = None, outdim: int | None = None) -> Variable:
    """Keep the first ``ndim - 1`` dimensions of ``x`` and collapse the rest into one
    (``ndim`` defaults to 1; ``outdim`` is Theano's deprecated name for it)."""
    x = as_tensor_variable(x)
    ndim = flatten_ndim(ndim, outdim, "flatten")
    if not 1 <= ndim <= max(x.ndim, 1):
        raise ValueError(f"flatten of {x.describe()} ({x.ndim}-d): ndim must be between 1 and "
                         f"{max(x.ndim, 1)}, got {ndim}")
    kept = [_static_or(shape_i(x, i)) for i in range(ndim - 1)]
    rest = product([_static_or(shape_i(x, i)) for i in range(ndim - 1, x.ndim)])
    return reshape(x, kept + [rest], ndim=ndim)


def flatten_ndim(ndim: int | None, outdim: int | None, what: str) -> int:
    """The rank ``flatten``/``is_flat`` are asked for: ``ndim``, or Theano's older ``outdim``
    (with a DeprecationWarning), default 1."""
    if outdim is None:
        return 1 if ndim is None else int(ndim)
    if ndim is not None:
        raise ValueError(f"{what}: give ndim only (outdim is its deprecated name), not both")
    warnings.warn(f"{what}(outdim=...) is deprecated, as in Theano: write ndim=...",
                  DeprecationWarning, stacklevel=3)
    return int(outdim)


def transpose(x: Any, axes: Sequence[int] | None = None) -> Variable:
    """``x`` with its axes permuted (reversed when ``axes`` is None); a view."""
    x = as_tensor_variable(x)
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    normalized = [checked_axis(x, a, "transpose") for a in axes]
    if sorted(normalized) != list(range(x.ndim)):
        raise ValueError(f"transpose of {x.describe()} ({x.ndim}-d): axes {tuple(axes)} are not a "
                         f"permutation of {tuple(range(x.ndim))}")
    out = DimShuffle(x.broadcastable, normalized)(x)
    if x.name and normalized == list(reversed(range(x.ndim))):
        out.name = f"{x.name}.T"  # Theano's name for the full transpose
    return out


def squeeze(x: Any, axis: int | Sequence[int] | None = None) -> Variable:
    """``x`` without its length-1 dimensions.

    With ``axis`` None, the broadcastable dimensions are dropped. Named axes that
    the type does not know to be length 1 are checked at run time.
    """
    x = as_tensor_variable(x)
    if axis is None:
        axes = [i for i, b in enumerate(x.broadcastable) if b]
    else:
        axes = sorted({checked_axis(x, a, "squeeze") for a in _as_tuple(axis)})
        x = addbroadcast(x, *axes)
    return DimShuffle(x.broadcastable, [i for i in range(x.ndim) if i not in axes])(x)


def shape_padleft(x: Any, n_ones: int = 1) -> Variable:
    """``x`` with ``n_ones`` broadcastable dimensions added in front."""
    x = as_tensor_variable(x)
    return DimShuffle(x.broadcastable, ["x"] * n_ones + list(range(x.ndim)))(x)


def shape_padright(x: Any, n_ones: int = 1) -> Variable:
    """``x`` with ``n_ones`` broadcastable dimensions added at the end."""
    x = as_tensor_variable(x)
    return DimShuffle(x.broadcastable, list(range(x.ndim)) + ["x"] * n_ones)(x)


def shape_padaxis(x: Any, axis: int) -> Variable:
    """``x`` with a broadcastable dimension inserted at ``axis`` (negative: from the end)."""
    x = as_tensor_variable(x)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise np.exceptions.AxisError(
            f"shape_padaxis: axis {axis} is out of range for the {x.ndim + 1}-d result of "
            f"padding {x.describe()}; use -{x.ndim + 1} <= axis <= {x.ndim}")
    if axis < 0:
        axis += x.ndim + 1
    order: list[Any] = list(range(x.ndim))
    order.insert(axis, "x")
    return DimShuffle(x.broadcastable, order)(x)


# ------------------------------------------------------- run-time shape checks
class ShapeMismatchError(ValueError, AssertionError):
    """A shape that is not the one ``specify_shape`` declared, or a declared shape of the
    wrong length (Theano raised AssertionError, which code written for it catches)."""


class SpecifyShape(Op):
    """``x`` itself, after checking at run time that it has the given shape.

    An entry of -1 in the shape (``None`` in ``specify_shape``) accepts any length.
    Entries fixed to 1 make those dimensions broadcastable.
    """

    __props__ = ()

    view_map = {0: [0]}
    passes_value = True

    def make_node(self, x: Any, shp: Any) -> Apply:
        x = _shaped(x)
        shp = as_shape_vector(shp, "specify_shape", allow_none=True)
        length = vector_length(shp)
        if length is not None and length != x.ndim:
            raise ShapeMismatchError(f"specify_shape: {x.describe()} has {x.ndim} dimensions, but "
                                     f"the shape given has {length} entries: give one per dimension "
                                     "(None for any length)")
        entries = [static_entry(shp, i) for i in range(x.ndim)] if length else [None] * x.ndim
        for axis, (b, entry) in enumerate(zip(x.broadcastable, entries)):
            if b and isinstance(entry, int) and entry not in (1, -1):
                raise ValueError(f"specify_shape: dimension {axis} of {x.describe()} is "
                                 f"broadcastable (length 1), but the shape given says {entry}: fix "
                                 "the shape, or unbroadcast the dimension first")
        if not isinstance(x.type, TensorType):  # a sparse matrix keeps its type (it never broadcasts)
            return Apply(self, [x, shp], [x.type()])
        broadcastable = tuple(b or e == 1 for b, e in zip(x.broadcastable, entries))
        return Apply(self, [x, shp], [TensorType(x.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, shp = inputs
        if len(shp) != x.ndim or any(s not in (-1, n) for s, n in zip(shp.tolist(), x.shape)):
            declared = tuple(None if s == -1 else int(s) for s in shp)
            raise ShapeMismatchError(f"specify_shape: {node.inputs[0].describe()} was declared to have "
                             f"shape {declared}, but its value has shape {x.shape}: fix the "
                             "value or the declaration")
        output_storage[0][0] = x

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        entries = [static_entry(node.inputs[1], i) for i in range(node.inputs[0].ndim)]
        return [tuple(e if e is not None and e >= 0 else s
                      for e, s in zip(entries, input_shapes[0]))]


def specify_shape(x: Any, shape: Any) -> Variable:
    """``x``, checked at run time to have ``shape`` (ints, int scalars, None for any)."""
    return SpecifyShape()(x, shape)


class Rebroadcast(Op):
    """``x`` with some dimensions' broadcastable flags changed.

    ``axis`` holds ``(dimension, flag)`` pairs. Setting a flag to True promises
    that dimension has length 1, which ``perform`` checks.
    """

    __props__ = ("axis",)
    view_map = {0: [0]}
    passes_value = True

    def __init__(self, *pairs: tuple[int, bool]):
        self.axis = tuple(sorted((int(a), bool(b)) for a, b in pairs))

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        broadcastable = list(x.broadcastable)
        for axis, flag in self.axis:
            if not 0 <= axis < x.ndim:
                raise np.exceptions.AxisError(f"{self}: {x.describe()} has {x.ndim} dimensions, "
                                              f"so it has no dimension {axis}; use axes "
                                              f"0 <= axis < {x.ndim}")
            broadcastable[axis] = flag
        return Apply(self, [x], [TensorType(x.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        for axis, flag in self.axis:
            if flag and x.shape[axis] != 1:
                raise ValueError(f"dimension {axis} of {node.inputs[0].describe()} was declared "
                                 f"broadcastable (length 1), but the value has shape {x.shape}: "
                                 "only mark length-1 dimensions broadcastable")
        output_storage[0][0] = x

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        flags = dict(self.axis)
        return [tuple(1 if flags.get(i) else s for i, s in enumerate(input_shapes[0]))]


def patternbroadcast(x: Any, pattern: Sequence[bool]) -> Variable:
    """``x`` with broadcastable pattern ``pattern`` (length-1 dimensions checked at run time).

    As in Theano, a pattern shorter than ``x.ndim`` sets the leading dimensions only
    (``patternbroadcast(g, scalar.broadcastable)`` is ``g``), and a Rebroadcast of a
    Rebroadcast is one node, or none when the flags end where they began."""
    x = as_tensor_variable(x)
    if len(pattern) > x.ndim:
        raise ValueError(f"patternbroadcast: {x.describe()} has {x.ndim} dimensions but the pattern "
                         f"{tuple(pattern)} has {len(pattern)}: give at most one flag per dimension")
    wanted = [bool(p) for p in pattern] + list(x.broadcastable[len(pattern):])
    if x.owner is not None and isinstance(x.owner.op, Rebroadcast):
        x = x.owner.inputs[0]
    changes = [(i, p) for i, (p, b) in enumerate(zip(wanted, x.broadcastable)) if p != b]
    return Rebroadcast(*changes)(x) if changes else x


def addbroadcast(x: Any, *axes: int) -> Variable:
    """``x`` with ``axes`` marked broadcastable (their length 1 is checked at run time)."""
    return _with_flag(x, axes, True, "addbroadcast")


def unbroadcast(x: Any, *axes: int) -> Variable:
    """``x`` with ``axes`` no longer marked broadcastable."""
    return _with_flag(x, axes, False, "unbroadcast")


def _with_flag(x: Any, axes: Sequence[int], flag: bool, what: str) -> Variable:
    x = as_tensor_variable(x)
    pattern = list(x.broadcastable)
    for axis in axes:
        pattern[checked_axis(x, axis, what)] = flag
    return patternbroadcast(x, pattern)


# ------------------------------------------------------------------ helpers
def checked_axis(x: Variable, axis: Any, what: str) -> int:
    """``axis`` of ``x`` (negative counts from the end) as a non-negative int, or an error
    naming ``what`` was called, ``x`` and the valid range."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{what}: axis must be an int, got {type(axis).__name__} {axis!r}")
    if not -x.ndim <= axis < x.ndim:
        raise np.exceptions.AxisError(
            f"{what}: axis {axis} is out of range for {x.describe()}, which has {x.ndim} "
            f"dimension{'s' * (x.ndim != 1)}" + (f"; use -{x.ndim} <= axis < {x.ndim}" if x.ndim else ""))
    return int(axis) % x.ndim


def _as_tuple(axis: Any) -> tuple:
    return tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)


from arignote.tensor import join as _join  # noqa: E402  (join builds on these ops)
from arignote.tensor.subtensor import read as _read  # noqa: E402  (so does indexing)
from arignote.tensor.subtensor.index import IndexSlice  # noqa: E402
from arignote.tensor import checks as _checks  # noqa: E402
from arignote.tensor import alloc as _alloc  # noqa: E402
