"""Reductions: sum, prod, max, min, any, all, argmax/argmin, and mean/var/std/norm on top.

One op, ``CAReduce``, reduces with a commutative and associative scalar op
over a set of axes (numpy's reducer of that op does the work); ``Argmax`` and
``Argmin`` find positions. ``keepdims`` is a DimShuffle added after the
reduction, so the ops themselves only ever drop axes. ``mean``, ``var``,
``std`` and ``norm`` are graphs of these and elementwise ops, which later
rewrites and backends see through.

Dtypes follow Theano: sum and prod of bools and signed ints give int64
(unsigned: uint64), floats keep theirs; mean of ints is float64; any/all give
bool; argmax/argmin give int64. Sums and products accumulate by Theano's table
(``THEANO_ACC``: small ints in int64/uint64, float16 in float32, float32 in
float64, complex64 in complex128) and round once to the output dtype; the op
carries the accumulator (``Sum{acc_dtype=float64}``), and every CPU path honours it.
"""
from __future__ import annotations

import builtins
import math
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Op, Variable
from arignote.scalar import ops as scalar_ops
from arignote.scalar.dtypes import COMPLEX, DISCRETE, FLOAT, upcast, upgrade_to_float
from arignote.scalar.ops import ScalarOp
from arignote.tensor import math as _math
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.hostop import HostOp
from arignote.tensor.type import TensorType
from arignote.tensor.type_other import NoneTypeT
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["CAReduce", "Sum", "Prod", "ProdWithoutZeros", "Argmax", "Argmin", "sum", "prod", "mean",
           "var", "std", "max", "min", "argmax", "argmin", "max_and_argmax", "any", "all", "norm"]

# The numpy reducer of each scalar op CAReduce accepts, and the name it prints as.
_REDUCERS = {"add": (np.sum, "Sum"), "mul": (np.prod, "Prod"), "maximum": (np.max, "Reduce{maximum}"),
             "minimum": (np.min, "Reduce{minimum}"), "and_": (np.bitwise_and.reduce, "All"),
             "or_": (np.bitwise_or.reduce, "Any"), "xor": (np.bitwise_xor.reduce, "Reduce{xor}")}
_NO_IDENTITY = ("maximum", "minimum")
# and_, or_ and xor reduce the bits of integers, as Theano's CAReduce did; to a bool result
# (all, any) they reduce the truth of the elements (x != 0), whatever their dtype.
BITWISE = ("and_", "or_", "xor")

# Theano's default accumulators (its CAReduceDtype table) for sum, prod, mean and
# ProdWithoutZeros; a dtype not listed accumulates in itself.
THEANO_ACC = {"bool": "int64", "int8": "int64", "int16": "int64", "int32": "int64",
              "uint8": "uint64", "uint16": "uint64", "uint32": "uint64", "float16": "float32",
              "float32": "float64", "complex64": "complex128"}


class CAReduce(Op):
    """Reduce ``x`` over ``axis`` (a sorted tuple of axes) with ``scalar_op``.

    ``dtype`` is the output's; ``acc_dtype`` is the dtype a sum or product
    accumulates in before the one rounding to ``dtype`` (None: ``dtype`` itself, as
    Theano's CAReduce; ``sum``/``prod`` always give one, by ``THEANO_ACC``). Reducing
    no axes still converts to ``dtype``.

    Theano's signature ``CAReduce(scalar_op, axis=None)`` works too: an op built
    without the axes (None: all, or counted from the end) or the dtype (None: the
    input's) makes, once it meets its input, the node of the op that has them.
    """

    __props__ = ("scalar_op", "axis", "dtype", "acc_dtype")

    def __init__(self, scalar_op: ScalarOp, axis: Sequence[int] | int | None = None,
                 dtype: str | None = None, acc_dtype: str | None = None):
        if scalar_op.name not in _REDUCERS:
            raise ValueError(f"CAReduce cannot reduce with {scalar_op}; it takes "
                             f"{', '.join(_REDUCERS)}")
        self.scalar_op = scalar_op
        self.axis = _axis_tuple(axis)
        self.dtype = None if dtype is None else str(dtype)
        self.acc_dtype = None if acc_dtype is None else str(acc_dtype)
        self._reducer = _REDUCERS[scalar_op.name][0]

    def _resolved(self, x: Variable) -> CAReduce | None:
        """The op with this one's axes and dtype fixed for ``x``; None when they already are."""
        if self.axis is not None and self.dtype is not None and builtins.all(a >= 0 for a in self.axis):
            return None
        return CAReduce(self.scalar_op, _axes(x, self.axis, str(self)), self.dtype or x.dtype,
                        self.acc_dtype)

    def __str__(self) -> str:
        return self.node_text(None)

    def node_text(self, node: Apply | None) -> str:
        """How Theano printed the op: ``Sum{axis=[0], acc_dtype=float64}``, ``Prod{axis=(0,),
        dtype='float32', acc_dtype='float64'}``, ``Reduce{maximum}{0}``, ``Any{1}``; a
        ``node`` reduced over all its axes prints as Theano's ``axis=None`` op did."""
        name = self.scalar_op.name
        head = _REDUCERS[name][1]
        every = self.axis is None or (node is not None and len(self.axis) == node.inputs[0].ndim)
        axes = ", ".join(map(str, self.axis or ()))
        if name in ("add", "mul") and self.acc_dtype is None and type(self) is CAReduce:
            head = f"Reduce{{{name}}}"  # Theano's own CAReduce, accumulating in its output dtype
        elif name == "add":
            return f"Sum{{{'' if every else f'axis=[{axes}], '}acc_dtype={self.acc_dtype}}}"
        elif name == "mul":
            return (f"Prod{{axis={None if every else self.axis}, dtype={self.dtype!r}, "
                    f"acc_dtype={self.acc_dtype!r}}}")
        if self.axis is None or (every and name not in _NO_IDENTITY):  # Theano's max kept its axes
            return head
        return f"{head}{{{axes}}}"

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        resolved = self._resolved(x)
        if resolved is not None:
            return resolved.make_node(x)
        for axis in self.axis:
            if not 0 <= axis < x.ndim:
                raise np.exceptions.AxisError(f"{self}: {x.describe()} has {x.ndim} dimensions")
        if (self.scalar_op.name in BITWISE and self.dtype != "bool"
                and not (x.dtype in DISCRETE and self.dtype in DISCRETE)):
            raise TypeError(f"{self} of {x.describe()} ({x.dtype}) to {self.dtype}: only integers "
                            f"have bits to {self.scalar_op.name}; reduce to a bool (tensor.all, tensor.any, or "
                            "dtype='bool') for the truth of the elements")
        broadcastable = [b for i, b in enumerate(x.broadcastable) if i not in self.axis]
        return Apply(self, [x], [TensorType(self.dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        if self.scalar_op.name in _NO_IDENTITY and builtins.any(x.shape[a] == 0 for a in self.axis):
            raise ValueError(f"{self}: {node.inputs[0].describe()} has shape {x.shape}, and the "
                             f"{'max' if self.scalar_op.name == 'maximum' else 'min'} of no "
                             "elements is undefined: reduce only non-empty axes")
        if self.scalar_op.name in ("add", "mul"):
            acc = self.acc_dtype or node.outputs[0].type.dtype
            result = self._reducer(x, axis=self.axis, dtype=acc)
            if x.dtype.kind != "c" and np.iscomplexobj(result):
                result = result.real  # a complex accumulator of real values: no imaginary part
        elif self.scalar_op.name in BITWISE:
            out_dtype = node.outputs[0].type.numpy_dtype
            bits = x != 0 if out_dtype.kind == "b" else x.astype(out_dtype)
            result = self._reducer(bits, axis=self.axis)
        else:
            result = self._reducer(x, axis=self.axis)
        output_storage[0][0] = np.asarray(result, dtype=node.outputs[0].type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [tuple(s for i, s in enumerate(input_shapes[0]) if i not in self.axis)]


class Sum(CAReduce):
    """Theano's ``Sum(axis=None, dtype=None, acc_dtype=None)`` op, with ``sum``'s dtype rules."""

    def __init__(self, axis: Sequence[int] | int | None = None, dtype: str | None = None,
                 acc_dtype: str | None = None):
        super().__init__(scalar_ops.add, axis, dtype, acc_dtype)

    def make_node(self, x: Any) -> Apply:
        return sum(x, self.axis, dtype=self.dtype, acc_dtype=self.acc_dtype).owner


class Prod(CAReduce):
    """Theano's ``Prod(axis=None, dtype=None, acc_dtype=None, no_zeros_in_input=False)`` op,
    with ``prod``'s dtype rules (``no_zeros_in_input`` as for :func:`prod`)."""

    def __init__(self, axis: Sequence[int] | int | None = None, dtype: str | None = None,
                 acc_dtype: str | None = None, no_zeros_in_input: bool = False):
        super().__init__(scalar_ops.mul, axis, dtype, acc_dtype)
        self.no_zeros_in_input = bool(no_zeros_in_input)

    def make_node(self, x: Any) -> Apply:
        return prod(x, self.axis, dtype=self.dtype, acc_dtype=self.acc_dtype).owner


class ProdWithoutZeros(HostOp):
    """Theano's ``ProdWithoutZeros(axis=None, dtype=None, acc_dtype=None)``: the product of
    the non-zero entries over ``axis`` (1 where all are zero); ``prod``'s output dtypes,
    Theano's accumulators; it has no gradient (Theano's neither)."""

    __props__ = ("axis", "dtype", "acc_dtype")

    def __init__(self, axis: Sequence[int] | int | None = None, dtype: str | None = None,
                 acc_dtype: str | None = None):
        self.axis = _axis_tuple(axis)
        self.dtype = None if dtype is None else str(np.dtype(dtype))
        self.acc_dtype = None if acc_dtype is None else str(np.dtype(acc_dtype))

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        axes = _axes(x, self.axis, "ProdWithoutZeros")
        dtype = self.dtype or _math_dtype(x.dtype)
        acc_dtype = _checked_acc(x, self.acc_dtype, "ProdWithoutZeros") or THEANO_ACC.get(x.dtype, x.dtype)
        if (axes, dtype, acc_dtype) != (self.axis, self.dtype, self.acc_dtype):
            return ProdWithoutZeros(axes, dtype, acc_dtype).make_node(x)
        broadcastable = [b for i, b in enumerate(x.broadcastable) if i not in axes]
        return Apply(self, [x], [TensorType(dtype, broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        result = np.prod(np.where(x != 0, x, np.ones((), x.dtype)), axis=self.axis, dtype=self.acc_dtype)
        output_storage[0][0] = np.asarray(result, dtype=node.outputs[0].type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [tuple(s for i, s in enumerate(input_shapes[0]) if i not in self.axis)]


class Argmax(Op):
    """Positions (int64) of the largest elements over ``axis``, as if those axes,
    in order, were flattened into one (C order), as numpy does for one axis."""

    __props__ = ("axis",)
    _numpy = staticmethod(np.argmax)
    _what = "argmax"

    def __init__(self, axis: Sequence[int]):
        self.axis = tuple(sorted(int(a) for a in axis))

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        for axis in self.axis:
            if not 0 <= axis < x.ndim:
                raise np.exceptions.AxisError(f"{self}: {x.describe()} has {x.ndim} dimensions")
        if x.dtype in COMPLEX:
            raise TypeError(f"{self._what} of {x.describe()}: complex numbers are not ordered; "
                            "take its abs, real or imag part first")
        broadcastable = [b for i, b in enumerate(x.broadcastable) if i not in self.axis]
        return Apply(self, [x], [TensorType("int64", broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        if builtins.any(x.shape[a] == 0 for a in self.axis):
            raise ValueError(f"{self._what} of {node.inputs[0].describe()} (shape {x.shape}) over "
                             f"axes {self.axis}: there are no elements to choose from")
        kept = [i for i in range(x.ndim) if i not in self.axis]
        moved = np.transpose(x, kept + list(self.axis))
        # The reduced length spelt out: -1 cannot be inferred when a kept axis is empty.
        flat = moved.reshape(moved.shape[:len(kept)] + (math.prod(x.shape[a] for a in self.axis),))
        output_storage[0][0] = np.asarray(self._numpy(flat, axis=-1), dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [tuple(s for i, s in enumerate(input_shapes[0]) if i not in self.axis)]


class Argmin(Argmax):
    """Positions (int64) of the smallest elements over ``axis``; see Argmax."""

    _numpy = staticmethod(np.argmin)
    _what = "argmin"


# ----------------------------------------------------------------- functions
def sum(x: Any, axis: Any = None, dtype: str | None = None, keepdims: bool = False,  # noqa: A001
        acc_dtype: str | None = None) -> Variable:
    """Sum over ``axis`` (None: all). Bools and ints sum to int64 (unsigned: uint64)
    unless ``dtype`` says otherwise; ``acc_dtype`` sets the accumulator (None: Theano's,
    ``THEANO_ACC``: float32 sums in float64); it must not lose the input's precision."""
    return _arith_reduce(scalar_ops.add, "sum", x, axis, dtype, keepdims, acc_dtype)


def prod(x: Any, axis: Any = None, dtype: str | None = None, keepdims: bool = False,
         acc_dtype: str | None = None, no_zeros_in_input: bool = False) -> Variable:
    """Product over ``axis`` (None: all), with sum's dtype rules. ``no_zeros_in_input`` is
    Theano's promise allowing a cheaper gradient; the gradient here is right with zeros
    either way, so it changes nothing."""
    return _arith_reduce(scalar_ops.mul, "prod", x, axis, dtype, keepdims, acc_dtype)


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """The largest element over ``axis``; an error at run time if an axis is empty."""
    return _plain_reduce(scalar_ops.maximum, "max", x, axis, keepdims, None)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """The smallest element over ``axis``; an error at run time if an axis is empty."""
    return _plain_reduce(scalar_ops.minimum, "min", x, axis, keepdims, None)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """Whether any element over ``axis`` is nonzero (bool)."""
    return _plain_reduce(scalar_ops.or_, "any", x, axis, keepdims, "bool")


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """Whether every element over ``axis`` is nonzero (bool)."""
    return _plain_reduce(scalar_ops.and_, "all", x, axis, keepdims, "bool")


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """int64 positions of the maxima over ``axis``; several axes count as one flattened."""
    x = as_tensor_variable(x)
    axes = _axes(x, axis, "argmax")
    return _keep(Argmax(axes)(x), axes, keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """int64 positions of the minima over ``axis``; several axes count as one flattened."""
    x = as_tensor_variable(x)
    axes = _axes(x, axis, "argmin")
    return _keep(Argmin(axes)(x), axes, keepdims)


def max_and_argmax(x: Any, axis: Any = None, keepdims: bool = False) -> list[Variable]:
    """``[max(x, axis), argmax(x, axis)]``."""
    return [max(x, axis, keepdims), argmax(x, axis, keepdims)]


def mean(x: Any, axis: Any = None, dtype: str | None = None, keepdims: bool = False,
         acc_dtype: str | None = None) -> Variable:
    """The mean over ``axis``: ints give float64, floats keep their dtype (the sum
    accumulates as ``sum``'s does). ``dtype`` sets the result's dtype."""
    x = as_tensor_variable(x)
    axes = _axes(x, axis, "mean")
    if dtype is not None:
        sum_dtype = dtype
    elif x.dtype in FLOAT + COMPLEX:
        sum_dtype = "float32" if x.dtype == "float16" else x.dtype
    else:
        sum_dtype = "float64"
    total = sum(x, axes, dtype=sum_dtype, acc_dtype=acc_dtype)
    if total.dtype in DISCRETE:  # summed in the integer dtype asked for; a mean is float64 (Theano)
        dtype = "float64"
    result = _divide(total, _count(x, axes), dtype if total.dtype in DISCRETE else _real(total.dtype))
    result = _math.cast(result, dtype or ("float16" if x.dtype == "float16" else result.dtype))
    return _keep(result, axes, keepdims)


def var(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False,
        corrected: bool = False) -> Variable:
    """The variance over ``axis``, dividing by ``N - ddof`` (numpy.var); complex
    inputs give the real variance of the magnitudes' spread. ``corrected`` uses the
    corrected two-pass algorithm (Theano's flag): the rounding error left in the
    mean, ``sum(x - mean)**2 / N``, is taken off the sum of squares."""
    x = as_tensor_variable(x)
    if isinstance(ddof, bool):
        raise TypeError(f"var of {x.describe()}: ddof is {ddof}, a bool; keepdims is the fourth "
                        "argument, var(x, axis, ddof, keepdims), so pass keepdims=...")
    axes = _axes(x, axis, "var")
    centered = _math.sub(x, mean(x, axes, keepdims=True))
    squared = (_math.sqr(_math.abs(centered)) if centered.dtype in COMPLEX
               else _math.sqr(centered))
    total = sum(squared, axes)
    n = _count(x, axes)
    if corrected:
        error = sum(centered, axes)
        error = _math.sqr(_math.abs(error)) if error.dtype in COMPLEX else _math.sqr(error)
        total = _math.sub(total, _divide(error, n, total.dtype))
    count = n
    if isinstance(count, int):
        count -= int(ddof)
    elif ddof:
        count = _math.sub(count, constant(int(ddof), dtype="int64"))
    result = _divide(total, count, total.dtype)
    return _keep(result, axes, keepdims)


def std(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False,
        corrected: bool = False) -> Variable:
    """The standard deviation over ``axis``: ``sqrt(var(x, axis, ddof, keepdims, corrected))``."""
    return _math.sqrt(var(x, axis, ddof=ddof, keepdims=keepdims, corrected=corrected))


def norm(x: Any, L: float = 2, axis: Any = None, keepdims: bool = False) -> Variable:
    """The L-norm over ``axis``: ``sum(abs(x) ** L) ** (1 / L)``; ``L=inf`` is the max of abs."""
    x = as_tensor_variable(x)
    if L == 0:
        raise ValueError("norm with L=0 (the count of nonzeros) is not a norm: use "
                         "sum(neq(x, 0))")
    magnitude = _math.abs(x)
    magnitude = _math.cast(magnitude, upgrade_to_float(magnitude.dtype))
    if np.isinf(L):
        return (max if L > 0 else min)(magnitude, axis, keepdims)
    if L == 1:
        return sum(magnitude, axis, keepdims=keepdims)
    if L == 2:
        return _math.sqrt(sum(_math.sqr(magnitude), axis, keepdims=keepdims))
    power = constant(np.asarray(L, dtype=magnitude.dtype))
    total = sum(_math.pow(magnitude, power), axis, keepdims=keepdims)
    return _math.pow(total, constant(np.asarray(1.0 / L, dtype=magnitude.dtype)))


# ------------------------------------------------------------------ helpers
def _arith_reduce(op: ScalarOp, what: str, x: Any, axis: Any, dtype: str | None, keepdims: bool,
                  acc_dtype: str | None) -> Variable:
    x = as_tensor_variable(x)
    axes = _axes(x, axis, what)
    out_dtype = _math_dtype(x.dtype) if dtype is None else str(np.dtype(dtype))
    acc_dtype = _checked_acc(x, acc_dtype, what) or THEANO_ACC.get(x.dtype, x.dtype)
    return _keep(CAReduce(op, axes, out_dtype, acc_dtype)(x), axes, keepdims)


def _checked_acc(x: Variable, acc_dtype: str | None, what: str) -> str | None:
    """``acc_dtype`` when it loses none of ``x``'s precision (any float will do for an
    integer ``x``, as in Theano), else Theano's TypeError, with its ways out."""
    if acc_dtype is None:
        return None
    acc_dtype = str(np.dtype(acc_dtype))
    wide = upcast(x.dtype, acc_dtype)
    if wide != acc_dtype and not (x.dtype in DISCRETE and acc_dtype in FLOAT + COMPLEX):
        raise TypeError(f"{what} of {x.describe()} ({x.dtype}) with acc_dtype={acc_dtype!r} "
                        f"would lose precision: leave acc_dtype unset, give one at least as "
                        f"precise as {wide}, or give dtype={acc_dtype!r} instead (the "
                        f"reduction then accumulates precisely and rounds to {acc_dtype} at the "
                        f"end); to accept the loss, cast {x.describe()} to {acc_dtype} first")
    return acc_dtype


def _plain_reduce(op: ScalarOp, what: str, x: Any, axis: Any, keepdims: bool,
                  dtype: str | None) -> Variable:
    x = as_tensor_variable(x)
    axes = _axes(x, axis, what)
    return _keep(CAReduce(op, axes, dtype or x.dtype)(x), axes, keepdims)


def _math_dtype(dtype: str) -> str:
    """The default dtype of a sum or product of ``dtype`` values."""
    if dtype.startswith("uint"):
        return "uint64"
    if dtype == "bool" or dtype.startswith("int"):
        return "int64"
    return dtype


def _divide(total: Variable, count: int | Variable, dtype: str) -> Variable:
    """``total / count`` with ``count`` cast to ``dtype``, so the division keeps total's dtype."""
    if isinstance(count, int) and count == 1:
        return total
    return _math.true_div(total, _math.cast(count, dtype))


def _real(dtype: str) -> str:
    return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)


def _axes(x: Variable, axis: Any, what: str) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence; negatives count from the end) as sorted axes."""
    if isinstance(axis, Variable):
        # Theano took constant variables too: NoneConst, constant(0), as_tensor_variable([0, 1]).
        if isinstance(axis.type, NoneTypeT):
            axis = None
        elif getattr(axis.type, "dtype", None) in DISCRETE and axis.ndim <= 1:
            known = _shape.static_value(axis)
            axis = axis if known is None else np.asarray(known)
    if axis is None:
        return tuple(range(x.ndim))
    if isinstance(axis, np.ndarray) and axis.dtype.kind in "iu" and axis.ndim <= 1:
        axis = axis.tolist()  # Theano took numpy integer arrays too
    items = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    axes = []
    for item in items:
        if isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype.kind in "iu":
            item = int(item)
        if isinstance(item, Variable) or not isinstance(item, (int, np.integer)) or isinstance(item, bool):
            raise TypeError(f"{what}: axis must be None, an int or a tuple of ints fixed when "
                            f"the graph is built, got {item!r}")
        axes.append(_shape.checked_axis(x, item, what))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{what}: axis {tuple(items)} names the same axis twice; name each once")
    return tuple(sorted(axes))


def _axis_tuple(axis: Sequence[int] | int | None) -> tuple[int, ...] | None:
    """An op's ``axis`` argument (None, an int or ints) as sorted ints, or None."""
    if axis is None:
        return None
    return tuple(sorted(int(a) for a in (axis if isinstance(axis, (list, tuple)) else [axis])))


def _keep(result: Variable, axes: tuple[int, ...], keepdims: bool) -> Variable:
    """``result`` with the reduced ``axes`` put back as length-1 dimensions when asked."""
    if not keepdims or not axes:
        return result
    order: list[Any] = list(range(result.ndim))
    for axis in axes:
        order.insert(axis, "x")
    return DimShuffle(result.broadcastable, order)(result)


def _count(x: Variable, axes: tuple[int, ...]) -> int | Variable:
    """How many elements each reduction over ``axes`` sees (an int64 scalar or an int)."""
    return _shape.product([_shape.shape_i(x, a) if not x.broadcastable[a] else 1 for a in axes])


from arignote.tensor import shape as _shape  # noqa: E402
