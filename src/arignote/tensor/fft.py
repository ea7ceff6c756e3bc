"""``tensor.fft``: Theano's real FFTs over every axis but the first (a batch axis).

The Fourier side is a real array whose last axis holds (real, imaginary), as Theano
stored it: ``rfft`` of ``(m, ..., n)`` is ``(m, ..., n//2 + 1, 2)``. Both ops compute
unnormalized transforms; ``rfft``/``irfft`` apply the ``norm`` scaling around them.

Each transform is linear, so its gradient is its transpose, which is the other
transform with the ``adjoint`` flag flipped: the transpose of the real-to-half-spectrum
map weights the half-spectrum entries that stand for two (conjugate) frequencies by 1/2
before the inverse; the transpose of the inverse weights them by 2 after the forward
transform (all but the first and, for an even length, the last entry of the axis).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Op
from arignote.tensor import math as tm
from arignote.tensor.join import stack
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["RFFTOp", "IRFFTOp", "rfft", "irfft", "rfft_op", "irfft_op"]

NORMS = (None, "ortho", "no_norm")


def _paired(n: int) -> slice:
    """The entries of a half spectrum of length ``n//2 + 1`` that stand for two frequencies."""
    return slice(1, n // 2 + n % 2)


def _shape_vector(s: Any, op: str) -> Any:
    s = as_tensor_variable(s)
    if s.ndim != 1 or s.dtype[:3] not in ("int", "uin"):
        raise TypeError(f"{op}: the transform shape must be an integer vector, got {s.describe()}")
    return s


def _spectrum(a: Any) -> Any:
    a = as_tensor_variable(a)
    if a.ndim < 3 or a.dtype not in ("float32", "float64"):
        raise TypeError(f"irfft takes a float array of shape (batch, ..., n//2 + 1, 2), got "
                        f"{a.describe()} ({a.type.describe()})")
    return a


class RFFTOp(Op):
    """Unnormalized real-input FFT over axes 1..; ``adjoint`` doubles the paired entries
    after it (the transpose of ``IRFFTOp``)."""

    __props__ = ("adjoint",)

    def __init__(self, adjoint: bool = False):
        self.adjoint = bool(adjoint)

    def make_node(self, a: Any, s: Any) -> Apply:
        a = as_tensor_variable(a)
        if a.ndim < 2 or a.dtype not in ("float32", "float64"):
            raise TypeError(f"rfft takes a float array of shape (batch, ..., n), got {a.describe()} "
                            f"({a.type.describe()})")
        return Apply(self, [a, _shape_vector(s, "rfft")],
                     [TensorType(a.dtype, (False,) * (a.ndim + 1))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, s = inputs
        shape = tuple(int(v) for v in s)
        spectrum = np.fft.rfftn(a, shape, axes=tuple(range(1, a.ndim)))
        if self.adjoint:
            spectrum[..., _paired(shape[-1])] *= 2
        output_storage[0][0] = np.stack([spectrum.real, spectrum.imag], axis=-1).astype(a.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shape = input_shapes[0]
        return [tuple(shape[:-1]) + (tm.int_div(shape[-1], 2) + 1, 2)]

    def grad(self, inputs: list, output_grads: list) -> list:
        a, s = inputs
        return [IRFFTOp(not self.adjoint)(output_grads[0], s), None]

    def __str__(self) -> str:
        return "RFFTOp{adjoint}" if self.adjoint else "RFFTOp"


class IRFFTOp(Op):
    """Unnormalized inverse of a half spectrum to a real array of shape ``(batch, *s)``;
    ``adjoint`` halves the paired entries before it (the transpose of ``RFFTOp``)."""

    __props__ = ("adjoint",)

    def __init__(self, adjoint: bool = False):
        self.adjoint = bool(adjoint)

    def make_node(self, a: Any, s: Any) -> Apply:
        a = _spectrum(a)
        return Apply(self, [a, _shape_vector(s, "irfft")],
                     [TensorType(a.dtype, (False,) * (a.ndim - 1))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        a, s = inputs
        shape = tuple(int(v) for v in s)
        if a.shape[-1] != 2:
            raise ValueError(f"irfft: the last axis holds (real, imaginary) and must have length 2, "
                             f"got shape {a.shape}")
        spectrum = a[..., 0] + 1j * a[..., 1]
        if self.adjoint:
            spectrum[..., _paired(shape[-1])] *= 0.5
        out = np.fft.irfftn(spectrum, shape, axes=tuple(range(1, spectrum.ndim))) * np.prod(shape)
        output_storage[0][0] = out.astype(a.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        s = node.inputs[1]
        return [(input_shapes[0][0],) + tuple(s[k] for k in range(node.outputs[0].ndim - 1))]

    def grad(self, inputs: list, output_grads: list) -> list:
        a, s = inputs
        return [RFFTOp(not self.adjoint)(output_grads[0], s), None]

    def __str__(self) -> str:
        return "IRFFTOp{adjoint}" if self.adjoint else "IRFFTOp"


rfft_op, irfft_op = RFFTOp(), IRFFTOp()


def _check_norm(norm: Any) -> None:
    if norm not in NORMS:
        raise ValueError(f"norm must be None (numpy's: the inverse divides by n), 'ortho' (both by "
                         f"sqrt(n)) or 'no_norm', got {norm!r}")


def rfft(inp: Any, norm: str | None = None) -> Any:
    """The FFT of each of the ``m`` real inputs of ``inp`` (shape ``(m, ..., n)``): shape
    ``(m, ..., n//2 + 1, 2)``, real and imaginary parts in the last axis."""
    _check_norm(norm)
    inp = as_tensor_variable(inp)
    s = inp.shape[1:]
    out = rfft_op(inp, s)
    return out / tm.sqrt(tm.cast(s.prod(), inp.dtype)) if norm == "ortho" else out


def irfft(inp: Any, norm: str | None = None, is_odd: bool = False) -> Any:
    """The real inverse FFTs of ``m`` half spectra (shape ``(m, ..., k, 2)``): shape
    ``(m, ..., 2(k-1))``, or ``2(k-1) + 1`` with ``is_odd=True``."""
    _check_norm(norm)
    if not isinstance(is_odd, (bool, np.bool_)):
        raise ValueError(f"is_odd must be True or False, got {is_odd!r}")
    inp = _spectrum(inp)
    dims = [inp.shape[k] for k in range(1, inp.ndim - 1)]
    dims[-1] = (dims[-1] - 1) * 2 + int(bool(is_odd))
    s = stack(dims)
    out = irfft_op(inp, s)
    if norm is None:
        return out / tm.cast(s.prod(), inp.dtype)
    return out / tm.sqrt(tm.cast(s.prod(), inp.dtype)) if norm == "ortho" else out
