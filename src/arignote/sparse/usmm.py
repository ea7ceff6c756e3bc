"""``usmm``: ``alpha * dot(x, y) + z`` as one op, with ``x`` or ``y`` (or both) sparse.

The fast_run rewrite ``local_usmm`` makes it out of ``z - a * dot(x, y)`` (and
``z + a * dot(x, y)``), Theano's update of a dense matrix by a sparse product:
one pass adds the scaled product to ``z``, instead of a product, a scaling and
a sum that each make a dense matrix. ``local_usmm_csx`` then gives a csc
``x`` times a dense ``y`` its parts form, ``UsmmCscDense``, which the in-place
phase lets write into ``z``'s buffer.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from arignote.graph.basic import Apply, Variable
from arignote.scalar.dtypes import upcast
from arignote.sparse.convert import SparseOp
from arignote.sparse.products import _check_inner
from arignote.sparse.variable import as_sparse_or_tensor_variable, is_sparse_variable
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["Usmm", "usmm", "UsmmCscDense", "usmm_csc_dense", "usmm_csc_dense_inplace"]


def _alpha(alpha: Any, op: str) -> Variable:
    alpha = as_tensor_variable(alpha)
    if not all(alpha.broadcastable):
        raise TypeError(f"{op}: alpha {alpha.describe()} ({alpha.type}) must be a scalar (every axis "
                        "broadcastable); give a 0-d tensor")
    return alpha


def _dense_matrix(var: Any, what: str, op: str) -> Variable:
    var = as_tensor_variable(var)
    if var.ndim != 2:
        raise TypeError(f"{op}: {what} {var.describe()} must be a dense matrix, got {var.ndim} dimensions")
    return var


def _update(z: np.ndarray, alpha: np.ndarray, product: Any, dtype: str, out: np.ndarray | None) -> np.ndarray:
    """``z + alpha * product`` in ``dtype``, written into ``out`` when given (z's own buffer)."""
    if scipy.sparse.issparse(product):
        product = product.toarray()
    scaled = np.multiply(np.asarray(product), np.asarray(alpha).reshape(()), dtype=dtype)
    if out is None:
        out = np.array(np.broadcast_to(z, scaled.shape), dtype=dtype)
    out += scaled
    return out


class Usmm(SparseOp):
    """``usmm(alpha, x, y, z)`` = ``alpha * dot(x, y) + z``: ``x`` or ``y`` sparse (csr or csc),
    the other a dense or sparse matrix, ``alpha`` a scalar, ``z`` a dense matrix; dense result
    in the four dtypes' upcast. Its gradient is not implemented (the rewrite makes it after
    differentiation)."""

    def make_node(self, alpha: Any, x: Any, y: Any, z: Any) -> Apply:
        x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
        if not (is_sparse_variable(x) or is_sparse_variable(y)):
            raise TypeError(f"usmm: one of {x.describe()} and {y.describe()} must be sparse; for dense "
                            "operands write alpha * dot(x, y) + z (it becomes Gemm)")
        for what, var in (("x", x), ("y", y)):
            if not is_sparse_variable(var):
                _dense_matrix(var, what, "usmm")
        alpha, z = _alpha(alpha, "usmm"), _dense_matrix(z, "z", "usmm")
        dtype = upcast(alpha.dtype, x.dtype, y.dtype, z.dtype)
        return Apply(self, [alpha, x, y, z], [TensorType(dtype, (False, False))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        alpha, x, y, z = inputs
        _check_inner(node, x, y)
        out[0][0] = _update(z, alpha, x @ y, node.outputs[0].dtype, None)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(input_shapes[1][0], input_shapes[2][1])]


usmm = Usmm()


class UsmmCscDense(SparseOp):
    """``usmm`` of a csc ``x`` given by its parts (values, row indices, column pointers, number
    of rows) and a dense ``y``; float32/float64 only. ``inplace=True``: the result is written
    into ``z`` (which must then have the result's dtype)."""

    __props__ = ("inplace",)

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [6]} if self.inplace else {}

    def __str__(self) -> str:
        return f"UsmmCscDense{{{'inplace' if self.inplace else 'no_inplace'}}}"

    def make_node(self, alpha: Any, x_val: Any, x_ind: Any, x_ptr: Any, x_nrows: Any, y: Any,
                  z: Any) -> Apply:
        name = "UsmmCscDense"
        alpha, y, z = _alpha(alpha, name), _dense_matrix(y, "y", name), _dense_matrix(z, "z", name)
        x_val, x_ind, x_ptr, x_nrows = (as_tensor_variable(v) for v in (x_val, x_ind, x_ptr, x_nrows))
        for what, var, ndim in (("x_val", x_val, 1), ("x_ind", x_ind, 1), ("x_ptr", x_ptr, 1),
                                ("x_nrows", x_nrows, 0)):
            if var.ndim != ndim or (what != "x_val" and var.dtype not in ("int32", "int64")):
                kind = "a vector" if ndim else "an integer scalar"
                raise TypeError(f"{name}: {what} {var.describe()} ({var.type}) must be {kind}"
                                f"{' of integers' if what != 'x_val' and ndim else ''}")
        dtype = upcast(alpha.dtype, x_val.dtype, y.dtype, z.dtype)
        if dtype not in ("float32", "float64"):
            raise TypeError(f"{name}: computes float32 and float64 only, the operands make {dtype}; "
                            "use usmm")
        if self.inplace and z.dtype != dtype:
            raise TypeError(f"{name}{{inplace}}: z {z.describe()} is {z.dtype} but the result is {dtype}: "
                            "it cannot be written into z")
        return Apply(self, [alpha, x_val, x_ind, x_ptr, x_nrows, y, z], [TensorType(dtype, (False, False))()])

    def perform(self, node: Apply, inputs: list, out: list[list]) -> None:
        alpha, x_val, x_ind, x_ptr, x_nrows, y, z = inputs
        x = scipy.sparse.csc_matrix((x_val, x_ind, x_ptr), shape=(int(x_nrows), len(x_ptr) - 1))
        _check_inner(node, x, y)
        dtype = node.outputs[0].dtype
        into = z if self.inplace and z.shape == (x.shape[0], y.shape[1]) else None
        out[0][0] = _update(z, alpha, x @ y, dtype, into)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(node.inputs[4], input_shapes[5][1])]


usmm_csc_dense = UsmmCscDense(inplace=False)
usmm_csc_dense_inplace = UsmmCscDense(inplace=True)
