"""Sliding windows as rows (``tensor.nnet.neighbours``): images2neibs and neibs2images.

``images2neibs`` takes a 4-d tensor (list 1, list 2, rows, columns) and
returns a matrix with one row per (list 1, list 2, window row, window
column), in that order, each row a flattened ``neib_shape`` patch. The patch
at grid position ``(a, b)`` starts at ``(a * step_rows, b * step_cols)`` of the
image, shifted for the modes that reach past the border:

- ``valid``: patches must tile the image exactly (``(rows - r) % step == 0``);
- ``ignore_borders``: as valid, leftover rows and columns are dropped;
- ``half``/``full``: the image is zero-padded by ``r // 2`` / ``r - 1`` first;
- ``wrap_centered``: patches (of odd size) are centred on every ``step``-th
  pixel and wrap around the borders.

The op gathers with index arrays (no Python loop over images); its gradient is
a scatter-add of the rows back into the image, one pass per position inside the
patch (within one such pass no two patches write the same pixel).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Op, Variable
from arignote.scalar.dtypes import DISCRETE
from arignote.tensor import math as _math
from arignote.tensor.alloc import zeros
from arignote.tensor.join import concatenate
from arignote.tensor.shape import reshape, vector_entry
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["images2neibs", "neibs2images", "Images2Neibs", "Images2NeibsGrad"]

MODES = ("valid", "half", "full", "wrap_centered", "ignore_borders")


def _int_pair(value: Any, what: str) -> Variable:
    var = as_tensor_variable(value)
    if var.ndim != 1 or var.dtype not in DISCRETE or var.dtype == "bool":
        raise TypeError(f"images2neibs: {what} must be a vector of 2 ints, got {value!r}")
    return var


def _grid(mode: str, size: Any, patch: Any, step: Any) -> Any:
    """Patches along one axis (ints or int scalars)."""
    if mode == "wrap_centered":
        return (size + step - 1) // step
    if mode == "half":
        return (size - patch % 2) // step + 1
    if mode == "full":
        return (size + patch - 2) // step + 1
    return (size - patch) // step + 1


def _indices(mode: str, size: int, patch: int, step: int, grid: int) -> tuple[np.ndarray, int]:
    """Image index of each (patch, position) along one axis, -1 where it falls in padding."""
    index = (np.arange(grid) * step)[:, None] + np.arange(patch)[None, :]
    if mode == "wrap_centered":
        return (index - patch // 2) % size, 0
    shift = {"half": patch // 2, "full": patch - 1}.get(mode, 0)
    index = index - shift
    return np.where((index >= 0) & (index < size), index, -1), shift


class _NeibsBase(Op):
    __props__ = ("mode",)

    def __init__(self, mode: str = "valid"):
        if mode not in MODES:
            raise NotImplementedError(f"Only modes {', '.join(MODES)} have been implemented for "
                                      f"{type(self).__name__}")
        self.mode = mode

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.mode}}}"

    def geometry(self, node: Apply, shape: tuple, neib_shape: np.ndarray, neib_step: np.ndarray):
        """Row and column index arrays (grid x patch), after Theano's checks."""
        if len(neib_shape) != 2 or len(neib_step) != 2:
            raise ValueError(f"images2neibs: neib_shape {tuple(neib_shape)} and neib_step "
                             f"{tuple(neib_step)} must have 2 entries each")
        (c, d), (sx, sy) = (int(v) for v in neib_shape), (int(v) for v in neib_step)
        if sx <= 0 or sy <= 0:
            raise ValueError(f"neib_step wrong step ; values <= 0. Got {tuple(neib_step)}")
        if c <= 0 or d <= 0:
            raise ValueError(f"neib_shape values <=0. Got {tuple(neib_shape)}")
        height, width = shape[2], shape[3]
        image = node.inputs[0].describe()
        if self.mode == "wrap_centered":
            if c % 2 != 1 or d % 2 != 1:
                raise TypeError("Images2Neibs: in mode wrap_centered need patch with odd shapes")
            if height < c or width < d:
                raise TypeError(f"Images2Neibs: in wrap_centered mode, don't support image shapes "
                                f"smaller then the patch shapes: neib_shape=({c},{d}), {image} "
                                f"has shape {shape}")
        elif self.mode in ("valid", "half", "full"):
            extra = {"valid": (-c, -d), "half": (-(c % 2), -(d % 2)), "full": (c - 2, d - 2)}[self.mode]
            for axis, (n, p, s, e) in enumerate(((height, c, sx, extra[0]), (width, d, sy, extra[1]))):
                if n < p or (n + e) % s:
                    raise TypeError(f"neib_shape[{axis}]={p}, neib_step[{axis}]={s} and "
                                    f"{image} shape[{axis + 2}]={n} not consistent (mode "
                                    f"{self.mode!r}: use 'ignore_borders' to drop the rest)")
        rows, _ = _indices(self.mode, height, c, sx, _grid(self.mode, height, c, sx))
        cols, _ = _indices(self.mode, width, d, sy, _grid(self.mode, width, d, sy))
        return rows, cols


class Images2Neibs(_NeibsBase):
    """Inputs ``ten4``, ``neib_shape``, ``neib_step``; see ``images2neibs``."""

    def make_node(self, ten4: Any, neib_shape: Any, neib_step: Any = None) -> Apply:
        ten4 = as_tensor_variable(ten4)
        if ten4.ndim != 4:
            raise TypeError(f"images2neibs: {ten4.describe()} must be a 4-d tensor, got {ten4.ndim} "
                            "dimensions")
        neib_shape = _int_pair(neib_shape, "neib_shape")
        neib_step = neib_shape if neib_step is None else _int_pair(neib_step, "neib_step")
        return Apply(self, [ten4, neib_shape, neib_step], [TensorType(ten4.dtype, (False, False))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, neib_shape, neib_step = inputs
        rows, cols = self.geometry(node, x.shape, neib_shape, neib_step)
        # Index -1 reads the extra zero row/column appended below.
        padded = np.zeros((x.shape[0], x.shape[1], x.shape[2] + 1, x.shape[3] + 1), x.dtype)
        padded[:, :, :-1, :-1] = x
        patches = padded[:, :, rows[:, :, None, None], cols[None, None, :, :]]  # n, s, a, i, b, j
        patches = patches.transpose(0, 1, 2, 4, 3, 5)
        output_storage[0][0] = np.ascontiguousarray(patches).reshape(-1, rows.shape[1] * cols.shape[1])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = input_shapes[0]
        c, d = (vector_entry(node.inputs[1], i) for i in range(2))
        sx, sy = (vector_entry(node.inputs[2], i) for i in range(2))
        grid = _grid(self.mode, shape[2], c, sx) * _grid(self.mode, shape[3], d, sy)
        return [(grid * shape[1] * shape[0], c * d)]


class Images2NeibsGrad(_NeibsBase):
    """The gradient of Images2Neibs: the rows ``gz`` added back into an image of
    ``ten4``'s shape (inputs ``ten4``, ``gz``, ``neib_shape``, ``neib_step``)."""

    def make_node(self, ten4: Any, gz: Any, neib_shape: Any, neib_step: Any) -> Apply:
        ten4, gz = as_tensor_variable(ten4), as_tensor_variable(gz)
        return Apply(self, [ten4, gz, _int_pair(neib_shape, "neib_shape"), _int_pair(neib_step, "neib_step")],
                     [TensorType(gz.dtype, ten4.broadcastable)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, gz, neib_shape, neib_step = inputs
        rows, cols = self.geometry(node, x.shape, neib_shape, neib_step)
        (grid_r, c), (grid_c, d) = rows.shape, cols.shape
        expected = (x.shape[0] * x.shape[1] * grid_r * grid_c, c * d)
        if gz.shape != expected:
            raise ValueError(f"Images2NeibsGrad: the gradient has shape {gz.shape}, but the patches "
                             f"of {node.inputs[0].describe()} have shape {expected}")
        parts = gz.reshape(x.shape[0], x.shape[1], grid_r, grid_c, c, d)
        image = np.zeros((x.shape[0], x.shape[1], x.shape[2] + 1, x.shape[3] + 1), gz.dtype)
        for i in range(c):
            for j in range(d):
                # One position inside the patch: distinct patches hit distinct pixels (padding
                # goes to the extra row/column, which is dropped).
                image[:, :, rows[:, i, None], cols[None, :, j]] += parts[:, :, :, :, i, j]
        output_storage[0][0] = np.ascontiguousarray(image[:, :, :-1, :-1])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def images2neibs(ten4: Any, neib_shape: Any, neib_step: Any = None, mode: str = "valid") -> Variable:
    """The ``neib_shape`` patches of a 4-d ``ten4`` as rows, every ``neib_step`` (default:
    ``neib_shape``, disjoint patches); ``mode`` is 'valid', 'ignore_borders', 'half',
    'full' or 'wrap_centered' (see the module docstring)."""
    return Images2Neibs(mode)(ten4, neib_shape, neib_step)


def neibs2images(neibs: Any, neib_shape: Any, original_shape: Any, mode: str = "valid") -> Variable:
    """The inverse of ``images2neibs`` for disjoint patches (the default step): the 4-d
    tensor of ``original_shape``, from its rows of patches. ``mode``: 'valid', or
    'ignore_borders' (the dropped border comes back as zeros)."""
    if mode not in ("valid", "ignore_borders"):
        raise NotImplementedError(f"neibs2images do not support mode={mode}")
    neibs = as_tensor_variable(neibs)
    shape = as_tensor_variable(original_shape)
    neib_shape = _int_pair(neib_shape, "neib_shape")
    c, d = (_math.cast(vector_entry(neib_shape, i), "int64") for i in range(2))
    n, s, height, width = (_math.cast(vector_entry(shape, i), "int64") for i in range(4))
    grid_r, grid_c = _math.int_div(height, c), _math.int_div(width, d)
    blocks = reshape(neibs, (n, s, grid_r, grid_c, c, d), ndim=6).dimshuffle(0, 1, 2, 4, 3, 5)
    image = reshape(blocks, (n, s, _math.mul(grid_r, c), _math.mul(grid_c, d)), ndim=4)
    if mode == "ignore_borders":
        image = concatenate([image, zeros((n, s, _math.sub(height, _math.mul(grid_r, c)), image.shape[3]),
                                          neibs.dtype)], axis=2)
        image = concatenate([image, zeros((n, s, height, _math.sub(width, _math.mul(grid_c, d))),
                                          neibs.dtype)], axis=3)
    return image
