"""``explain(f)``: where a compiled function runs, in totals first, then what is off the device.

The totals answer "was my GPU used, and what does it cost?": nodes per device,
the transfers each call makes (how many, how many bytes, each way), and the
largest transfers with the reason each is there; for a profiled function, the peak
memory of its last call and the value holding the most then. Then the nodes that did not
go to the requested device, each with its reason; ``verbose=True`` lists
every node. A device that could not be opened, or an OpenCL device that is
the CPU itself (PoCL), is said first.
"""
from __future__ import annotations

import io
import textwrap
from typing import Any

from arignote.backends.gpu import ops as gpu
from arignote.backends.gpu.placement import TRANSFERS, reason_for
from arignote.backends.gpu.type import GpuArrayType, GpuFromHost, HostFromGpu
from arignote.compile.memory import peak_text
from arignote.compile.profiling import format_bytes, nbytes
from arignote.compile.sharedvalue import SharedVariable
from arignote.config import config
from arignote.graph.basic import Apply, Constant

N_LARGEST = 5  # transfers listed with their reasons


def explain(fn: Any, file: Any = None, verbose: bool = False) -> str:
    """Print (and return) where compiled ``fn`` runs: totals, the transfers and why each is
    made, and the nodes not on the requested device with the reason (``verbose``: all)."""
    fgraph = fn.maker.fgraph
    nodes = fgraph.toposort()
    kinds = {node: _where(node) for node in nodes}
    transfers = [n for n in nodes if kinds[n] == "transfer"]
    lines = [_device_line(fgraph)]
    counts = {k: sum(1 for n in nodes if kinds[n] == k) for k in ("gpu", "cpu", "transfer")}
    lines.append(f"nodes: {len(nodes)} in all, {counts['gpu']} on the device, {counts['cpu']} on "
                 f"the CPU, {counts['transfer']} transfer{'s' * (counts['transfer'] != 1)}")
    sizes = {n: transfer_bytes(fn, n) for n in transfers}
    lines.append("transfers per call: " + transfer_totals(transfers, sizes))
    memory = peak_text(fn)  # a function made with profile=True
    if memory:
        lines.append(memory)
    if transfers:
        known = sorted(transfers, key=lambda n: -(sizes[n] or 0))
        lines.append(f"largest transfers{' (sizes from the last call)' if any(sizes.values()) else ''}:")
        for node in known[:N_LARGEST]:
            size = "" if sizes[node] is None else f" ({format_bytes(sizes[node])})"
            lines.append(f"  {node}{size}: {_transfer_reason(fgraph, node)}")
        if len(known) > N_LARGEST:
            lines.append(f"  ... and {len(known) - N_LARGEST} more (verbose=True lists every node)")
    # Without a device every node is where it was asked to be: the line above says why.
    on_device = getattr(fgraph, "placement_device", (None, None))[1] is not None
    listed = nodes if verbose else [n for n in nodes if on_device and (
        kinds[n] == "cpu" or _inner(n) is not None)]
    if listed:
        lines.append("nodes:" if verbose else "nodes on the CPU:")
    for node in listed:
        text = _node_text(fgraph, node, kinds[node], verbose)
        if text:
            lines.append(textwrap.indent(text, "  "))
    text = "\n".join(lines)
    print(text, file=file)
    return text


def _where(node: Apply) -> str:
    if isinstance(node.op, TRANSFERS):
        return "transfer"
    return "gpu" if isinstance(node.op, gpu.GpuOp) else "cpu"


def _device_line(fgraph: Any) -> str:
    requested, ctx, unusable = getattr(fgraph, "placement_device", (None, None, None))
    if requested is None:
        if config.device == "cpu":
            return "device: cpu (set device=opencl0:0 or cuda0 to run on a GPU)"
        return (f"device: {config.device}, but this function's mode did not run the placement "
                "pass (the 'gpu' rewrites), so every node runs on the CPU")
    if requested == "cpu":
        return "device: cpu (set device=opencl0:0 or cuda0 to run on a GPU)"
    if ctx is None:
        return (f"device: {requested} was requested but cannot be used, so every node runs on "
                f"the CPU: {unusable or 'the device could not be opened'}")
    device = ctx.device
    text = f"device: {device.name}, {device.description}"
    if getattr(device, "chosen", None):
        text += f" (device={requested} took {device.chosen})"
    if getattr(device, "on_cpu", False):
        pocl = "Portable Computing Language" in device.description or "pocl" in device.description.lower()
        text += (f": an OpenCL device that runs on the CPU{' (PoCL)' if pocl else ''}, not a GPU; "
                 "its kernels use the CPU's cores and its transfers are memory copies")
    return text


def transfer_bytes(fn: Any, node: Apply) -> int | None:
    """Bytes the transfer ``node`` moved in the last call, from the buffers kept in its cells
    (None before the first call, or when the call handed the buffers out)."""
    for var in (node.outputs[0], node.inputs[0]):
        size = nbytes(fn.storage_map.get(var, [None])[0])
        if size:
            return size
    return None


def transfer_totals(transfers: list[Apply], sizes: dict) -> str:
    if not transfers:
        return "none"
    parts = []
    for cls, label in ((GpuFromHost, "to the device"), (HostFromGpu, "to the host")):
        group = [n for n in transfers if isinstance(n.op, cls)]
        if group:
            known = [sizes[n] for n in group if sizes[n] is not None]
            amount = f" ({format_bytes(sum(known))})" if len(known) == len(group) else ""
            parts.append(f"{len(group)} {label}{amount}")
    between = len(transfers) - sum(isinstance(n.op, (GpuFromHost, HostFromGpu)) for n in transfers)
    if between:
        parts.append(f"{between} between devices")
    return ", ".join(parts)


def _transfer_reason(fgraph: Any, node: Apply) -> str:
    source = node.inputs[0]
    if isinstance(node.op, GpuFromHost):
        if isinstance(source, SharedVariable):
            return (f"shared variable {source.describe()} lives on the host (made with "
                    "target='cpu', or of a dtype the device lacks) and a device node reads it")
        if source.owner is None and not isinstance(source, Constant):
            return (f"input {source.describe()} comes as a host array: each call copies it to the "
                    "device (pass a GpuArray, or keep the data on the device in a shared variable)")
        if source.owner is not None:
            why = reason_for(fgraph, source.owner) or "made after the placement pass"
            return f"{source.owner.op} runs on the CPU ({why}) and a device node needs its result"
        return "a constant copied to the device"
    if isinstance(node.op, HostFromGpu):
        readers = []
        for client, i in fgraph.clients.get(node.outputs[0], []):
            if client == "output":
                n_out = getattr(fgraph, "n_outputs", len(fgraph.outputs))
                readers.append(f"output {i} is returned as a host array (Out(y.transfer(None), "
                               "borrow=True) keeps it on the device)" if i < n_out else
                               "the update of a host shared variable")
            else:
                why = reason_for(fgraph, client) or "made after the placement pass"
                readers.append(f"{client.op} runs on the CPU ({why}) and reads it")
        return "; ".join(dict.fromkeys(readers)) or "nothing reads it"
    return f"the value moves to the device {node.op.context_name!r}"


def _node_text(fgraph: Any, node: Apply, kind: str, verbose: bool) -> str:
    inner = _inner(node)
    body = ""
    if inner is not None:
        body = explain(inner(), file=io.StringIO(), verbose=verbose)
        if not verbose and "nodes on the CPU:" not in body:
            body = ""  # a loop whose body runs on the device: nothing to show by default
    if kind == "transfer":
        where, why = "transfer", ""
    elif kind == "gpu":
        ctx = next(v.type for v in node.outputs + node.inputs if isinstance(v.type, GpuArrayType)).context
        where, why = f"gpu ({ctx.device.name})", ""
    else:
        where = "cpu"
        why = reason_for(fgraph, node) or _missing_reason(fgraph)
    if kind != "cpu" and not verbose and not body:
        return ""
    text = f"{node}\n    device: {where}" + (f"\n    reason: {why}" if why else "")
    if body:
        text += "\n    inner graph:\n" + textwrap.indent(body, " " * 8)
    return text


def _missing_reason(fgraph: Any) -> str:
    requested, ctx, unusable = getattr(fgraph, "placement_device", (None, None, None))
    if requested is None:
        return "device is cpu" if config.device == "cpu" else "the mode ran no placement pass"
    if requested == "cpu":
        return "device is cpu"
    if ctx is None:
        return f"device {requested} cannot be used: {unusable or 'it could not be opened'}"
    return "made by a rewrite after the placement pass"


def _inner(node: Apply) -> Any:
    return getattr(node.op, "inner_function", None)
