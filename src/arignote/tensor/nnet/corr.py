"""Theano's correlation ops under their names: ``tensor.nnet.corr.CorrMM`` (2d) and
``tensor.nnet.corr3d.Corr3dMM`` (3d), with their ``_gradWeights``/``_gradInputs``.

In Theano these were the CPU implementations the abstract ops were rewritten
into; here they are the abstract ops themselves with ``filter_flip=False`` (a
cross-correlation) and Theano's constructor order, so they share the im2col path,
the gradients and the GPU lowering. As in Theano, the gradient ops' ``shape``
(the filters' or the input's spatial lengths) may be omitted where the arrays
determine it: stride 1, and for the filters not ``'half'``. Theano's ``openmp``
argument is accepted; the GEMM's threads are numpy's BLAS pool.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from arignote.graph.basic import Apply
from arignote.tensor.nnet.abstract_conv import (AbstractConv2d, AbstractConv2d_gradInputs,
                                                AbstractConv2d_gradWeights, AbstractConv3d,
                                                AbstractConv3d_gradInputs,
                                                AbstractConv3d_gradWeights, BaseAbstractConv,
                                                get_conv_gradinputs_shape_1axis,
                                                get_conv_gradweights_shape_1axis)
from arignote.tensor.shape import shape_i
from arignote.tensor.variable import as_tensor_variable

__all__ = ["CorrMM", "CorrMM_gradWeights", "CorrMM_gradInputs", "Corr3dMM",
           "Corr3dMM_gradWeights", "Corr3dMM_gradInputs"]


def _init(op: BaseAbstractConv, base: type, border_mode: Any, subsample: Sequence[int],
          filter_dilation: Sequence[int], num_groups: int, unshared: bool) -> None:
    base.__init__(op, border_mode=border_mode, subsample=subsample, filter_flip=False,
                  filter_dilation=filter_dilation, num_groups=num_groups, unshared=unshared)


def _spatial(x: Any, convdim: int) -> list:
    return [shape_i(x, d) for d in range(x.ndim - convdim, x.ndim)]


class _OmittableShape:
    """``make_node(a, topgrad, shape=None)``: without ``shape``, it comes from the arrays."""

    def make_node(self, a: Any, topgrad: Any, shape: Any = None) -> Apply:
        if shape is None:
            a, topgrad = as_tensor_variable(a), as_tensor_variable(topgrad)
            shape = self.implied_shape(a, topgrad)
        return super().make_node(a, topgrad, shape)

    def _stride_one(self, what: str) -> None:
        if any(s != 1 for s in self.subsample):
            raise ValueError(f"{type(self).__name__}: shape must be given if subsample != "
                             f"{(1,) * self.convdim} (the {what} is not determined by the arrays)")


class _GradWeights(_OmittableShape):
    def implied_shape(self, img: Any, topgrad: Any) -> list:
        self._stride_one("filter shape")
        if self.border_mode == "half":
            raise ValueError(f"{type(self).__name__}: shape must be given if border_mode == 'half'")
        modes = self.border_mode if isinstance(self.border_mode, tuple) else (self.border_mode,) * self.convdim
        return [get_conv_gradweights_shape_1axis(i, t, m, 1, d) for i, t, m, d in
                zip(_spatial(img, self.convdim), _spatial(topgrad, self.convdim), modes,
                    self.filter_dilation)]


class _GradInputs(_OmittableShape):
    def implied_shape(self, kern: Any, topgrad: Any) -> list:
        self._stride_one("input shape")
        modes = self.border_mode if isinstance(self.border_mode, tuple) else (self.border_mode,) * self.convdim
        return [get_conv_gradinputs_shape_1axis(k, t, m, 1, d) for k, t, m, d in
                zip(_spatial(kern, self.convdim), _spatial(topgrad, self.convdim), modes,
                    self.filter_dilation)]


class CorrMM(AbstractConv2d):
    """2d cross-correlation of ``img`` (B, C, rows, cols) by ``kern`` (F, C / num_groups, kr, kc),
    or by unshared ``kern`` (F, out rows, out cols, C / num_groups, kr, kc)."""

    def __init__(self, border_mode: Any = "valid", subsample: Sequence[int] = (1, 1),
                 filter_dilation: Sequence[int] = (1, 1), num_groups: int = 1,
                 unshared: bool = False, openmp: bool | None = None):
        _init(self, AbstractConv2d, border_mode, subsample, filter_dilation, num_groups, unshared)


class CorrMM_gradWeights(_GradWeights, AbstractConv2d_gradWeights):
    """The filters' gradient of ``CorrMM``: ``(img, topgrad, shape=None)``."""

    def __init__(self, border_mode: Any = "valid", subsample: Sequence[int] = (1, 1),
                 filter_dilation: Sequence[int] = (1, 1), num_groups: int = 1,
                 unshared: bool = False, openmp: bool | None = None):
        _init(self, AbstractConv2d_gradWeights, border_mode, subsample, filter_dilation,
              num_groups, unshared)


class CorrMM_gradInputs(_GradInputs, AbstractConv2d_gradInputs):
    """The input's gradient of ``CorrMM``: ``(kern, topgrad, shape=None)``."""

    def __init__(self, border_mode: Any = "valid", subsample: Sequence[int] = (1, 1),
                 filter_dilation: Sequence[int] = (1, 1), num_groups: int = 1,
                 unshared: bool = False, openmp: bool | None = None):
        _init(self, AbstractConv2d_gradInputs, border_mode, subsample, filter_dilation,
              num_groups, unshared)


class Corr3dMM(AbstractConv3d):
    """3d cross-correlation of ``img`` (B, C, *S) by ``kern`` (F, C / num_groups, *K)."""

    def __init__(self, border_mode: Any = "valid", subsample: Sequence[int] = (1, 1, 1),
                 filter_dilation: Sequence[int] = (1, 1, 1), openmp: bool | None = None,
                 num_groups: int = 1):
        _init(self, AbstractConv3d, border_mode, subsample, filter_dilation, num_groups, False)


class Corr3dMM_gradWeights(_GradWeights, AbstractConv3d_gradWeights):
    """The filters' gradient of ``Corr3dMM``: ``(img, topgrad, shape=None)``."""

    def __init__(self, border_mode: Any = "valid", subsample: Sequence[int] = (1, 1, 1),
                 filter_dilation: Sequence[int] = (1, 1, 1), openmp: bool | None = None,
                 num_groups: int = 1):
        _init(self, AbstractConv3d_gradWeights, border_mode, subsample, filter_dilation,
              num_groups, False)


class Corr3dMM_gradInputs(_GradInputs, AbstractConv3d_gradInputs):
    """The input's gradient of ``Corr3dMM``: ``(kern, topgrad, shape=None)``."""

    def __init__(self, border_mode: Any = "valid", subsample: Sequence[int] = (1, 1, 1),
                 filter_dilation: Sequence[int] = (1, 1, 1), openmp: bool | None = None,
                 num_groups: int = 1):
        _init(self, AbstractConv3d_gradInputs, border_mode, subsample, filter_dilation,
              num_groups, False)


# The direction of each class, for the GPU lowering (the abstract ops' table, ``FAMILY``).
CORR_KINDS = {CorrMM: "forward", CorrMM_gradWeights: "weights", CorrMM_gradInputs: "inputs",
              Corr3dMM: "forward", Corr3dMM_gradWeights: "weights", Corr3dMM_gradInputs: "inputs"}
