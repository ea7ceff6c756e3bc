"""Ops of ``MRG_RandomStreams``: the MRG31k3p uniform draw, and sampling from uniforms.

``MRGUniform`` reads an int32 state matrix (one MRG31k3p stream per row) and
a size, and returns the advanced matrix and the sample. Its state is an
ordinary int32 tensor, so it can live on any device; the per-element step is
the int32 recurrence documented in ``mrg31k3p``, which the GPU kernel
(``backends/gpu/mrg.py``, placed by the placement pass) computes bit for bit. ``MultinomialFromUniform``
and ``ChoiceFromUniform`` turn one uniform per draw into category indices.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Op
from arignote.tensor import math as _math
from arignote.tensor.alloc import zeros_like
from arignote.tensor.random import mrg31k3p
from arignote.tensor.shape import static_entry, static_value, vector_length
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["MRGUniform", "MultinomialFromUniform", "ChoiceFromUniform"]


class MRGUniform(Op):
    """``(state, size) -> (new_state, sample)``: floats in (0, 1) of ``dtype``."""

    __props__ = ("dtype", "ndim")
    foldable = False
    random_draw = True  # its sample is a constant for gradients (scan_module/grad.py)

    def __init__(self, dtype: str, ndim: int):
        if dtype not in ("float16", "float32", "float64"):
            raise TypeError(f"MRG uniform draws are float16, float32 or float64, not {dtype}")
        self.dtype = dtype
        self.ndim = ndim

    @classmethod
    def new(cls, rstate: Any, ndim: int | None, dtype: str, size: Any) -> list:
        """``[new_state, sample]`` of one draw of ``size`` (Theano's ``mrg_uniform.new``);
        ``ndim=None`` takes it from the length of ``size``."""
        size = as_tensor_variable(size, ndim=1)
        if ndim is None:
            ndim = vector_length(size)
            if ndim is None:
                raise ValueError(f"the length of size {size} is not fixed in the graph: pass ndim=")
        return cls(dtype, ndim).build(rstate, size).outputs

    def make_node(self, rstate: Any, size: Any) -> Apply:
        rstate = as_tensor_variable(rstate)
        if rstate.dtype != "int32" or rstate.ndim != 2:
            raise TypeError(f"the MRG state must be an int32 matrix (n_streams, 6), got "
                            f"{rstate.describe()} ({rstate.type.describe()})")
        size = _math.cast(as_tensor_variable(size, ndim=1), "int64")
        if vector_length(size) not in (None, self.ndim):
            raise ValueError(f"size {size} has {vector_length(size)} entries for a "
                             f"{self.ndim}-d draw")
        bcast = [static_entry(size, i) == 1 for i in range(self.ndim)]
        return Apply(self, [rstate, size], [rstate.type(), TensorType(self.dtype, bcast)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        rstate, size = inputs
        shape = check_draw(self, node, rstate.shape, size)
        state = rstate.copy()
        z = mrg31k3p.draw(state, int(np.prod(shape)))
        output_storage[0][0] = state
        output_storage[1][0] = mrg31k3p.to_float(z, self.dtype).reshape(shape)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        size = node.inputs[1]
        return [input_shapes[0], [size[i] for i in range(self.ndim)]]

    def grad(self, inputs: list, output_grads: list) -> list:
        return [None, None]


def check_draw(op: Op, node: Apply, state_shape: tuple, size: Any) -> tuple[int, ...]:
    """The sample's shape, after the checks every MRG draw makes (on any device)."""
    if len(size) != op.ndim:
        raise ValueError(f"{op}: size {tuple(size)} has {len(size)} entries, the draw "
                         f"{node.outputs[1].describe()} has {op.ndim} dimensions")
    if len(state_shape) != 2 or state_shape[1] != 6 or state_shape[0] == 0:
        raise ValueError(f"{op}: the state must have shape (n_streams, 6), got {state_shape}")
    shape = tuple(int(s) for s in size)
    n = int(np.prod(shape))
    if n > mrg31k3p.M1:
        raise ValueError(f"MRG draws are limited to 2**31 - 1 samples, {n} asked")
    return shape


def _zero_grads(inputs: list) -> list:
    """Theano's gradient of a draw from given uniforms: zero for the probabilities and the
    uniforms (a draw is piecewise constant in both), none for the count."""
    pvals, unis, _ = inputs
    return [zeros_like(pvals), zeros_like(unis), None]


class MultinomialFromUniform(Op):
    """Counts per category from ``n`` uniforms per row of ``pvals``.

    Row ``r`` of the ``c``-th sample uses ``unis[c * n_rows + r]`` and picks the
    first category whose running sum of probabilities (in float64) exceeds it;
    a uniform beyond the row's total adds nothing, as in Theano's C code.
    """

    __props__ = ("odtype",)

    def __init__(self, odtype: str = "int64"):
        self.odtype = odtype

    def make_node(self, pvals: Any, unis: Any, n: Any = 1) -> Apply:
        pvals, unis, n = (as_tensor_variable(v) for v in (pvals, unis, n))
        if pvals.ndim != 2 or unis.ndim != 1 or n.ndim != 0:
            raise TypeError(f"{type(self).__name__} takes a pvals matrix, a vector of uniforms "
                            f"and a scalar n, got {pvals.type}, {unis.type}, {n.type}")
        odtype = pvals.dtype if self.odtype == "auto" else self.odtype
        return Apply(self, [pvals, unis, n], [TensorType(odtype, pvals.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        pvals, unis, n = inputs
        rows, cats = pvals.shape
        n = int(n)
        if unis.shape[0] != rows * n:
            raise ValueError(f"{type(self).__name__}: {unis.shape[0]} uniforms for {rows} rows "
                             f"and n={n}; it needs rows * n")
        cumsum = np.cumsum(pvals, axis=1, dtype=np.float64)
        out = np.zeros(pvals.shape, dtype=node.outputs[0].dtype)
        rows_index = np.arange(rows)
        for c in range(n):
            u = unis[c * rows:(c + 1) * rows].astype(np.float64)
            picked = (cumsum <= u[:, None]).sum(axis=1)
            hit = picked < cats
            np.add.at(out, (rows_index[hit], picked[hit]), 1)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]

    def grad(self, inputs: list, output_grads: list) -> list:
        return _zero_grads(inputs)


class ChoiceFromUniform(Op):
    """``n`` categories per row of ``p``, from ``n`` uniforms per row.

    Each pick takes the first category whose running sum (in float64) exceeds
    the uniform; without replacement (the default) it then zeroes that
    category and renormalises the row, in the row's dtype, so it is not picked
    again. The result has shape ``(rows, n)``.
    """

    __props__ = ("odtype", "replace")

    def __init__(self, odtype: str = "int64", replace: bool = False):
        self.odtype = odtype
        self.replace = replace

    def make_node(self, pvals: Any, unis: Any, n: Any = 1) -> Apply:
        pvals, unis, n = (as_tensor_variable(v) for v in (pvals, unis, n))
        if pvals.ndim != 2 or unis.ndim != 1 or n.ndim != 0:
            raise TypeError(f"{type(self).__name__} takes a p matrix, a vector of uniforms and "
                            f"a scalar n, got {pvals.type}, {unis.type}, {n.type}")
        odtype = "int64" if self.odtype == "auto" else self.odtype
        one = static_value(n)  # one choice per row: a broadcastable column, as in Theano
        pattern = (pvals.broadcastable[0], one is not None and int(one) == 1)
        return Apply(self, [pvals, unis, n], [TensorType(odtype, pattern)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        pvals, unis, n = inputs
        rows, cats = pvals.shape
        n = int(n)
        if n > cats and not self.replace:
            raise ValueError(f"choice without replacement of {n} items from {cats} categories: "
                             f"n must be at most {cats}")
        if unis.shape[0] != rows * n:
            raise ValueError(f"{type(self).__name__}: {unis.shape[0]} uniforms for {rows} rows "
                             f"and n={n}; it needs rows * n")
        p = pvals.astype(pvals.dtype if pvals.dtype.kind == "f" else np.float64)  # a copy
        out = np.full((rows, n), -1, dtype=node.outputs[0].dtype)
        rows_index = np.arange(rows)
        for c in range(n):
            u = unis[c * rows:(c + 1) * rows].astype(np.float64)
            picked = (np.cumsum(p, axis=1, dtype=np.float64) <= u[:, None]).sum(axis=1)
            # a uniform past the row's rounded total takes its last category still available
            last = cats - 1 - np.argmax(p[:, ::-1] > 0, axis=1)
            picked = np.where(picked >= cats, last, picked)
            out[:, c] = picked
            if self.replace:
                continue
            p[rows_index, picked] = 0
            total = p.sum(axis=1, keepdims=True)
            p = np.divide(p, total, out=np.zeros_like(p), where=total > 0)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(input_shapes[0][0], node.inputs[2])]

    def grad(self, inputs: list, output_grads: list) -> list:
        return _zero_grads(inputs)
