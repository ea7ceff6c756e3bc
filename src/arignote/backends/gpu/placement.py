"""Placement: move what the GPU can run onto it, and record why the rest stays.

The pass runs after fusion (so a fused Composite becomes one kernel) and
before the in-place rewrites. For each node it asks the lowering registered
for the op's class; a lowering returns the GPU outputs, or raises
:class:`StaysOnCpu` with the reason. Every node left on the CPU gets a reason,
which ``explain`` (``explain.py``) prints.
"""
from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Callable

import numpy as np

from arignote.backends.gpu import ops as gpu
from arignote.backends.kernels.render import LOGICAL_REDUCE, kernel_dtypes
from arignote.backends.gpu.context import GpuContext, get_context, why_unavailable
from arignote.backends.gpu.type import (GpuArrayConstant, GpuArrayType, GpuFromHost, GpuToGpu,
                                        HostFromGpu)
from arignote.config import config
from arignote.scalar.ops import TABLE
from arignote.graph.basic import Apply, Constant, Variable, user_stacklevel
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter, node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.graph.rewriting.merge import MergeRewriter
from arignote.tensor.alloc import Alloc, ARange
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.gemm import SumOfSquares
from arignote.tensor.nnet import LogSoftmax, Softmax
from arignote.tensor.nnet.basic import ClassIndices
from arignote.tensor.reduction import BITWISE, CAReduce
from arignote.tensor.shape import Reshape
from arignote.tensor.subtensor import Subtensor
from arignote.tensor.type import TensorType
from arignote.tensor.variable import TensorConstant


class StaysOnCpu(Exception):
    """Raised by a lowering: the node stays on the CPU, for the reason given."""


Lowering = Callable[[Apply, GpuContext, Callable[[Variable], Variable]], list]
_LOWERINGS: dict[type, Lowering] = {}


def register_lowering(op_class: type) -> Callable[[Lowering], Lowering]:
    def wrap(fn: Lowering) -> Lowering:
        _LOWERINGS[op_class] = fn
        return fn
    return wrap


def _check_dtypes(ctx: GpuContext, variables: list[Variable]) -> None:
    for var in variables:
        if not hasattr(var.type, "dtype"):
            continue  # not an array (a random generator's state): no kernel reads it
        reason = ctx.supports(var.type.dtype)
        if reason is not None:
            raise StaysOnCpu(reason + f" (variable {var.describe()})")


TRANSFERS = (GpuFromHost, HostFromGpu, GpuToGpu)


class Placement(GraphRewriter):
    name = "gpu_placement"

    def apply(self, fgraph: FunctionGraph) -> int:
        ctx = get_context(None)
        reasons: dict[Any, str] = {}  # by node and by (op class, inputs): see reason_for
        fgraph.placement = reasons
        # What explain() says about the whole graph: the device asked for, and why it is not used.
        fgraph.placement_device = (config.device, ctx, why_unavailable(None))
        if ctx is None:
            return 0
        changes = 0
        for node in fgraph.toposort():
            if isinstance(node.op, (gpu.GpuOp, *TRANSFERS)):
                continue
            lowering = _LOWERINGS.get(type(node.op))
            try:
                if lowering is None:  # an op may say why it has none (``stays_on_cpu``)
                    raise StaysOnCpu(getattr(node.op, "stays_on_cpu", None)
                                     or f"no GPU kernel for {type(node.op).__name__}")
                _check_dtypes(ctx, node.outputs)
                new = lowering(node, ctx, _on_gpu)
            except StaysOnCpu as why:
                reasons[_key(node)] = reasons[node] = str(why)
                _warn_float64(node, str(why))
                continue
            for old, out in zip(node.outputs, new):  # a shape read is already a host value
                out.tag.trace = old.tag.trace  # errors point where the user wrote it
                host = out if out.type == old.type else HostFromGpu()(out)
                fgraph.replace(old, host, reason=self.name)
            changes += 1
        for node in fgraph.toposort():  # GpuFromHost(HostFromGpu(x)) is x
            source = node.inputs[0].owner if node.inputs else None
            if (isinstance(node.op, GpuFromHost) and source is not None
                    and isinstance(source.op, HostFromGpu)
                    and source.inputs[0].type == node.outputs[0].type):
                fgraph.replace(node.outputs[0], source.inputs[0], reason=self.name)
        changes += _host_index_arithmetic(fgraph, reasons, self.name)
        changes += _sink_uploads(fgraph, ctx, self.name)
        MergeRewriter().apply(fgraph)  # one upload per host value, shared by its readers
        return changes


_HOST_READ = ("its integer result is read only on the host (index arithmetic): on the device "
              "it would cost a launch, a download, and its inputs an upload")


def _host_index_arithmetic(fgraph: FunctionGraph, reasons: dict, reason: str) -> int:
    """An integer elementwise kernel whose result only host nodes read (the index vector of
    a take, class indices) goes back to the host, with its inputs' uploads; consumers
    first, so a chain of them goes back whole. Only where that moves no more data: at
    most one input is a device value, and it is an integer no wider than the result."""
    changes = 0
    for node in reversed(fgraph.toposort()):
        out = node.outputs[0]
        if not isinstance(node.op, gpu.GpuElemwise) or out.type.dtype[0] not in "iub":
            continue
        readers = fgraph.clients[out]
        if not readers or any(c == "output" or not isinstance(c.op, HostFromGpu)
                              or any(r == "output" for r, _ in fgraph.clients[c.outputs[0]])
                              for c, _ in readers):
            continue
        device = [i for i in node.inputs if isinstance(i.type, GpuArrayType) and not isinstance(i, GpuArrayConstant)
                  and not (i.owner is not None and isinstance(i.owner.op, GpuFromHost))]
        if len(device) > 1 or any(d.type.dtype[0] not in "iub" or
                                  np.dtype(d.type.dtype).itemsize > np.dtype(out.type.dtype).itemsize
                                  for d in device):
            continue
        inputs = [TensorConstant(TensorType(i.type.dtype, i.type.broadcastable), i.host)
                  if isinstance(i, GpuArrayConstant) else
                  i.type.host_variable(i) if isinstance(i.type, GpuArrayType) else i  # upload: its host value
                  for i in node.inputs]
        host = Elemwise(node.op.scalar_op)(*inputs)
        host.tag.trace = out.tag.trace
        reasons[host.owner] = reasons[_key(host.owner)] = _HOST_READ
        for c, _ in list(readers):
            fgraph.replace(c.outputs[0], host, reason=reason)
        changes += 1
    return changes


def _sink_uploads(fgraph: FunctionGraph, ctx: GpuContext, reason: str) -> int:
    """Upload less: ``GpuFromHost(view(x))`` becomes a view of ``x`` uploaded (of the upload
    another reader makes already, for a slice), and ``GpuFromHost(arange(...))`` an arange
    computed on the device from its host bounds. Repeated until nothing changes, so a view
    of a view sinks too."""
    changes = 0
    changed = True
    while changed:
        changed = False
        for node in fgraph.toposort():
            if not isinstance(node.op, GpuFromHost) or node.inputs[0].owner is None:
                continue
            twin = _device_twin(fgraph, node.inputs[0].owner, ctx, node.op.context_name)
            if twin is not None and twin.type == node.outputs[0].type:
                fgraph.replace(node.outputs[0], twin, reason=reason)
                changes += 1
                changed = True
    return changes


def _device_twin(fgraph: FunctionGraph, source: Apply, ctx: GpuContext, context: str | None) -> Variable | None:
    if context is not None:
        return None
    if isinstance(source.op, ARange):
        from arignote.backends.gpu.ops_advanced import gpu_arange
        return gpu_arange(source, ctx)
    if not isinstance(source.op, (DimShuffle, Subtensor, Reshape)):
        return None
    x = source.inputs[0]
    uploaded = next((c.outputs[0] for c, _ in fgraph.clients.get(x, []) if c != "output"
                     and isinstance(c.op, GpuFromHost) and c.op.context_name is None), None)
    if uploaded is None:
        if isinstance(source.op, Subtensor) or ctx.supports(x.type.dtype) is not None:
            return None  # a slice of a host array: uploading the slice moves less
        uploaded = GpuFromHost()(x)
    lowering = _LOWERINGS[type(source.op)]
    host = HostFromGpu()(uploaded)
    rebuilt = source.clone_with_new_inputs([host, *source.inputs[1:]])
    try:
        out = lowering(rebuilt, ctx, _on_gpu)[0]
    except StaysOnCpu:
        return None
    return out if isinstance(out.type, GpuArrayType) else None


def _key(node: Apply) -> tuple:
    # The in-place rewrite later rebuilds nodes with the same op class and inputs.
    return (type(node.op), tuple(node.inputs))


def reason_for(fgraph: FunctionGraph, node: Apply) -> str | None:
    """Why placement left ``node`` on the CPU: found by the node itself (whose inputs
    a later rewrite may have replaced), by op class and inputs (a node the in-place
    rewrite rebuilt), or, for a node a later rewrite made of several (fusion), by
    the dtype check that kept its parts on the CPU."""
    reasons = getattr(fgraph, "placement", {})
    found = reasons.get(node) or reasons.get(_key(node))
    ctx = getattr(fgraph, "placement_device", (None, None, None))[1]
    if found is None and ctx is not None and not isinstance(node.op, (gpu.GpuOp, *TRANSFERS)):
        # A node a later rewrite made of several (fusion) or rebuilt from rebuilt inputs:
        # its dtypes, then its lowering, are asked again.
        lowering = _LOWERINGS.get(type(node.op))
        try:
            _check_dtypes(ctx, node.outputs)
            if lowering is not None:
                lowering(node, ctx, _on_gpu)
            elif getattr(node.op, "stays_on_cpu", None):  # a node made after placement (a copy)
                raise StaysOnCpu(node.op.stays_on_cpu)
        except StaysOnCpu as why:
            found = str(why)
    return found


def _on_gpu(var: Variable) -> Variable:
    if isinstance(var.type, GpuArrayType):
        return var
    if var.owner is not None and isinstance(var.owner.op, HostFromGpu):
        return var.owner.inputs[0]
    if isinstance(var, Constant):
        return GpuArrayConstant(GpuArrayType(var.type.dtype, var.type.broadcastable), var.data)
    return GpuFromHost()(var)


def _warn_float64(node: Apply, reason: str) -> None:
    if config.warn_float64 == "ignore" or "float64" not in reason:
        return
    culprit = next((v for v in node.inputs + node.outputs
                    if isinstance(v.type, TensorType) and v.type.dtype == "float64"), node.outputs[0])
    message = (f"{node.op} stays on the CPU: {reason}; the float64 value is {culprit.describe()}")
    if config.warn_float64 == "raise":
        raise TypeError(message)
    warnings.warn(message, stacklevel=user_stacklevel())


# ------------------------------------------------------------------ lowerings
def on_device(var: Variable) -> bool:
    """Whether ``var`` is a GPU value, or the host copy of one."""
    return isinstance(var.type, GpuArrayType) or (
        var.owner is not None and isinstance(var.owner.op, HostFromGpu))


def _one_element(var: Variable) -> bool:
    return isinstance(var.type, TensorType) and all(var.type.broadcastable)


def on_gpu_or_scalar(var: Variable) -> Variable:
    """``var`` on the GPU, except a host value of one element: kernels take it by value,
    so it costs no buffer and no transfer."""
    return var if _one_element(var) and not on_device(var) else _on_gpu(var)


@register_lowering(Elemwise)
def _elemwise(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    op = node.op
    if _one_element(node.outputs[0]) and not any(on_device(i) for i in node.inputs):
        raise StaysOnCpu("it computes one element from host values (shape or index arithmetic, "
                         "host scalars): a kernel would cost a launch, and its result a transfer back")
    _check_dtypes(ctx, node.inputs)
    dtypes = [i.type.dtype for i in node.inputs]
    out_dtype = node.outputs[0].type.dtype
    for inner in kernel_dtypes(op.scalar_op, dtypes, out_dtype):
        reason = ctx.supports(inner)
        if reason is not None and inner not in dtypes + [out_dtype]:
            raise StaysOnCpu(f"{op.scalar_op} computes in {inner} inside (a step of the fused "
                             f"chain, or a cast before one): {reason}")
    try:
        if op.scalar_op.c_block([f"x{k}" for k in range(len(dtypes))], dtypes,
                                node.outputs[0].type.dtype, ctx.dialect.ctype) is None:
            raise StaysOnCpu(f"no kernel expression for {op.scalar_op} on {', '.join(dtypes)}")
    except TypeError as err:
        raise StaysOnCpu(str(err)) from None
    return [gpu.GpuElemwise(op.scalar_op)(*[on_gpu_or_scalar(i) for i in node.inputs])]


def input_on_gpu(var: Variable) -> Variable:
    """``var`` on the GPU if it is there already; a metadata op (view, shape,
    reshape) of a host value stays with it, as moving it would only add a transfer."""
    if isinstance(var.type, GpuArrayType):
        return var
    if var.owner is not None and isinstance(var.owner.op, HostFromGpu):
        return var.owner.inputs[0]
    raise StaysOnCpu("its input is a host value, and a view, shape or reshape of it moves no "
                     "data: it runs where its input is")


@register_lowering(DimShuffle)
def _dimshuffle(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    x = input_on_gpu(node.inputs[0])
    return [gpu.GpuDimShuffle(node.op.input_broadcastable, node.op.new_order)(x)]


@register_lowering(CAReduce)
def _careduce(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    op = node.op
    x = node.inputs[0]
    _check_dtypes(ctx, [x])
    name = op.scalar_op.name
    if name in BITWISE and (op.dtype != "bool" or name not in LOGICAL_REDUCE):
        raise StaysOnCpu(f"{op} reduces bits, which the device's reduction kernels do not: "
                         "numpy's reduce does it on the host")
    if name in BITWISE:
        acc = "bool"
    elif name not in ("add", "mul"):
        acc = x.type.dtype
    elif x.type.dtype == op.dtype == "float32":
        # Theano's rule on the device: float32 in and out accumulates in float32 (a tree of
        # partial sums loses little, and float64 is slow or absent on GPUs).
        acc = "float32"
    else:
        acc = op.acc_dtype or op.dtype
    if ctx.supports(acc) is not None:
        raise StaysOnCpu(ctx.supports(acc) + " (the accumulator)")
    return [gpu.GpuCAReduce(op.scalar_op, op.axis, op.dtype, acc)(on_gpu(x))]


@register_lowering(SumOfSquares)
def _sum_of_squares(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    x = node.inputs[0]
    _check_dtypes(ctx, [x])
    dtype = x.type.dtype  # in and out agree: float32 accumulates in float32 here (see _careduce)
    return [gpu.GpuCAReduce(TABLE["add"], node.op.axis, dtype, dtype, square=True)(on_gpu(x))]


def _softmax(cls: type) -> Lowering:
    def lower(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
        _check_dtypes(ctx, node.inputs)
        return [cls(node.op.axis).make_node(on_gpu(node.inputs[0]), node.outputs[0].type.dtype).outputs[0]]
    return lower


register_lowering(Softmax)(_softmax(gpu.GpuSoftmax))
register_lowering(LogSoftmax)(_softmax(gpu.GpuLogSoftmax))


@register_lowering(ClassIndices)
def _class_indices(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    raise StaysOnCpu("class indices are checked on the host, where index vectors live")


def _check_dot(ctx: GpuContext, a: Variable, b: Variable) -> None:
    if a.type.dtype != b.type.dtype or a.type.dtype not in ("float32", "float64"):
        raise StaysOnCpu(f"GpuDot multiplies float32 or float64 of one dtype, got "
                         f"{a.type.dtype} and {b.type.dtype}")
    _check_dtypes(ctx, [a, b])


@register_lowering(Subtensor)
def _subtensor(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    x, *entries = node.inputs
    _check_dtypes(ctx, [x])
    op = gpu.GpuSubtensor(node.op.idx_list)
    return [op.make_node(on_gpu(x), node.outputs[0].type, *entries).outputs[0]]


@register_lowering(Alloc)
def _alloc(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    value, *shape = node.inputs
    _check_dtypes(ctx, [value])
    return [gpu.GpuAlloc().make_node(on_gpu_or_scalar(value), node.outputs[0].type.broadcastable,
                                     *shape).outputs[0]]


rewrites.register(Placement(), "placement", "fast_run", "fast_compile", "gpu")


@node_rewriter([HostFromGpu, GpuFromHost])
def local_transfer_pair(fgraph: FunctionGraph, node: Apply):
    """``HostFromGpu(GpuFromHost(x))`` is ``x``, and ``GpuFromHost(HostFromGpu(g))`` is ``g``
    on one context: removed before the specialising rewrites, so the gradients' round trips
    (``_host_from_gpu_grad``) hide no Gemm or fusion pattern."""
    source = node.inputs[0].owner
    if source is None or not isinstance(source.op, (GpuFromHost, HostFromGpu)) \
            or isinstance(source.op, type(node.op)):
        return None
    inner = source.inputs[0]
    return [inner] if inner.type == node.outputs[0].type else None


rewrites.register(local_transfer_pair, "canonicalize", "fast_run", "fast_compile", "gpu")

# The op modules register their lowerings on import.
from arignote.backends.gpu import (ops_advanced, ops_blas, ops_conv, ops_index, ops_join,  # noqa: E402,F401
                                   ops_pool, ops_shape)
