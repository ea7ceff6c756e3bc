"""The CPU thunk for Elemwise, generated per node at link time.

Everything decidable before the first call is decided here and baked into a
small straight-line function: constants bound as 0-d values (numpy broadcasts
a 0-d operand much faster than a (1,)-shaped one) in the dtype numpy's loop
reads them in (so no call casts them again), which inputs can set the
output shape (equal shapes pass with one comparison; others meet the types'
BroadcastRule, written out for the node, which refuses what numpy alone would
stretch), whether inputs need a cast first (numpy's exp of int8 is float16;
ours is float32), and whether the last call's output buffer (or, in place, the
destroyed input) can be written into.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.backends.cpu import native, native_elemwise
from arignote.backends.cpu.thunks import Thunk, make_thunk, perform_thunk
from arignote.config import config
from arignote.graph.basic import Apply, Constant
from arignote.backends.cpu.tiling import TILE, run_tiled
from arignote.backends.kernels import cache
from arignote.scalar.composite import Composite
from arignote.tensor.elemwise import BroadcastRule, Elemwise


@make_thunk.register(Elemwise)
def elemwise_thunk(op: Elemwise, node: Apply, input_cells: list[list], output_cells: list[list]) -> Thunk:
    scalar_op = op.scalar_op
    out_type = node.outputs[0].type
    composite = isinstance(scalar_op, Composite)
    source = native_elemwise.kernel(node)
    if scalar_op.ufunc is None and not op.inplace_pattern and not composite and source is None:
        return perform_thunk(op, node, input_cells, output_cells)
    out_dtype = out_type.numpy_dtype
    ufunc = scalar_op.ufunc
    compute = None
    in_dtypes = [i.type.dtype for i in node.inputs]
    if not composite and (ufunc is None or _numpy_result_dtype(ufunc, in_dtypes) != out_dtype):
        compute = scalar_op.compute_dtype(out_dtype.name, *in_dtypes)
    ns: dict[str, Any] = {"F": ufunc,
                          "IMPL": scalar_op.impl, "OUT": output_cells[0], "DT": out_dtype,
                          "ndarray": np.ndarray, "asarray": np.asarray, "copyto": np.copyto}
    body: list[str] = []
    args: list[str] = []
    shapers: list[tuple[int, str]] = []  # (input position, operand) of inputs that can set the shape
    operand_dtypes = [np.dtype(d if compute is None else compute) for d in in_dtypes]
    for k, (var, cell) in enumerate(zip(node.inputs, input_cells)):
        if isinstance(var, Constant) and all(var.type.broadcastable) and len(node.inputs) > 1:
            value = np.asarray(var.data).reshape(())
            if compute is not None:
                value = value.astype(compute)
            ns[f"K{k}"] = _as_loop_operand(ufunc, operand_dtypes, k, value)
            args.append(f"K{k}")
            continue
        ns[f"C{k}"] = cell
        fetch = f"C{k}[0]" if compute is None else f"asarray(C{k}[0], dtype=CD)"
        body.append(f"    x{k} = {fetch}")
        args.append(f"x{k}")
        if not all(var.type.broadcastable) or not node.outputs[0].type.ndim:
            shapers.append((k, f"x{k}"))
    if compute is not None:
        ns["CD"] = np.dtype(compute)
    if not shapers:
        shapers = [(k, a) for k, a in enumerate(args) if a.startswith("x")] or [(0, args[0])]
    shape_lines, shape = _shape_code(node, shapers, ns)
    body += shape_lines
    call = ", ".join(args)
    if source is not None:
        # Without casts the numpy lines' fetches and shape serve the native path, after them.
        if compute is None:
            body += _native_lines(op, node, ns, source, shapers, "x", shape)
        else:
            body[:0] = _native_lines(op, node, ns, source, shapers, "v", None)
    if op.inplace_pattern:
        target = args[op.inplace_pattern[0][1]]
        body.append(f"    target = {target}")
    else:
        body.append("    target = OUT[0]")
    if composite:
        ns.update(KERNEL=scalar_op.kernel, NOSCRATCH=(None,) * len(scalar_op.steps),
                  TILED=run_tiled, STEP_DTYPES=tuple(scalar_op.step_dtypes), TILE=TILE, empty=np.empty)
        body.append(f"    if target is None or target.shape != {shape}:")
        body.append(f"        target = empty({shape}, DT)")
        body.append("    if target.size <= TILE:")
        body.append(f"        KERNEL({call}, target, *NOSCRATCH)")
        body.append("    else:")
        body.append(f"        TILED(KERNEL, ({call},), target, STEP_DTYPES)")
        body.append("    OUT[0] = target")
        return _compile(body, op, ns)
    fast = "F" if ns["F"] is not None else None
    body.append(f"    if target is not None and target.shape == {shape}:")
    if fast:
        # An in-place op of tensor.inplace writes a wider result into its input (a float
        # sum into an int array): numpy casts it only when told to.
        narrowing = (op.inplace_pattern and
                     _numpy_result_dtype(ufunc, [d.name for d in operand_dtypes]) != out_dtype)
        casting = ", casting='unsafe'" if narrowing else ""
        body.append(f"        OUT[0] = F({call}, out=target{casting})")
    else:
        body.append(f"        copyto(target, IMPL({call}), casting='unsafe')")
        body.append("        OUT[0] = target")
    body.append("    else:")
    body.append(f"        r = {'F' if fast else 'IMPL'}({call})")
    if not fast or not out_type.ndim:  # a ufunc returns a scalar only for a 0-d result
        body.append("        if type(r) is not ndarray:")
        body.append("            r = asarray(r)")
    if (not fast or _DTYPE_BY_VALUE  # else numpy's result dtype is the one probed here
            or _numpy_result_dtype(ufunc, [d.name for d in operand_dtypes]) != out_dtype):
        body.append("        if r.dtype is not DT:")  # numpy's builtin dtypes are singletons
        body.append("            r = r.astype(DT)")
    body.append("        OUT[0] = r")
    return _compile(body, op, ns)


def _native_lines(op: Elemwise, node: Apply, ns: dict[str, Any], source: Any,
                  shapers: list[tuple[int, str]], prefix: str, shape: str | None) -> list[str]:
    """The native path, before numpy's kernel: arrays of ``native_min_size`` elements or more
    (judged by an input that sets the shape) go to the compiled kernel; it returns nonzero
    for a layout it was not built for, and the numpy lines below run instead. ``prefix``
    ``"x"``: the numpy lines' fetches and ``shape`` are reused; ``"v"``: raw fetches of its own."""
    ns["K"] = native.refuse
    native.request(source, len(node.inputs) + 1, lambda fn: ns.__setitem__("K", fn))
    names = []
    lines = []
    for k, var in enumerate(node.inputs):
        if isinstance(var, Constant):
            ns[f"NK{k}"] = np.asarray(var.data, dtype=var.type.dtype)
            names.append(f"NK{k}")
        else:
            if prefix == "v":
                lines.append(f"    v{k} = C{k}[0]")
            names.append(f"{prefix}{k}")
    shaped = [(k, names[k]) for k, _ in shapers]
    minimum = config.native_min_size
    indent = "        " if minimum else "    "
    if minimum:
        lines.append(f"    if {shaped[0][1]}.size >= {minimum}:")
    if shape is None:
        shape_lines, shape = _shape_code(node, shaped, ns)
        lines += ["    " + line if minimum else line for line in shape_lines]
    target = names[op.inplace_pattern[0][1]] if op.inplace_pattern else "OUT[0]"
    lines.append(f"{indent}target = {target}")
    lines.append(f"{indent}if target is None or target.shape != {shape}:")
    lines.append(f"{indent}    target = empty({shape}, DT)")
    lines.append(f"{indent}if not K(target, {', '.join(names)}):")
    lines.append(f"{indent}    OUT[0] = target")
    lines.append(f"{indent}    return")
    ns["empty"] = np.empty
    return lines


def _shape_code(node: Apply, shapers: list[tuple[int, str]], ns: dict[str, Any]
                ) -> tuple[list[str], str]:
    """(lines, expression) for the output shape. One shaper: its shape, nothing to check.
    Several: the first's when all are equal (one comparison each, the common case), else
    the types' BroadcastRule written out for this node (a few index comparisons), which
    raises when the shapes do not fit."""
    if len(shapers) == 1:
        return [], f"{shapers[0][1]}.shape"
    rule = ns["RULE"] = BroadcastRule(node, [k for k, _ in shapers])
    names = [f"s{k}" for k, _ in shapers]
    fits, result = rule.source(names)
    first = shapers[0][1]
    differ = " or ".join(f"{a}.shape != shape" for _, a in shapers[1:])
    return [f"    shape = {first}.shape",
            f"    if {differ}:",
            f"        {', '.join(names)} = shape, {', '.join(a + '.shape' for _, a in shapers[1:])}",
            f"        shape = {result} if {fits} else RULE({', '.join(names)})"], "shape"


def _compile(body: list[str], op: Elemwise, ns: dict[str, Any]) -> Thunk:
    source = "def thunk():\n" + "\n".join(body) + "\n"
    exec(cache.python_code(source, f"<thunk {op}>"), ns)
    thunk = ns["thunk"]
    thunk.source = source
    return thunk


# numpy 1.x picks a 0-d operand's dtype by its value (so the result's may differ from the
# probed one); numpy 2's promotion (NEP 50) goes by dtypes alone.
_DTYPE_BY_VALUE = np.lib.NumpyVersion(np.__version__) < "2.0.0"


def _as_loop_operand(ufunc: np.ufunc | None, dtypes: list[np.dtype], k: int,
                     value: np.ndarray) -> np.ndarray:
    """Constant operand ``k`` (0-d) cast to the dtype numpy's loop reads it in, where that
    picks the same loop: numpy casts it that same way on every call otherwise, and a 0-d
    operand of the loop's own dtype is the fastest form (``x + 1`` on 10 float64: about
    0.5 µs, against 0.8 with an int8 0-d constant and 0.7 with a Python float)."""
    if ufunc is None or value.dtype != dtypes[k]:
        return value
    try:
        loop = ufunc.resolve_dtypes((*dtypes, *[None] * ufunc.nout))
        cast = [*dtypes[:k], loop[k], *dtypes[k + 1:]]
        if ufunc.resolve_dtypes((*cast, *[None] * ufunc.nout)) != loop:
            return value
    except (TypeError, ValueError, AttributeError):  # no such loop, or numpy < 1.24
        return value
    return value.astype(loop[k])


def _numpy_result_dtype(ufunc: np.ufunc, dtypes: list[str]) -> np.dtype:
    """What numpy itself returns for these input dtypes (casting first is needed
    only where it differs from our dtype rule, e.g. exp(int8) is float16 in numpy)."""
    probes = [np.ones(1, dtype=d) for d in dtypes]
    with np.errstate(all="ignore"):
        return np.asarray(ufunc(*probes)).dtype
