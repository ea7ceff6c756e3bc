"""Elementwise sparse arithmetic: transpose, neg, add, sub, mul, comparisons, scaling,
the structured ops on the stored values, and ``sp_sum``.

"Structured" (Theano's word) means computed only where the sparse input stores
a value: ``structured_exp(x)`` is ``exp`` of the stored values, not ``exp`` of
the zeros. Those ops are ``CSM(f(data), indices, indptr, shape)`` of the
input's parts (``structured``), so their gradients come from the dense op's.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any
from collections.abc import Callable

import numpy as np
import scipy.sparse

from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import upcast
from arignote.sparse.convert import ShapeKeepingOp, CSM, SparseOp, csm_properties, entry_positions
from arignote.sparse.type import FORMAT_CLASSES, SparseType
from arignote.sparse.variable import as_sparse_or_tensor_variable, as_sparse_variable, is_sparse_variable
from arignote.tensor import math as tm
from arignote.tensor.nnet import basic as nnet
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Transpose", "transpose", "Neg", "neg", "AddSS", "AddSD", "AddSD_ccode", "AddSSData", "add_s_s_data", "StructuredAddSV", "MulSS", "MulSD", "MulSV",
           "add", "sub", "mul", "add_s_s", "add_s_d", "mul_s_s", "mul_s_d", "mul_s_v",
           "structured_add_s_v", "col_scale", "row_scale", "ColScaleCSC", "RowScaleCSC", "ComparisonSS", "ComparisonSD", "eq", "neq",
           "lt", "gt", "le", "ge", "SpSum", "sp_sum", "structured", "structured_monoid",
           "structured_sigmoid", "structured_exp", "structured_log", "structured_pow",
           "structured_minimum", "structured_maximum", "structured_add", "UNARY", "AsFormat", "as_format"]


def _as_format(m: Any, fmt: str, dtype: str) -> Any:
    """``m`` (any scipy matrix) as a ``fmt`` matrix of ``dtype``."""
    m = m.asformat(fmt)
    return m if m.dtype == dtype else m.astype(dtype)


class AsFormat(ShapeKeepingOp):
    """The same matrix in ``format`` (used to give a gradient its input's exact type)."""

    __props__ = ("format",)

    def __init__(self, format: str):
        self.format = format

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [SparseType(self.format, x.dtype)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        out[0][0] = inputs[0].asformat(self.format, copy=True)


def as_format(x: Variable, fmt: str) -> Variable:
    return x if x.type.format == fmt else AsFormat(fmt)(x)


class Transpose(SparseOp):
    """The transpose, a view: a csr matrix's is csc and a csc's is csr."""

    view_map = {0: [0]}

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [SparseType("csc" if x.format == "csr" else "csr", x.dtype)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        out[0][0] = inputs[0].transpose()

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        rows, cols = input_shapes[0]
        return [(cols, rows)]


transpose = Transpose()


class Neg(ShapeKeepingOp):
    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        out[0][0] = -inputs[0]


neg = Neg()


class _ElementwiseSS(ShapeKeepingOp):
    """Two sparse matrices of one shape combined entry by entry (``_combine``), sparse in the
    first one's format."""

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        return Apply(self, [x, y], [SparseType(x.format, upcast(x.dtype, y.dtype))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y = inputs
        _same_shape(node, x, y)
        out[0][0] = _as_format(self._combine(x, y), node.outputs[0].type.format, node.outputs[0].dtype)


class AddSS(_ElementwiseSS):
    """sparse + sparse."""

    def _combine(self, x: Any, y: Any) -> Any:
        return x + y


class AddSD(ShapeKeepingOp):
    """sparse + dense: dense (the dense operand broadcasts)."""

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        if y.ndim > 2:
            raise TypeError(f"sparse add: {y.describe()} has {y.ndim} dimensions; a matrix has 2")
        return Apply(self, [x, y], [TensorType(upcast(x.dtype, y.dtype), (False, False))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y = inputs
        dtype = node.outputs[0].dtype
        writable = getattr(self, "inplace", False) and y.shape == x.shape and y.dtype == dtype
        result = y if writable else np.array(np.broadcast_to(y, x.shape), dtype=dtype)
        rows, cols = entry_positions(x)
        np.add.at(result, (rows, cols), x.data.astype(dtype, copy=False))
        out[0][0] = result


class AddSD_ccode(AddSD):  # noqa: N801  (Theano's name)
    """sparse + dense with the sparse operand's ``format`` fixed; ``inplace=True`` adds the
    stored values into the dense operand's buffer (the in-place phase makes it from AddSD
    where that buffer is not needed afterwards)."""

    __props__ = ("format", "inplace")

    def __init__(self, format: str, inplace: bool = False):
        self.format = format
        self.inplace = bool(inplace)
        self.destroy_map = {0: [1]} if self.inplace else {}

    def make_node(self, x: Any, y: Any) -> Apply:
        node = super().make_node(x, y)
        x, y = node.inputs
        if x.format != self.format:
            raise TypeError(f"AddSD_ccode({self.format!r}): {x.describe()} is {x.format}; build "
                            f"AddSD_ccode({x.format!r})")
        if self.inplace and y.type != node.outputs[0].type:
            raise TypeError(f"AddSD_ccode(inplace=True): {y.describe()} ({y.type}) cannot hold the "
                            f"result ({node.outputs[0].type}); use inplace=False")
        return node


class AddSSData(ShapeKeepingOp):
    """sparse + sparse of the same pattern: the stored values added, the pattern kept."""

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        if x.type != y.type:
            raise TypeError(f"add_s_s_data: {x.describe()} ({x.type}) and {y.describe()} ({y.type}) "
                            "must have the same format and dtype")
        return Apply(self, [x, y], [x.type()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y = inputs
        _same_shape(node, x, y)
        if x.nnz != y.nnz:
            raise ValueError(f"add_s_s_data: {node.inputs[0].describe()} stores {x.nnz} values and "
                             f"{node.inputs[1].describe()} {y.nnz}: they must share one pattern")
        out[0][0] = _with_data(x, x.data + y.data, node.outputs[0].dtype)


class StructuredAddSV(ShapeKeepingOp):
    """sparse + a vector along the rows, where the matrix stores values only."""

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        if y.ndim != 1:
            raise TypeError(f"structured_add_s_v: {y.describe()} must be a vector")
        return Apply(self, [x, y], [SparseType(x.format, upcast(x.dtype, y.dtype))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y = inputs
        _, cols = entry_positions(x)
        out[0][0] = _with_data(x, x.data + y[cols], node.outputs[0].dtype)


class MulSS(_ElementwiseSS):
    """sparse * sparse elementwise."""

    def _combine(self, x: Any, y: Any) -> Any:
        return x.multiply(y)


class MulSD(ShapeKeepingOp):
    """sparse * dense elementwise (a scalar, a row vector or a matrix, broadcasting as numpy
    does): sparse, with exactly the sparse operand's stored positions (structured)."""

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        if y.ndim > 2:
            raise TypeError(f"sparse mul: {y.describe()} has {y.ndim} dimensions; a matrix has 2")
        return Apply(self, [x, y], [SparseType(x.format, upcast(x.dtype, y.dtype))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y = inputs
        try:
            full = np.broadcast_to(y, x.shape)
        except ValueError:
            raise ValueError(f"sparse mul: {node.inputs[0].describe()} has shape {x.shape}, and "
                             f"{node.inputs[1].describe()} shape {np.shape(y)}, which does not "
                             "broadcast to it") from None
        rows, cols = entry_positions(x)
        out[0][0] = _with_data(x, x.data * full[rows, cols], node.outputs[0].dtype)


class MulSV(MulSD):
    """sparse * vector: column ``j`` of the sparse ``x`` times ``y[j]`` (structured)."""

    def make_node(self, x: Any, y: Any) -> Apply:
        y = as_tensor_variable(y)
        if y.ndim != 1:
            raise TypeError(f"mul_s_v: {y.describe()} must be a vector (one factor per column), got "
                            f"{y.ndim} dimensions; use mul_s_d for a matrix")
        return super().make_node(x, y)


def _with_data(x: Any, data: np.ndarray, dtype: str) -> Any:
    """A matrix of ``x``'s format and pattern holding ``data`` (indices copied)."""
    return FORMAT_CLASSES[x.format]((np.asarray(data, dtype=dtype), x.indices.copy(), x.indptr.copy()),
                                    shape=x.shape)


def _same_shape(node: Apply, x: Any, y: Any) -> None:
    if x.shape != y.shape:
        raise ValueError(f"{type(node.op).__name__}: {node.inputs[0].describe()} has shape {x.shape} "
                         f"but {node.inputs[1].describe()} has {y.shape}; give both the same shape")


add_s_s, add_s_d, mul_s_s, mul_s_d = AddSS(), AddSD(), MulSS(), MulSD()
add_s_s_data = AddSSData()
mul_s_v = MulSV()
structured_add_s_v = StructuredAddSV()


def _operands(name: str, x: Any, y: Any) -> tuple[Variable, Variable]:
    x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
    if not (is_sparse_variable(x) or is_sparse_variable(y)):
        raise TypeError(f"sparse.{name}: one of {x.describe()} and {y.describe()} must be sparse; "
                        f"use tensor.{name} for dense operands")
    return x, y


def add(x: Any, y: Any) -> Variable:
    """x + y where one is sparse: sparse if both are, else dense."""
    x, y = _operands("add", x, y)
    if is_sparse_variable(x) and is_sparse_variable(y):
        return add_s_s(x, y)
    return add_s_d(x, y) if is_sparse_variable(x) else add_s_d(y, x)


def sub(x: Any, y: Any) -> Variable:
    """x - y where one is sparse: sparse if both are, else dense."""
    x, y = _operands("sub", x, y)
    return add(x, neg(y) if is_sparse_variable(y) else tm.neg(y))


def mul(x: Any, y: Any) -> Variable:
    """x * y elementwise where one is sparse: always sparse (a dense factor only scales the
    sparse one's stored values)."""
    x, y = _operands("mul", x, y)
    if is_sparse_variable(x) and is_sparse_variable(y):
        return mul_s_s(x, y)
    return mul_s_d(x, y) if is_sparse_variable(x) else mul_s_d(y, x)


class _ScaleCSC(ShapeKeepingOp):
    """A csc matrix's stored values times ``s`` at their column (``axis=1``) or row
    (``axis=0``): the pattern is kept, only the values array is computed."""

    axis = 1

    def make_node(self, x: Any, s: Any) -> Apply:
        x, s = as_sparse_variable(x), as_tensor_variable(s)
        name = type(self).__name__
        if x.format != "csc":
            raise TypeError(f"{name}: {x.describe()} is {x.format}; it scales a csc matrix (col_scale and "
                            "row_scale take either format)")
        if s.ndim != 1:
            raise TypeError(f"{name}: the scales {s.describe()} must be a vector, got {s.ndim} dimensions")
        return Apply(self, [x, s], [SparseType("csc", upcast(x.dtype, s.dtype))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, s = inputs
        if len(s) != x.shape[self.axis]:
            what = "columns" if self.axis else "rows"
            raise ValueError(f"{type(self).__name__}: {node.inputs[0].describe()} has {x.shape[self.axis]} "
                             f"{what} but {node.inputs[1].describe()} {len(s)} scales; give one per {what[:-1]}")
        rows, cols = entry_positions(x)
        out[0][0] = _with_data(x, x.data * s[cols if self.axis else rows], node.outputs[0].dtype)


class ColScaleCSC(_ScaleCSC):
    """Column ``j`` of a csc matrix times ``s[j]``."""


class RowScaleCSC(_ScaleCSC):
    """Row ``i`` of a csc matrix times ``s[i]``."""

    axis = 0


col_scale_csc, row_scale_csc = ColScaleCSC(), RowScaleCSC()


def col_scale(x: Any, s: Any) -> Variable:
    """Column ``j`` of the sparse ``x`` times ``s[j]`` (structured): a csr matrix is scaled
    as the rows of its (csc) transpose."""
    x = as_sparse_variable(x)
    return col_scale_csc(x, s) if x.format == "csc" else transpose(row_scale_csc(transpose(x), s))


def row_scale(x: Any, s: Any) -> Variable:
    """Row ``i`` of the sparse ``x`` times ``s[i]`` (structured): a csr matrix is scaled as
    the columns of its (csc) transpose."""
    x = as_sparse_variable(x)
    return row_scale_csc(x, s) if x.format == "csc" else transpose(col_scale_csc(transpose(x), s))


# ------------------------------------------------------------ comparisons
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "eq": operator.eq, "neq": operator.ne, "lt": operator.lt, "gt": operator.gt, "le": operator.le,
    "ge": operator.ge,
}
_MIRROR = {"eq": "eq", "neq": "neq", "lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}


class ComparisonSS(ShapeKeepingOp):
    """sparse ``name`` sparse: a uint8 sparse matrix of the first one's format."""

    __props__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        return Apply(self, [x, y], [SparseType(x.format, "uint8")()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y = inputs
        _same_shape(node, x, y)
        with warnings.catch_warnings():  # scipy warns that == stores most entries: asked for
            warnings.simplefilter("ignore", scipy.sparse.SparseEfficiencyWarning)
            out[0][0] = _as_format(COMPARISONS[self.name](x, y), x.format, "uint8")


class ComparisonSD(ShapeKeepingOp):
    """sparse ``name`` dense: a uint8 dense matrix."""

    __props__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        return Apply(self, [x, y], [TensorType("uint8", (False, False))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        x, y = inputs
        out[0][0] = np.asarray(COMPARISONS[self.name](x.toarray(), y), dtype="uint8")


def _comparison(name: str) -> Callable[[Any, Any], Variable]:
    def compare(x: Any, y: Any) -> Variable:
        x, y = _operands(name, x, y)
        if is_sparse_variable(x) and is_sparse_variable(y):
            return ComparisonSS(name)(x, y)
        return ComparisonSD(name)(x, y) if is_sparse_variable(x) else ComparisonSD(_MIRROR[name])(y, x)
    compare.__name__ = name
    compare.__doc__ = f"x {name} y where one is sparse, as uint8: sparse if both are, else dense."
    return compare


eq, neq, lt, gt, le, ge = (_comparison(n) for n in ("eq", "neq", "lt", "gt", "le", "ge"))


# ------------------------------------------------------------ sums
class SpSum(SparseOp):
    """The sum of a sparse matrix (``axis`` None, 0 or 1), dense, in the matrix's dtype.
    ``sparse_grad=True``: the gradient is structured (only where ``x`` stores values)."""

    __props__ = ("axis", "sparse_grad")

    def __init__(self, axis: int | None = None, sparse_grad: bool = False):
        if axis not in (None, 0, 1):
            raise ValueError(f"sp_sum: axis must be None, 0 or 1, got {axis!r}")
        self.axis = axis
        self.sparse_grad = bool(sparse_grad)

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        ndim = 0 if self.axis is None else 1
        return Apply(self, [x], [TensorType(x.dtype, (False,) * ndim)()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        total = inputs[0].sum(self.axis, dtype=node.outputs[0].dtype)
        out[0][0] = np.asarray(total, dtype=node.outputs[0].dtype).reshape(
            () if self.axis is None else (-1,))

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        rows, cols = input_shapes[0]
        return [() if self.axis is None else (cols,) if self.axis == 0 else (rows,)]


def sp_sum(x: Any, axis: int | None = None, sparse_grad: bool = False) -> Variable:
    """The sum of the sparse ``x`` over ``axis`` (None: all), a dense tensor."""
    return SpSum(axis, sparse_grad)(x)


# ------------------------------------------------------------ structured ops
def structured(fn: Callable[..., Variable], x: Any, *args: Any) -> Variable:
    """``fn`` applied to the stored values of the sparse ``x`` (the pattern kept)."""
    x = as_sparse_variable(x)
    data, indices, indptr, shape = csm_properties(x)
    return CSM(x.format)(fn(data, *args), indices, indptr, shape)


def structured_monoid(fn: Callable[..., Variable]) -> Callable[..., Variable]:
    """The structured version of the dense function ``fn`` (Theano's decorator)."""
    def apply(x: Any, *args: Any) -> Variable:
        return structured(fn, x, *args)
    apply.__name__ = getattr(fn, "__name__", "structured")
    apply.__doc__ = f"``{apply.__name__}`` of the stored values of a sparse matrix (structured)."
    return apply


def structured_sigmoid(x: Any) -> Variable:
    return structured(nnet.sigmoid, x)


def structured_exp(x: Any) -> Variable:
    return structured(tm.exp, x)


def structured_log(x: Any) -> Variable:
    return structured(tm.log, x)


def structured_pow(x: Any, y: Any) -> Variable:
    """The stored values to the power ``y`` (a scalar)."""
    return structured(tm.pow, x, y)


def structured_minimum(x: Any, y: Any) -> Variable:
    return structured(tm.minimum, x, y)


def structured_maximum(x: Any, y: Any) -> Variable:
    return structured(tm.maximum, x, y)


def structured_add(x: Any, y: Any) -> Variable:
    """The stored values plus ``y`` (a scalar)."""
    return structured(tm.add, x, y)


# The unary functions of Theano's sparse module, applied to the stored values: each
# maps 0 to 0, so the stored values are the whole result.
UNARY = ("sin", "tan", "arcsin", "arctan", "sinh", "arcsinh", "tanh", "arctanh", "rint", "sgn",
         "ceil", "floor", "trunc", "log1p", "expm1", "deg2rad", "rad2deg", "sqr", "sqrt", "conj",
         "abs_")
_TENSOR_NAMES = {"rint": "round_half_to_even"}


def _unary(name: str) -> Callable[[Any], Variable]:
    fn = getattr(tm, _TENSOR_NAMES.get(name, name))

    def apply(x: Any) -> Variable:
        return structured(fn, x)
    apply.__name__ = name
    apply.__doc__ = f"``{name}`` of the stored values of a sparse matrix (structured)."
    return apply


globals().update({name: _unary(name) for name in UNARY})
__all__ += list(UNARY)
