"""The GPU array type, its variables, constants and shared variables, and the transfers.

A graph value on a GPU has GpuArrayType (dtype, broadcastable, context name);
using it in a tensor expression goes through ``HostFromGpu`` automatically,
and the placement pass later moves the expression itself to the GPU and
removes the transfer pairs, so only the transfers that are needed remain.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.backends.gpu.array import GpuArray, to_gpu
from arignote.backends.gpu.context import GpuContext, get_context, loading_context
from arignote.compile.sharedvalue import (SharedVariable, load_shared, shared_constructor,
                                          tensor_constructor)
from arignote.graph.basic import Apply, Constant, Op, Type, Variable, _hashable
from arignote.tensor.type import TensorType
from arignote.gradient import register_grad
from arignote.tensor.variable import (_TensorOperators, as_tensor_variable, register_transfer,
                                      transfer)


class GpuArrayType(Type):
    """An array of ``dtype`` on the GPU context ``context_name`` (None: config.device)."""

    def __init__(self, dtype: str, broadcastable: Sequence[bool], context_name: str | None = None):
        self.dtype = str(dtype)
        self.broadcastable = tuple(bool(b) for b in broadcastable)
        self.ndim = len(self.broadcastable)
        self.context_name = context_name

    def __eq__(self, other: object) -> bool:
        return (type(other) is GpuArrayType and other.dtype == self.dtype
                and other.broadcastable == self.broadcastable
                and other.context_name == self.context_name)

    def __hash__(self) -> int:
        return hash((GpuArrayType, self.dtype, self.broadcastable, self.context_name))

    def __str__(self) -> str:
        return f"GpuArrayType<{self.context_name or 'default'}>({self.dtype}, {self.host_type().kind()})"

    __repr__ = __str__

    def describe(self) -> str:
        return f"{self.dtype} {self.host_type().kind()} on GPU {self.context_name or 'default'}"

    @property
    def context(self) -> GpuContext:
        ctx = get_context(self.context_name)
        if ctx is None:
            raise RuntimeError(f"{self}: config.device is 'cpu', so there is no GPU to hold this "
                               "value: set device=opencl0:0 or cuda0 before building the graph")
        return ctx

    def host_type(self) -> TensorType:
        return TensorType(self.dtype, self.broadcastable)

    def host_variable(self, var: Variable) -> Variable:
        if var.owner is not None and isinstance(var.owner.op, GpuFromHost):
            return var.owner.inputs[0]  # a value just moved to the device: the host value itself
        return HostFromGpu()(var)

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None,
               name: str = "value", relax: str = "compile with allow_input_downcast=True",
               bounds: bool = False) -> GpuArray:
        """``value`` on this type's device; ``bounds``: a host value's range recorded
        (``GpuArray.bounds``)."""
        if (isinstance(value, GpuArray) and value.context is self.context
                and value.dtype == self.dtype and value.ndim == self.ndim):
            return value
        if isinstance(value, GpuArray):
            value = value.get()
        host = self.host_type().filter(value, strict=strict, allow_downcast=allow_downcast,
                                       name=name, relax=relax)
        return to_gpu(self.context, host, bounds)

    def convert_variable(self, var: Variable) -> Variable | None:
        if var.type == self:
            return var
        if isinstance(var.type, TensorType) and var.type.dtype == self.dtype and var.ndim == self.ndim:
            return GpuFromHost(self.context_name)(var)
        return None


def context_of(node: Apply, output: int = 0) -> Any:
    """The context output ``output`` of ``node`` lives on, looked up once per node (the
    lookup reads config.device: microseconds a call otherwise)."""
    found = getattr(node.tag, "gpu_contexts", None)
    if found is None:
        found = node.tag.gpu_contexts = {}
    ctx = found.get(output)
    if ctx is None:
        ctx = found[output] = node.outputs[output].type.context
    return ctx


class GpuArrayVariable(_TensorOperators, Variable):
    """Tensor operators on it build host graphs (through HostFromGpu); placement moves them back."""


class GpuArrayConstant(_TensorOperators, Constant):
    """A constant uploaded once; merged with equal ones by its host value."""

    def __init__(self, type: GpuArrayType, data: Any, name: str | None = None):
        self.host = np.asarray(data.get() if isinstance(data, GpuArray) else data, dtype=type.dtype)
        super().__init__(type, self.host, name)

    def signature(self) -> tuple:
        return (self.type, _hashable(self.host))

    def clone(self) -> GpuArrayConstant:
        return type(self)(self.type, self.host, self.name)

    def __reduce_ex__(self, protocol: int) -> tuple:
        return type(self), (self.type, self.host, self.name)

    def __str__(self) -> str:
        return self.name or f"GpuConstant{{{self.host}}}"


GpuArrayType.variable_type = GpuArrayVariable
GpuArrayType.constant_type = GpuArrayConstant


class GpuArraySharedVariable(_TensorOperators, SharedVariable):
    """A shared variable living on the GPU.

    ``get_value()`` always gives a host array (a copy: host memory can never be
    the device buffer); ``return_internal_type=True`` gives the GpuArray itself
    with ``borrow=True`` (no transfer at all), else a device-side copy.
    ``set_value`` uploads; with ``borrow=True`` a GpuArray of this context is
    adopted as it is, unless another shared variable holds its buffer (then it
    is copied on the device: two shared variables never share a buffer).
    """

    def _filter(self, value: Any) -> Any:
        return self.type.filter(value, strict=self.strict, allow_downcast=self.allow_downcast,
                                name=f"shared variable {self.describe()}",
                                relax="make the shared variable with allow_downcast=True",
                                bounds=_bounds_worth(self.type))

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> Any:
        value = self.storage[0]
        if return_internal_type:
            return value if borrow else value.copy()
        return value.get()

    def set_value(self, value: Any, borrow: bool = False) -> None:
        new = self._filter(value)
        adopted = new is value  # else the filter uploaded a fresh buffer
        self._assign(new.copy() if adopted and not borrow else new, borrowed=adopted and borrow)

    def zero(self, borrow: bool = False) -> None:
        self.set_value(np.zeros(self.storage[0].shape, self.dtype), borrow=True)

    def _shared_options(self) -> dict:
        return {"broadcastable": self.type.broadcastable, "context_name": self.type.context_name}

    @staticmethod
    def _loader(value: Any, name: str | None, strict: bool, allow_downcast: bool | None,
                options: dict) -> SharedVariable:
        """Loaded on the pickled context if this process defines it, else on its default
        device (the CPU when it has none)."""
        context_name = options.pop("context_name")
        if context_name is not None and loading_context(context_name) is not None:
            options["target"] = context_name
        return load_shared(value, name, strict, allow_downcast, options)


@shared_constructor
def gpu_constructor(value: Any, name: str | None = None, strict: bool = False,
                    allow_downcast: bool | None = None, borrow: bool = False,
                    broadcastable: Sequence[bool] | None = None,
                    shape: Sequence[int | None] | None = None, target: str | None = None
                    ) -> SharedVariable | None:
    """With a GPU ``config.device`` (or a ``target`` context), arrays of a dtype the
    device handles live there; ``target='cpu'`` keeps one on the host."""
    if isinstance(value, (bool, int, float, complex, np.generic)):
        value = np.asarray(value)
    if not isinstance(value, (np.ndarray, GpuArray)) or value.dtype == object:
        return None
    ctx = None if target == "cpu" else get_context(target)
    if ctx is None or ctx.supports(value.dtype.name) is not None:
        host = value.get() if isinstance(value, GpuArray) else value
        return tensor_constructor(host, name, strict, allow_downcast, borrow, broadcastable, shape)
    if shape is not None:
        broadcastable = tuple(s == 1 for s in shape)
    gtype = GpuArrayType(value.dtype.name, broadcastable or (False,) * value.ndim, target)
    data = gtype.filter(value, strict=strict, allow_downcast=allow_downcast,
                        name=f"shared variable {name!r}", bounds=_bounds_worth(gtype))
    adopted = data is value  # else the filter uploaded a fresh buffer
    return GpuArraySharedVariable(gtype, data.copy() if adopted and not borrow else data, name=name,
                                  strict=strict, allow_downcast=allow_downcast,
                                  borrowed=adopted and borrow)


def _bounds_worth(gtype: GpuArrayType) -> bool:
    """Whether a shared value set from the host records its range: integers and float
    vectors (labels, as the tutorials store them), which may index; not float matrices
    (data, weights), where the pass over them would cost as much as the upload."""
    return gtype.dtype[0] in "iu" or (gtype.dtype.startswith("float") and gtype.ndim <= 1)


# ----------------------------------------------------------------- transfers
class GpuFromHost(Op):
    """Copy a host array to the GPU context ``context_name``."""

    __props__ = ("context_name",)
    passes_value = True

    def __init__(self, context_name: str | None = None):
        self.context_name = context_name

    def __str__(self) -> str:
        return f"GpuFromHost<{self.context_name or 'default'}>"

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [GpuArrayType(x.dtype, x.broadcastable, self.context_name)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        output_storage[0][0] = to_gpu(context_of(node), x, x.dtype.kind in "iu")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return input_shapes


class HostFromGpu(Op):
    """Copy a GPU array to the host (a contiguous numpy array)."""

    __props__ = ()

    passes_value = True

    def make_node(self, x: Variable) -> Apply:
        if not isinstance(x.type, GpuArrayType):
            raise TypeError(f"HostFromGpu takes a GPU array, got {x} of type {x.type}")
        return Apply(self, [x], [x.type.host_type()()])

    def rebuild(self, inputs: list[Variable]) -> Apply | None:
        # A graph made on a GPU, loaded where its shared variable is on the host.
        return None if isinstance(inputs[0].type, TensorType) else self.make_node(*inputs)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x = inputs[0]
        cell = output_storage[0]
        out = cell[0]
        reuse = out is not None and out.shape == x.shape and out.flags.c_contiguous
        cell[0] = x.get(out if reuse else None)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return input_shapes


class GpuToGpu(Op):
    """Copy an array from one GPU context to another (through the host)."""

    __props__ = ("context_name",)
    passes_value = True

    def __init__(self, context_name: str | None):
        self.context_name = context_name

    def make_node(self, x: Variable) -> Apply:
        return Apply(self, [x], [GpuArrayType(x.type.dtype, x.type.broadcastable, self.context_name)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = to_gpu(context_of(node), inputs[0].get())


@register_grad(HostFromGpu)
def _host_from_gpu_grad(op: HostFromGpu, inputs: list, outputs: list, output_grads: list) -> list:
    return [GpuFromHost(inputs[0].type.context_name)(output_grads[0])]


@register_grad(GpuFromHost, GpuToGpu)
def _to_gpu_grad(op: Op, inputs: list, outputs: list, output_grads: list) -> list:
    return [transfer(output_grads[0], inputs[0].type.context_name if isinstance(
        inputs[0].type, GpuArrayType) else "cpu")]


@register_transfer
def transfer_to_gpu(var: Any, target: str | None) -> Variable | None:
    if target == "cpu":
        return None
    if target is None and get_context(None) is None:
        return as_tensor_variable(var)  # the device is the CPU: the value stays on the host
    var = var if isinstance(getattr(var, "type", None), GpuArrayType) else as_tensor_variable(var)
    if isinstance(var.type, GpuArrayType):
        return var if var.type.context_name == target else GpuToGpu(target)(var)
    return GpuFromHost(target)(var)
