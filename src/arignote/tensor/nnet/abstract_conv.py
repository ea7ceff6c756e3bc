"""Theano's abstract convolution: the ops of ``conv2d``/``conv3d`` and of their gradients.

``AbstractConv2d`` (forward), ``AbstractConv2d_gradWeights`` and
``AbstractConv2d_gradInputs`` (and their 3d twins) carry Theano's parameters
as ``__props__``; each op's ``perform`` is the fast CPU path, im2col plus one
GEMM per group (``im2col.py``), and the GPU placement pass lowers them to
device kernels. Each op's gradient is the other two (``tensor/grad/conv.py``),
so second derivatives and ``Rop`` through a convolution come out of ``grad``.

Shapes follow Theano: ``border_mode`` is ``'valid'``, ``'full'``, ``'half'``,
an int, or per axis an int or a ``(before, after)`` pair (2d only); the
output length along an axis is
``(in + before + after - ((k - 1) * dilation + 1)) // subsample + 1``.
"""
from __future__ import annotations

import importlib.util
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.config import config
from arignote.graph.basic import Apply, Op, Variable
from arignote.scalar.dtypes import upcast, upgrade_to_float
from arignote.tensor import math as _math
from arignote.tensor.nnet import im2col
from arignote.tensor.nnet.bilinear import (bilinear_kernel_1D, bilinear_kernel_2D,  # noqa: F401
                                           bilinear_upsampling, frac_bilinear_upsampling)
from arignote.tensor.shape import ShapeMismatchError, as_shape_vector, static_value, vector_entry
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

# Theano's flag that scipy.signal (its reference for the tests) was importable; the ops here never
# use it, so it is looked up without importing scipy (arignote's import stays light).
imported_scipy_signal = importlib.util.find_spec("scipy") is not None

__all__ = ["get_conv_output_shape", "get_conv_shape_1axis", "get_conv_gradweights_shape",
           "get_conv_gradweights_shape_1axis", "get_conv_gradinputs_shape",
           "get_conv_gradinputs_shape_1axis", "check_conv_gradinputs_shape", "assert_shape",
           "assert_conv_shape", "ShapeAssert",
           "border_mode_to_pad", "BaseAbstractConv", "AbstractConv", "AbstractConv2d",
           "AbstractConv3d", "AbstractConv_gradWeights", "AbstractConv2d_gradWeights",
           "AbstractConv3d_gradWeights", "AbstractConv_gradInputs", "AbstractConv2d_gradInputs",
           "AbstractConv3d_gradInputs", "conv2d", "conv3d", "conv2d_grad_wrt_inputs",
           "conv2d_grad_wrt_weights", "conv3d_grad_wrt_inputs", "conv3d_grad_wrt_weights",
           "separable_conv2d", "separable_conv3d", "causal_conv1d", "bilinear_kernel_1D",
           "bilinear_kernel_2D", "bilinear_upsampling", "frac_bilinear_upsampling"]


# ------------------------------------------------------------------ shape helpers
def _pads_1axis(border_mode: Any, dil_kernel: Any) -> tuple[Any, Any]:
    if border_mode == "half":
        return dil_kernel // 2, dil_kernel // 2
    if border_mode == "full":
        return dil_kernel - 1, dil_kernel - 1
    if border_mode == "valid":
        return 0, 0
    lo, hi = border_mode if isinstance(border_mode, tuple) else (border_mode, border_mode)
    if (isinstance(lo, int) and lo < 0) or (isinstance(hi, int) and hi < 0):
        raise ValueError(f"border_mode must be >= 0, got {border_mode!r}")
    return lo, hi


def _per_axis(border_mode: Any, i: int) -> Any:
    return border_mode[i] if isinstance(border_mode, tuple) else border_mode


def get_conv_shape_1axis(image_shape: Any, kernel_shape: Any, border_mode: Any, subsample: Any,
                         dilation: Any = 1) -> Any:
    """Output length along one axis (ints or int scalars; None where unknown)."""
    if None in (image_shape, kernel_shape, border_mode, subsample, dilation):
        return None
    dil_kernel = (kernel_shape - 1) * dilation + 1
    lo, hi = _pads_1axis(border_mode, dil_kernel)
    out = image_shape - dil_kernel
    if not (isinstance(lo, int) and lo == 0):
        out = out + lo
    if not (isinstance(hi, int) and hi == 0):
        out = out + hi
    if not (isinstance(subsample, int) and subsample == 1):
        out = out // subsample
    return out + 1


def get_conv_output_shape(image_shape: Sequence, kernel_shape: Sequence, border_mode: Any,
                          subsample: Sequence, filter_dilation: Sequence | None = None) -> tuple:
    """(batch, filters, *spatial) of a convolution's output; None where unknown."""
    nd = len(image_shape) - 2
    dilation = filter_dilation if filter_dilation is not None else (1,) * len(subsample)
    spatial = tuple(get_conv_shape_1axis(image_shape[2 + i], kernel_shape[-nd:][i],
                                         _per_axis(border_mode, i), subsample[i], dilation[i])
                    for i in range(len(subsample)))
    return (image_shape[0], kernel_shape[0]) + spatial


def get_conv_gradweights_shape_1axis(image_shape: Any, top_shape: Any, border_mode: Any,
                                     subsample: Any, dilation: Any) -> Any:
    """Kernel length along one axis, when it is determined (subsample 1, not 'half'), else None."""
    if None in (image_shape, top_shape, border_mode, subsample, dilation):
        return None
    if subsample != 1 or border_mode == "half":
        return None
    if border_mode == "full":
        dil_kernel = top_shape - image_shape + 1
    elif border_mode == "valid":
        dil_kernel = image_shape - top_shape + 1
    else:
        lo, hi = _pads_1axis(border_mode, None)
        dil_kernel = image_shape + lo + hi - top_shape + 1
    return dil_kernel if dilation == 1 else (dil_kernel - 1) // dilation + 1


def get_conv_gradweights_shape(image_shape: Sequence, top_shape: Sequence, border_mode: Any,
                               subsample: Sequence, filter_dilation: Sequence | None = None,
                               num_groups: int = 1, unshared: bool = False) -> tuple:
    """(filters, channels per group, *kernel) of a gradient of the filters; None where unknown."""
    dilation = filter_dilation if filter_dilation is not None else (1,) * len(subsample)
    n_filters = top_shape[1]
    spatial = tuple(get_conv_gradweights_shape_1axis(image_shape[2 + i], top_shape[2 + i],
                                                     _per_axis(border_mode, i), subsample[i],
                                                     dilation[i]) for i in range(len(subsample)))
    channels = image_shape[1] // num_groups if num_groups > 1 and image_shape[1] is not None \
        else image_shape[1]
    if unshared:
        return (n_filters,) + tuple(top_shape[2:]) + (channels,) + spatial
    return (n_filters, channels) + spatial


def get_conv_gradinputs_shape_1axis(kernel_shape: Any, top_shape: Any, border_mode: Any,
                                    subsample: Any, dilation: Any) -> Any:
    """Input length along one axis, when it is determined (subsample 1), else None."""
    if None in (kernel_shape, top_shape, border_mode, subsample, dilation) or subsample != 1:
        return None
    dil_kernel = (kernel_shape - 1) * dilation + 1
    lo, hi = _pads_1axis(border_mode, dil_kernel)
    length = top_shape + dil_kernel - 1
    if not (isinstance(lo, int) and lo == 0):
        length = length - lo
    if not (isinstance(hi, int) and hi == 0):
        length = length - hi
    return length


def get_conv_gradinputs_shape(kernel_shape: Sequence, top_shape: Sequence, border_mode: Any,
                              subsample: Sequence, filter_dilation: Sequence | None = None,
                              num_groups: int = 1) -> tuple:
    """(batch, channels, *spatial) of a gradient of the input; None where unknown.
    ``kernel_shape`` may be an unshared one, (F, *O, C / num_groups, *K)."""
    nd = len(top_shape) - 2
    dilation = filter_dilation if filter_dilation is not None else (1,) * len(subsample)
    channels = kernel_shape[-nd - 1]
    if num_groups > 1 and channels is not None:
        channels = channels * num_groups
    spatial = tuple(get_conv_gradinputs_shape_1axis(kernel_shape[-nd:][i], top_shape[2 + i],
                                                    _per_axis(border_mode, i), subsample[i],
                                                    dilation[i]) for i in range(len(subsample)))
    return (top_shape[0], channels) + spatial


def _constant_int(value: Any) -> int | None:
    found = static_value(value) if isinstance(value, Variable) else value
    return None if found is None else int(found)


def check_conv_gradinputs_shape(image_shape: Sequence, kernel_shape: Sequence,
                                output_shape: Sequence, border_mode: Any, subsample: Sequence,
                                filter_dilation: Sequence | None = None) -> bool:
    """False when a convolution of ``image_shape`` by ``kernel_shape`` cannot give
    ``output_shape``; True otherwise (including when symbolic entries leave it open)."""
    image_shape, kernel_shape, output_shape = tuple(image_shape), tuple(kernel_shape), tuple(output_shape)
    if not len(image_shape) == len(kernel_shape) == len(output_shape) == len(subsample) + 2:
        return False
    if filter_dilation is not None and len(filter_dilation) != len(subsample):
        return False
    computed = get_conv_output_shape(image_shape, kernel_shape, border_mode, subsample, filter_dilation)
    for given, found in zip(output_shape, computed):
        given, found = _constant_int(given), _constant_int(found)
        if given is not None and found is not None and given != found:
            return False
    return True


class ShapeAssert(Op):
    """``value`` itself, after checking at run time that every condition is true; else
    a ``ShapeMismatchError`` (an AssertionError, as Theano's Assert raised, and a
    ValueError) with ``msg``. The checks of ``assert_shape``/``assert_conv_shape``."""

    __props__ = ("msg",)
    view_map = {0: [0]}
    passes_value = True

    def __init__(self, msg: str):
        self.msg = msg

    def make_node(self, value: Any, *conditions: Any) -> Apply:
        value = as_tensor_variable(value)
        conditions = [as_tensor_variable(c) for c in conditions]
        return Apply(self, [value, *conditions], [value.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        if not all(np.all(c) for c in inputs[1:]):
            raise ShapeMismatchError(f"{self.msg} (checking {node.inputs[0].describe()})")
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def assert_conv_shape(shape: Sequence) -> tuple:
    """``shape`` (of a convolution's input, output or filters) with each entry checked:
    the first two must be >= 0 and the spatial ones > 0. Constant entries are
    checked now (ValueError), symbolic ones when the graph runs (AssertionError)."""
    checked = []
    for i, n in enumerate(shape):
        bound, relation = (0, ">=") if i < 2 else (1, ">")
        value = _constant_int(n)
        if value is not None:
            if value < bound:
                raise ValueError(f"The convolution would produce an invalid shape (dim[{i}]: "
                                 f"{value} {'<' if i < 2 else '<='} 0).")
            checked.append(n)
        else:
            n = as_tensor_variable(n)
            checked.append(ShapeAssert(f"The convolution would produce an invalid shape (dim[{i}] "
                                       f"must be {relation} 0)")(n, _math.ge(n, bound)))
    return tuple(checked)


def assert_shape(x: Any, expected_shape: Sequence | None, msg: str = "Unexpected shape.") -> Variable:
    """``x``, checked at run time to have ``expected_shape`` (None entries: any length),
    when the flag ``conv.assert_shape`` is on (Theano's default: off, ``x`` as it is).
    The convolution ops check the shapes they are given either way."""
    x = as_tensor_variable(x)
    if expected_shape is None or not config.conv.assert_shape:
        return x
    conditions = [_math.eq(x.shape[i], e) for i, e in enumerate(expected_shape) if e is not None]
    return ShapeAssert(msg)(x, *conditions) if conditions else x


def border_mode_to_pad(mode: Any, convdim: int, kshp: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """``(before, after)`` zero padding per spatial axis for ``mode`` and (dilated) kernel ``kshp``."""
    if isinstance(mode, tuple):
        if len(mode) != convdim:
            raise ValueError(f"invalid border_mode {mode}, which must be a tuple of length {convdim}")
        return tuple((m, m) if isinstance(m, int) else (int(m[0]), int(m[1])) for m in mode)
    if mode == "full":
        return tuple((k - 1, k - 1) for k in kshp)
    if mode == "half":
        return tuple((k // 2, k // 2) for k in kshp)
    if mode == "valid":
        return ((0, 0),) * convdim
    raise ValueError(f"invalid border_mode {mode!r}, which must be 'valid', 'full', 'half', an "
                     f"integer or a tuple of length {convdim}")


# ------------------------------------------------------------------------- ops
def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _normal_border_mode(border_mode: Any, convdim: int) -> Any:
    """Theano's normal form: 'valid'/'full'/'half', or a tuple of ints and (lo, hi) pairs."""
    if _is_int(border_mode):
        if border_mode < 0:
            raise ValueError(f"invalid border_mode {border_mode}, which must be a non-negative integer")
        border_mode = (int(border_mode),) * convdim
    elif isinstance(border_mode, (tuple, list)):
        if len(border_mode) != convdim:
            raise ValueError(f"invalid border_mode {border_mode}, which must be a tuple of length {convdim}")
        normal = []
        for mode in border_mode:
            if _is_int(mode) and mode >= 0:
                normal.append(int(mode))
            elif (isinstance(mode, (tuple, list)) and len(mode) == 2
                  and all(_is_int(m) and m >= 0 for m in mode)):
                if convdim != 2:
                    raise NotImplementedError(f"asymmetric padding is not implemented for {convdim}D")
                normal.append(int(mode[0]) if mode[0] == mode[1] else (int(mode[0]), int(mode[1])))
            else:
                raise ValueError(f"invalid border_mode {border_mode}: the tuple can only contain "
                                 "non-negative integers or pairs of them")
        border_mode = tuple(normal)
    elif border_mode not in ("valid", "full", "half"):
        raise ValueError(f"invalid border_mode {border_mode!r}, which must be 'valid', 'full', "
                         f"'half', an integer or a tuple of length {convdim}")
    if isinstance(border_mode, tuple) and all(m == 0 for m in border_mode):
        return "valid"
    return border_mode


def _shape_prop(shape: Sequence | None, length: int, what: str) -> tuple:
    if isinstance(shape, Variable):
        raise ValueError(f"{what} should be None or a tuple of constant int values, got the "
                         f"{shape.ndim}D variable {shape.describe()}: give a tuple or list of "
                         "ints (or of constant scalars), None for a length not known")
    if not shape:
        return (None,) * length
    shape = tuple(shape)
    if len(shape) != length:
        raise ValueError(f"{what} must have {length} entries, got {shape!r}")
    result = []
    for entry in shape:
        value = _constant_int(entry)
        if entry is not None and value is None:
            raise ValueError(f"{what} should be None or a tuple of constant int values, got {shape!r}")
        result.append(value)
    return tuple(result)


def _int_tuple(values: Sequence, length: int, what: str) -> tuple[int, ...]:
    values = tuple(values)
    if len(values) != length or not all(_is_int(v) and v >= 1 for v in values):
        raise ValueError(f"{what} must have {length} elements, each a positive int; got {values!r}")
    return tuple(int(v) for v in values)


class BaseAbstractConv(Op):
    """Parameters shared by the forward convolution and its two gradients (Theano's names).

    ``imshp`` and ``kshp`` are the input and filter shapes when known (None
    entries where not); they are checked against the values at run time.
    """

    __props__ = ("convdim", "border_mode", "subsample", "filter_flip", "imshp", "kshp",
                 "filter_dilation", "num_groups", "unshared")

    def __init__(self, convdim: int, imshp: Sequence | None = None, kshp: Sequence | None = None,
                 border_mode: Any = "valid", subsample: Sequence | None = None,
                 filter_flip: bool = True, filter_dilation: Sequence | None = None,
                 num_groups: int = 1, unshared: bool = False):
        if convdim not in (2, 3):
            raise ValueError(f"convolution dimension {convdim} is not supported (2 or 3)")
        if unshared and convdim != 2:
            raise NotImplementedError(f"unshared convolution is implemented for 2D only, not "
                                      f"{convdim}D")
        self.unshared = bool(unshared)
        self.convdim = convdim
        self.border_mode = _normal_border_mode(border_mode, convdim)
        self.subsample = _int_tuple(subsample or (1,) * convdim, convdim, "subsample")
        self.filter_dilation = _int_tuple(filter_dilation or (1,) * convdim, convdim, "filter_dilation")
        self.filter_flip = bool(filter_flip)
        self.imshp = _shape_prop(imshp, 2 + convdim, "imshp")
        self.kshp = _shape_prop(kshp, self.kernel_ndim, "kshp")
        if not _is_int(num_groups) or num_groups < 1:
            raise ValueError(f"num_groups must be an int greater than zero, got {num_groups!r}")
        self.num_groups = int(num_groups)

    @property
    def kernel_ndim(self) -> int:
        """Dimensions of the filters: (F, C_g, *K), or (F, *O, C_g, *K) when unshared."""
        return 2 + 2 * self.convdim if self.unshared else 2 + self.convdim

    def params(self) -> dict:
        """Constructor arguments of the convdim-specific classes, for building siblings."""
        return dict(imshp=self.imshp, kshp=self.kshp, border_mode=self.border_mode,
                    subsample=self.subsample, filter_flip=self.filter_flip,
                    filter_dilation=self.filter_dilation, num_groups=self.num_groups,
                    unshared=self.unshared)

    def __str__(self) -> str:
        return (f"{type(self).__name__}{{{self.border_mode}, {self.subsample}, "
                f"flip={self.filter_flip}, dilation={self.filter_dilation}, groups={self.num_groups}"
                f"{', unshared' if self.unshared else ''}}}")

    def pads(self, kernel_spatial: Sequence[int]) -> tuple[tuple[int, int], ...]:
        dilated = [(k - 1) * d + 1 for k, d in zip(kernel_spatial, self.filter_dilation)]
        return border_mode_to_pad(self.border_mode, self.convdim, dilated)

    def out_spatial(self, in_spatial: Sequence[int], kernel_spatial: Sequence[int]) -> tuple[int, ...]:
        pads = self.pads(kernel_spatial)
        return tuple((n + lo + hi - (k - 1) * d - 1) // s + 1 for n, (lo, hi), k, d, s in
                     zip(in_spatial, pads, kernel_spatial, self.filter_dilation, self.subsample))

    # ----------------------------------------------------------- checks
    def _tensor(self, value: Any, what: str, ndim: int) -> Variable:
        var = as_tensor_variable(value)
        if var.ndim != ndim:
            raise TypeError(f"{type(self).__name__}: {what} {var.describe()} must be a {ndim}D "
                            f"tensor, got {var.ndim} dimensions ({var.type.describe()})")
        return var

    def _common_float(self, *variables: Variable) -> list[Variable]:
        dtype = upgrade_to_float(upcast(*[v.dtype for v in variables]))
        return [v if v.dtype == dtype else _math.cast(v, dtype) for v in variables]

    def _check_given(self, var: Variable, value: Any, given: tuple, what: str) -> None:
        if any(g is not None and g != n for g, n in zip(given, value.shape)):
            raise ShapeMismatchError(f"{type(self).__name__} shape mismatch: {var.describe()} has shape "
                             f"{value.shape}, but {what}={given} was given: fix the value, or the "
                             f"{what} argument (None for a length that varies)")

    def _check_groups(self, img_var: Variable, channels: int, kern_var: Variable,
                      kern_shape: tuple) -> None:
        groups = self.num_groups
        per_group = kern_shape[-self.convdim - 1]
        if channels % groups or kern_shape[0] % groups or per_group * groups != channels:
            layout = "(F, *output, channels" if self.unshared else "(F, channels"
            raise ValueError(
                f"{type(self).__name__}: {img_var.describe()} has {channels} channels and the "
                f"filters {kern_var.describe()} have shape {kern_shape}: with num_groups={groups} "
                f"the filters must have shape {layout} / {groups}, ...) with F and the "
                f"channels divisible by {groups}")

    def _check_unshared(self, kern_var: Variable, kern_shape: tuple, spatial: tuple) -> None:
        """Unshared filters hold one kernel per output position: their axes 1.. are ``spatial``."""
        if self.unshared and tuple(kern_shape[1:1 + self.convdim]) != tuple(spatial):
            raise ValueError(f"{type(self).__name__}: the unshared filters {kern_var.describe()} "
                             f"have shape {kern_shape}, so {kern_shape[1:1 + self.convdim]} "
                             f"output positions, but the output has spatial shape {spatial}: "
                             f"give filters of shape (F, {', '.join(map(str, spatial))}, C / "
                             f"num_groups, *kernel)")


class AbstractConv(BaseAbstractConv):
    """The forward convolution of ``img`` (B, C, *S) by ``kern`` (F, C / num_groups, *K)."""

    def make_node(self, img: Any, kern: Any) -> Apply:
        img = self._tensor(img, "the input", 2 + self.convdim)
        kern = self._tensor(kern, "the filters", self.kernel_ndim)
        img, kern = self._common_float(img, kern)
        broadcastable = (img.broadcastable[0], kern.broadcastable[0]) + (False,) * self.convdim
        return Apply(self, [img, kern], [TensorType(img.dtype, broadcastable)()])

    def check(self, variables: Sequence[Variable], img: Any, kern: Any) -> tuple[int, ...]:
        """The output's spatial shape for arrays ``img`` and ``kern`` (of the user's
        ``variables``), or the error naming them."""
        img_var, kern_var = variables
        self._check_given(img_var, img, self.imshp, "input_shape")
        self._check_given(kern_var, kern, self.kshp, "filter_shape")
        self._check_groups(img_var, img.shape[1], kern_var, kern.shape)
        spatial = self.out_spatial(img.shape[2:], kern.shape[-self.convdim:])
        if any(n <= 0 for n in spatial):
            raise ValueError(f"{type(self).__name__}: the input {img_var.describe()} of shape "
                             f"{img.shape} is smaller than the filters {kern_var.describe()} of "
                             f"shape {kern.shape} (dilation {self.filter_dilation}, border_mode "
                             f"{self.border_mode!r}): the output would have spatial shape {spatial}")
        self._check_unshared(kern_var, kern.shape, spatial)
        return spatial

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        img, kern = inputs
        spatial = self.check(node.inputs, img, kern)
        output_storage[0][0] = im2col.forward(img, kern, self.pads(kern.shape[-self.convdim:]),
                                              self.subsample, self.filter_dilation,
                                              self.num_groups, self.filter_flip, spatial,
                                              out=output_storage[0][0], unshared=self.unshared)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        imshp = [s if g is None else g for s, g in zip(input_shapes[0], self.imshp)]
        kshp = [s if g is None else g for s, g in zip(input_shapes[1], self.kshp)]
        return [get_conv_output_shape(imshp, kshp, self.border_mode, self.subsample,
                                      self.filter_dilation)]


class AbstractConv_gradWeights(BaseAbstractConv):
    """The gradient of the filters: of ``img`` (B, C, *S) and ``topgrad`` (B, F, *O), for
    filters of spatial shape ``shape``."""

    def make_node(self, img: Any, topgrad: Any, shape: Any, add_assert_shape: bool = True) -> Apply:
        img = self._tensor(img, "the input", 2 + self.convdim)
        topgrad = self._tensor(topgrad, "the output gradient", 2 + self.convdim)
        img, topgrad = self._common_float(img, topgrad)
        shape = as_shape_vector(shape, f"{type(self).__name__} filter shape")
        positions = (False,) * self.convdim if self.unshared else ()
        broadcastable = ((topgrad.broadcastable[1],) + positions + (img.broadcastable[1],)
                         + (False,) * self.convdim)
        return Apply(self, [img, topgrad, shape], [TensorType(img.dtype, broadcastable)()])

    def check(self, variables: Sequence[Variable], img: Any, top: Any, shape: np.ndarray) -> tuple[int, ...]:
        """The filters' spatial shape, checked against ``img`` and ``top``."""
        img_var, top_var = variables[:2]
        kernel = tuple(int(s) for s in shape)
        self._check_given(img_var, img, self.imshp, "input_shape")
        if img.shape[1] % self.num_groups or top.shape[1] % self.num_groups:
            raise ValueError(f"{type(self).__name__}: {img_var.describe()} has {img.shape[1]} "
                             f"channels and {top_var.describe()} {top.shape[1]}: both must be "
                             f"divisible by num_groups={self.num_groups}")
        expected = self.out_spatial(img.shape[2:], kernel)
        if expected != top.shape[2:] or img.shape[0] != top.shape[0]:
            raise ValueError(f"{type(self).__name__}: the output gradient {top_var.describe()} has "
                             f"shape {top.shape}, but a convolution of {img_var.describe()} "
                             f"(shape {img.shape}) by filters of spatial shape {kernel} gives "
                             f"{(img.shape[0], top.shape[1]) + expected}")
        return kernel

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        img, top, shape = inputs
        kernel = self.check(node.inputs, img, top, shape)
        output_storage[0][0] = im2col.grad_weights(img, top, kernel, self.pads(kernel), self.subsample,
                                                   self.filter_dilation, self.num_groups,
                                                   self.filter_flip, out=output_storage[0][0],
                                                   unshared=self.unshared)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        imshp, topshp = input_shapes[0], input_shapes[1]
        channels = imshp[1] // self.num_groups if self.num_groups > 1 else imshp[1]
        positions = list(topshp[2:]) if self.unshared else []
        fallback = ([topshp[1]] + positions + [channels]
                    + [vector_entry(node.inputs[2], i) for i in range(self.convdim)])
        return [tuple(f if g is None else g for f, g in zip(fallback, self.kshp))]


class AbstractConv_gradInputs(BaseAbstractConv):
    """The gradient of the input: of ``kern`` (F, C / num_groups, *K) and ``topgrad``
    (B, F, *O), for an input of spatial shape ``shape``."""

    def make_node(self, kern: Any, topgrad: Any, shape: Any, add_assert_shape: bool = True) -> Apply:
        kern = self._tensor(kern, "the filters", self.kernel_ndim)
        topgrad = self._tensor(topgrad, "the output gradient", 2 + self.convdim)
        kern, topgrad = self._common_float(kern, topgrad)
        shape = as_shape_vector(shape, f"{type(self).__name__} input shape")
        channels = kern.broadcastable[-self.convdim - 1] if self.num_groups == 1 else False
        broadcastable = (topgrad.broadcastable[0], channels) + (False,) * self.convdim
        return Apply(self, [kern, topgrad, shape], [TensorType(kern.dtype, broadcastable)()])

    def check(self, variables: Sequence[Variable], kern: Any, top: Any, shape: np.ndarray) -> tuple[int, ...]:
        """The input's spatial shape, checked against ``kern`` and ``top``."""
        kern_var, top_var = variables[:2]
        spatial = tuple(int(s) for s in shape)
        self._check_given(kern_var, kern, self.kshp, "filter_shape")
        channels = kern.shape[-self.convdim - 1] * self.num_groups
        if self.imshp[1] is not None and self.imshp[1] != channels:
            raise ShapeMismatchError(f"{type(self).__name__}: the filters {kern_var.describe()} of shape "
                             f"{kern.shape} (num_groups={self.num_groups}) give {channels} "
                             f"channels, but input_shape={self.imshp}")
        if kern.shape[0] % self.num_groups:
            raise ValueError(f"{type(self).__name__}: the filters {kern_var.describe()} of shape "
                             f"{kern.shape}: their number must be divisible by num_groups="
                             f"{self.num_groups}")
        expected = (top.shape[0], kern.shape[0]) + self.out_spatial(spatial, kern.shape[-self.convdim:])
        if expected != top.shape:
            raise ValueError(f"invalid input_shape for gradInputs: the given input_shape "
                             f"{spatial} would produce an output of shape {expected}, but the "
                             f"given topgrad {top_var.describe()} has shape {top.shape}")
        self._check_unshared(kern_var, kern.shape, top.shape[2:])
        return spatial

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        kern, top, shape = inputs
        spatial = self.check(node.inputs, kern, top, shape)
        output_storage[0][0] = im2col.grad_inputs(kern, top, spatial,
                                                  self.pads(kern.shape[-self.convdim:]),
                                                  self.subsample, self.filter_dilation,
                                                  self.num_groups, self.filter_flip,
                                                  out=output_storage[0][0], unshared=self.unshared)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        kshp, topshp = input_shapes[0], input_shapes[1]
        per_group = kshp[-self.convdim - 1]
        channels = per_group * self.num_groups if self.num_groups > 1 else per_group
        fallback = [topshp[0], channels] + [vector_entry(node.inputs[2], i) for i in range(self.convdim)]
        return [tuple(f if g is None else g for f, g in zip(fallback, self.imshp))]


def _fixed(base: type, convdim: int, doc: str) -> type:
    """The convdim-specific class of ``base`` with Theano's constructor defaults."""
    def __init__(self, imshp=None, kshp=None, border_mode="valid", subsample=(1,) * convdim,
                 filter_flip=True, filter_dilation=(1,) * convdim, num_groups=1, unshared=False):
        base.__init__(self, convdim, imshp, kshp, border_mode, subsample, filter_flip,
                      filter_dilation, num_groups, unshared)
    name = f"{base.__name__.replace('AbstractConv', f'AbstractConv{convdim}d')}"
    return type(name, (base,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


AbstractConv2d = _fixed(AbstractConv, 2, "Forward 2d convolution (see BaseAbstractConv).")
AbstractConv3d = _fixed(AbstractConv, 3, "Forward 3d convolution (see BaseAbstractConv).")
AbstractConv2d_gradWeights = _fixed(AbstractConv_gradWeights, 2, "Gradient of 2d filters.")
AbstractConv3d_gradWeights = _fixed(AbstractConv_gradWeights, 3, "Gradient of 3d filters.")
AbstractConv2d_gradInputs = _fixed(AbstractConv_gradInputs, 2, "Gradient of a 2d convolution's input.")
AbstractConv3d_gradInputs = _fixed(AbstractConv_gradInputs, 3, "Gradient of a 3d convolution's input.")

FAMILY = {(2, "forward"): AbstractConv2d, (2, "weights"): AbstractConv2d_gradWeights,
          (2, "inputs"): AbstractConv2d_gradInputs, (3, "forward"): AbstractConv3d,
          (3, "weights"): AbstractConv3d_gradWeights, (3, "inputs"): AbstractConv3d_gradInputs}


def sibling(op: BaseAbstractConv, kind: str) -> BaseAbstractConv:
    """The ``'forward'``, ``'weights'`` or ``'inputs'`` op with ``op``'s parameters."""
    return FAMILY[op.convdim, kind](**op.params())


# ------------------------------------------------------------ public functions
def conv2d(input: Any, filters: Any, input_shape: Sequence | None = None,
           filter_shape: Sequence | None = None, border_mode: Any = "valid",
           subsample: Sequence[int] = (1, 1), filter_flip: bool = True,
           filter_dilation: Sequence[int] = (1, 1), num_groups: int = 1,
           unshared: bool = False) -> Variable:
    """2d convolution of ``input`` (B, C, rows, cols) by ``filters`` (F, C / num_groups, kr, kc).

    See ``tensor.nnet.conv2d`` for the parameters.
    """
    return AbstractConv2d(input_shape, filter_shape, border_mode, subsample, filter_flip,
                          filter_dilation, num_groups, unshared)(input, filters)


def conv3d(input: Any, filters: Any, input_shape: Sequence | None = None,
           filter_shape: Sequence | None = None, border_mode: Any = "valid",
           subsample: Sequence[int] = (1, 1, 1), filter_flip: bool = True,
           filter_dilation: Sequence[int] = (1, 1, 1), num_groups: int = 1) -> Variable:
    """3d convolution of ``input`` (B, C, depth, rows, cols) by ``filters``
    (F, C / num_groups, kd, kr, kc); parameters as for ``conv2d``, one entry per axis."""
    return AbstractConv3d(input_shape, filter_shape, border_mode, subsample, filter_flip,
                          filter_dilation, num_groups)(input, filters)


def _spatial_shape(shape: Sequence, convdim: int, what: str,
                   unshared: bool = False) -> tuple[tuple, Any]:
    """(numeric shape with None for symbolic lengths, the kernel's or input's spatial
    lengths as given: its last ``convdim`` entries)."""
    length = 2 + 2 * convdim if unshared else 2 + convdim
    if len(shape) != length:
        raise ValueError(f"{what} must have {length} entries, got {len(shape)}")
    for i in range(length - convdim):
        if shape[i] is not None and _constant_int(shape[i]) is None:
            raise ValueError(f"{what}[{i}] must be a constant or None")
    for i in range(length - convdim, length):
        if shape[i] is None:
            raise ValueError(f"{what}[{i}] must be a symbolic variable or a constant, not None")
    numeric = tuple(_constant_int(s) if s is not None else None for s in shape)
    return numeric, tuple(shape[-convdim:])


def _grad_inputs(convdim: int, output_grad: Any, filters: Any, input_shape: Sequence,
                 filter_shape: Any, border_mode: Any, subsample: Any, filter_flip: bool,
                 filter_dilation: Any, num_groups: int, unshared: bool) -> Variable:
    numeric, spatial = _spatial_shape(input_shape, convdim, "input_shape")
    op = FAMILY[convdim, "inputs"](numeric, filter_shape, border_mode, subsample, filter_flip,
                                   filter_dilation, num_groups, unshared)
    return op(filters, output_grad, spatial)


def _grad_weights(convdim: int, input: Any, output_grad: Any, filter_shape: Sequence,
                  input_shape: Any, border_mode: Any, subsample: Any, filter_flip: bool,
                  filter_dilation: Any, num_groups: int, unshared: bool) -> Variable:
    numeric, spatial = _spatial_shape(filter_shape, convdim, "filter_shape", unshared)
    op = FAMILY[convdim, "weights"](input_shape, numeric, border_mode, subsample, filter_flip,
                                    filter_dilation, num_groups, unshared)
    return op(input, output_grad, spatial)


def conv2d_grad_wrt_inputs(output_grad: Any, filters: Any, input_shape: Sequence,
                           filter_shape: Sequence | None = None, border_mode: Any = "valid",
                           subsample: Sequence[int] = (1, 1), filter_flip: bool = True,
                           filter_dilation: Sequence[int] = (1, 1), num_groups: int = 1,
                           unshared: bool = False) -> Variable:
    """The gradient of a 2d convolution's output (``output_grad``) with respect to its
    input, upsampled to ``input_shape`` (its last two entries may be symbolic)."""
    return _grad_inputs(2, output_grad, filters, input_shape, filter_shape, border_mode,
                        subsample, filter_flip, filter_dilation, num_groups, unshared)


def conv3d_grad_wrt_inputs(output_grad: Any, filters: Any, input_shape: Sequence,
                           filter_shape: Sequence | None = None, border_mode: Any = "valid",
                           subsample: Sequence[int] = (1, 1, 1), filter_flip: bool = True,
                           filter_dilation: Sequence[int] = (1, 1, 1), num_groups: int = 1) -> Variable:
    """The 3d twin of ``conv2d_grad_wrt_inputs``."""
    return _grad_inputs(3, output_grad, filters, input_shape, filter_shape, border_mode,
                        subsample, filter_flip, filter_dilation, num_groups, False)


def conv2d_grad_wrt_weights(input: Any, output_grad: Any, filter_shape: Sequence,
                            input_shape: Sequence | None = None, border_mode: Any = "valid",
                            subsample: Sequence[int] = (1, 1), filter_flip: bool = True,
                            filter_dilation: Sequence[int] = (1, 1), num_groups: int = 1,
                            unshared: bool = False) -> Variable:
    """The gradient of a 2d convolution's output with respect to its filters, of
    ``filter_shape`` (its last two entries may be symbolic)."""
    return _grad_weights(2, input, output_grad, filter_shape, input_shape, border_mode,
                         subsample, filter_flip, filter_dilation, num_groups, unshared)


def conv3d_grad_wrt_weights(input: Any, output_grad: Any, filter_shape: Sequence,
                            input_shape: Sequence | None = None, border_mode: Any = "valid",
                            subsample: Sequence[int] = (1, 1, 1), filter_flip: bool = True,
                            filter_dilation: Sequence[int] = (1, 1, 1), num_groups: int = 1) -> Variable:
    """The 3d twin of ``conv2d_grad_wrt_weights``."""
    return _grad_weights(3, input, output_grad, filter_shape, input_shape, border_mode,
                         subsample, filter_flip, filter_dilation, num_groups, False)


def _separable(convdim: int, input: Any, depthwise_filters: Any, pointwise_filters: Any,
               num_channels: int, input_shape: Any, depthwise_filter_shape: Any,
               pointwise_filter_shape: Any, border_mode: Any, subsample: Any, filter_flip: bool,
               filter_dilation: Any) -> Variable:
    depthwise = FAMILY[convdim, "forward"](input_shape, depthwise_filter_shape, border_mode, subsample,
                                           filter_flip, filter_dilation, num_channels)
    if input_shape is None or depthwise_filter_shape is None:
        middle = None
    else:
        middle = get_conv_output_shape(input_shape, depthwise_filter_shape, depthwise.border_mode,
                                       depthwise.subsample, depthwise.filter_dilation)
    return FAMILY[convdim, "forward"](middle, pointwise_filter_shape, "valid", (1,) * convdim,
                                      filter_flip)(depthwise(input, depthwise_filters), pointwise_filters)


def separable_conv2d(input: Any, depthwise_filters: Any, pointwise_filters: Any, num_channels: int,
                     input_shape: Sequence | None = None, depthwise_filter_shape: Sequence | None = None,
                     pointwise_filter_shape: Sequence | None = None, border_mode: Any = "valid",
                     subsample: Sequence[int] = (1, 1), filter_flip: bool = True,
                     filter_dilation: Sequence[int] = (1, 1)) -> Variable:
    """A depthwise convolution (``num_channels`` groups: ``depthwise_filters`` is
    (channels * depth multiplier, 1, rows, cols)) followed by a pointwise one
    (``pointwise_filters``: (output channels, channels * depth multiplier, 1, 1))."""
    return _separable(2, input, depthwise_filters, pointwise_filters, num_channels, input_shape,
                      depthwise_filter_shape, pointwise_filter_shape, border_mode, subsample,
                      filter_flip, filter_dilation)


def separable_conv3d(input: Any, depthwise_filters: Any, pointwise_filters: Any, num_channels: int,
                     input_shape: Sequence | None = None, depthwise_filter_shape: Sequence | None = None,
                     pointwise_filter_shape: Sequence | None = None, border_mode: Any = "valid",
                     subsample: Sequence[int] = (1, 1, 1), filter_flip: bool = True,
                     filter_dilation: Sequence[int] = (1, 1, 1)) -> Variable:
    """The 3d twin of ``separable_conv2d``."""
    return _separable(3, input, depthwise_filters, pointwise_filters, num_channels, input_shape,
                      depthwise_filter_shape, pointwise_filter_shape, border_mode, subsample,
                      filter_flip, filter_dilation)


def causal_conv1d(input: Any, filters: Any, filter_shape: Sequence, input_shape: Sequence | None = None,
                  subsample: int = 1, filter_flip: bool = True, filter_dilation: int = 1,
                  num_groups: int = 1, unshared: bool = False) -> Variable:
    """Causal (dilated) 1d convolution of ``input`` (B, C, T) by ``filters`` (F, C, k): the
    output at time t sees inputs up to t only (left padding of ``dilation * (k - 1)``)."""
    input, filters = as_tensor_variable(input), as_tensor_variable(filters)
    if input.ndim != 3 or filters.ndim != 3:
        raise ValueError(f"causal_conv1d takes a 3D input and 3D filters, got {input.describe()} "
                         f"({input.ndim}D) and {filters.describe()} ({filters.ndim}D)")
    if len(filter_shape) != 3 or _constant_int(filter_shape[2]) is None:
        raise ValueError(f"causal_conv1d: filter_shape must have 3 entries, the last a constant; "
                         f"got {filter_shape!r}")
    left = filter_dilation * (_constant_int(filter_shape[2]) - 1)
    op = AbstractConv2d(tuple(input_shape) + (1,) if input_shape is not None else None,
                        tuple(filter_shape) + (1,), ((left, 0), 0), (subsample, 1), filter_flip,
                        (filter_dilation, 1), num_groups, unshared)
    out = op(input.dimshuffle(0, 1, 2, "x"), filters.dimshuffle(0, 1, 2, "x"))
    return out[:, :, :, 0]

