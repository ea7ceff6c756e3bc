"""DebugMode: a mode that checks every node, and every rewrite, on every call.

Slow by design, for finding wrong ops and wrong rewrites (Theano's DebugMode).
At compile time it keeps a copy of the graph before rewriting, records each
replacement the rewrites make (``graph.history``), and rewrites the graph
``stability_patience`` times to see that the result does not depend on
chance. On each call, for each node in order:

- an input it changed must be in its ``destroy_map`` (``BadDestroyMap``);
- an output sharing memory with an input must be in its ``view_map`` or
  ``destroy_map``, and two outputs that later nodes read and that share memory
  must be views of one input it names (``BadViewMap``);
- each output must be a value of its type, and finite with ``check_isfinite``
  (``InvalidValueError``);
- the backend's result must equal ``perform``'s on the same inputs into fresh
  storage (``BadThunkOutput``);
- ``infer_shape`` must give the shapes that came (``BadInferShape``).

After the last node, each replacement's two sides are compared on this call's
values (``BadOptimization`` names the rewrite; a GPU node that differs from the
CPU op it replaced is a ``BadThunkOutput``), then the outputs against the
graph before rewriting. Every error names the node, the user's variable it
computes, the rewrite that made it, and the inputs' shapes and dtypes.
"""
from __future__ import annotations

import threading
import warnings
from typing import Any
from collections.abc import Callable

import numpy as np

from arignote.backends.cpu.thunks import perform_thunk
from arignote.compile import reference
from arignote.compile.mode import PREDEFINED, Mode, SharedMode
from arignote.config import config
from arignote.graph.basic import Apply, Constant, Variable, perform_of
from arignote.graph.fg import FunctionGraph
from arignote.graph.history import RewriteHistory, describe_node, history_of
from arignote.tensor.type import TensorType

_INFER_FAILURES = (NotImplementedError, TypeError, ValueError, IndexError, AttributeError)


class DebugModeError(Exception):
    """Any error DebugMode finds; the subclasses say which check failed. The keyword
    arguments become attributes under Theano's names (``BadOptimization.reason``,
    ``BadThunkOutput.r``, ``BadDestroyMap.node``...), for code that inspects them."""

    names_its_node = True  # the message names the node and its inputs (the executor adds nothing)

    def __init__(self, message: str = "", **details: Any):
        super().__init__(message)
        vars(self).update(details)


class BadThunkOutput(DebugModeError):
    """The backend's result (a generated CPU thunk, a GPU kernel) differs from ``perform``'s:
    ``r`` the output variable, ``val1`` the reference value, ``val2`` the backend's."""


class BadOptimization(DebugModeError):
    """A rewrite replaced a variable by one whose value differs: ``reason`` (the rewrite's
    name), ``old_r``/``new_r`` (the variables), ``old_r_val``/``new_r_val`` (their values)."""


class BadDestroyMap(DebugModeError):
    """A node changed an input its ``destroy_map`` does not name: ``node``, ``idx`` (the input),
    ``old_val``/``new_val``."""


class BadViewMap(DebugModeError):
    """A node returned memory of an input its ``view_map`` does not name: ``node``,
    ``output_idx``, ``in_alias_idx`` (the input's index, or the other output's)."""


class InvalidValueError(DebugModeError):
    """A node returned a value that is not of its output's type, or NaN/inf under check_isfinite:
    ``r`` the output variable, ``v`` the value."""


class BadInferShape(DebugModeError):
    """A node's ``infer_shape`` disagrees with the shapes its outputs have."""


class StochasticOrder(DebugModeError):
    """Rewriting the same graph twice gave two different graphs."""


class DebugMode(Mode):
    """Theano's DebugMode: ``function(..., mode='DebugMode')`` or ``mode=DebugMode(...)``.

    ``check_c_code`` runs the backends' own thunks (generated CPU code) and
    compares them with ``perform``; without it nodes run ``perform`` (GPU nodes
    always run their kernels). ``check_py_code=False`` skips the comparisons
    with ``perform``. ``require_matching_strides``: 0 ignores, 1 warns, 2 raises
    when the two results have different strides. ``linker`` is accepted and
    unused, as in Theano; so is ``check_preallocated_output`` (Theano ran each C
    op again into output buffers of other layouts: our thunks are given no
    output buffer to write into, so there is no such bug to find).
    """

    def __init__(self, optimizer: Any = "fast_run", stability_patience: int | None = None,
                 check_c_code: bool | None = None, check_py_code: bool | None = None,
                 check_isfinite: bool | None = None, check_preallocated_output: Any = None,
                 require_matching_strides: int | None = None, linker: Any = None):
        super().__init__("cpu", optimizer, name="DebugMode")
        flags = config.DebugMode  # each default is its flag (Theano's config.DebugMode.*)
        self.stability_patience = flags.patience if stability_patience is None else int(stability_patience)
        if self.stability_patience < 1:
            raise ValueError(f"DebugMode(stability_patience={stability_patience}): rewrite at "
                             "least once (1 or more)")
        self.check_c_code = flags.check_c if check_c_code is None else bool(check_c_code)
        self.check_py_code = flags.check_py if check_py_code is None else bool(check_py_code)
        self.check_isfinite = flags.check_finite if check_isfinite is None else bool(check_isfinite)
        self.require_matching_strides = flags.check_strides if require_matching_strides is None \
            else int(require_matching_strides)
        if self.require_matching_strides not in (0, 1, 2):
            raise ValueError(f"DebugMode(require_matching_strides={require_matching_strides}): "
                             "use 0 (ignore), 1 (warn) or 2 (raise)")

    def rewrite(self, fgraph: FunctionGraph) -> None:
        history = RewriteHistory()
        fgraph.attach_feature(history)
        before = history.original
        super().rewrite(fgraph)
        first = _structure(fgraph)
        for attempt in range(1, self.stability_patience):
            again = before.clone()
            super().rewrite(again)
            if _structure(again) != first:
                raise StochasticOrder(f"rewriting the same graph gave a different result on "
                                      f"attempt {attempt + 1}: a rewrite depends on the order of a "
                                      f"set or on object ids\nfirst:\n{_text(first)}\nthen:\n"
                                      f"{_text(_structure(again))}")

    def wrap_thunks(self, fn: Any, nodes: list[Apply], thunks: list[Callable]) -> list[Callable]:
        if not nodes:
            return thunks
        checker = _Checker(self, fn)
        if not self.check_c_code:
            storage = fn.storage_map
            thunks = [perform_thunk(node.op, node, [storage[v] for v in node.inputs],
                                    [storage[v] for v in node.outputs]) for node in nodes]
        return [checker.wrap(k, node, thunk) for k, (node, thunk) in enumerate(zip(nodes, thunks))]


PREDEFINED["DebugMode"] = PREDEFINED["DEBUG_MODE"] = SharedMode(DebugMode)


def _structure(fgraph: FunctionGraph) -> list[tuple]:
    """The rewritten graph as comparable text: each node's op and where its inputs come from."""
    names: dict[Variable, str] = {v: f"in{i}" for i, v in enumerate(fgraph.inputs)}
    rows = []
    for k, node in enumerate(fgraph.toposort()):
        args = tuple(names.get(i) or f"{i.type}{{{i}}}" for i in node.inputs)
        rows.append((str(node.op), args))
        for j, out in enumerate(node.outputs):
            names[out] = f"n{k}.{j}"
    rows.append(("outputs", tuple(names.get(o) or str(o) for o in fgraph.outputs)))
    return rows


def _text(structure: list[tuple]) -> str:
    return "\n".join(f"  {op}({', '.join(args)})" for op, args in structure)


class _Checker:
    """The checks of one compiled Function. Per-call values live in a thread-local memo."""

    def __init__(self, mode: DebugMode, fn: Any):
        self.mode = mode
        self.fgraph = fn.maker.fgraph
        self.storage = fn.storage_map
        self.last = len(fn._nodes) - 1
        self.history = history_of(self.fgraph)
        # A graph no rewrite changed needs no comparison with itself (that would only compare
        # perform with the thunks again, which check_py_code governs).
        if self.history is not None and not self.history.replacements and \
                _structure(self.history.original) == _structure(self.fgraph):
            self.history = None
        self.local = threading.local()
        # infer_shape, asked once with placeholder lengths filled in on each call.
        self.shapes = {node: _symbolic_shapes(self.fgraph, node) for node in fn._nodes}

    def wrap(self, k: int, node: Apply, thunk: Callable) -> Callable:
        def checked() -> None:
            if k == 0:
                self.local.values = {v: reference.snapshot(self.storage[v][0])
                                     for v in self.fgraph.inputs}
            self.run(node, thunk)
            if k == self.last:
                values = self.local.values
                self.local.values = None
                self.check_rewrites(values)
        return checked

    # --------------------------------------------------------------- one node
    def run(self, node: Apply, thunk: Callable) -> None:
        values = self.local.values
        before = [self._value_of(v, values) for v in node.inputs]
        thunk()
        after = [self.storage[v][0] for v in node.inputs]
        results = [self.storage[v][0] for v in node.outputs]
        destroyed = {i for idxs in node.op.destroy_map.values() for i in idxs}
        for i, (old, now) in enumerate(zip(before, after)):
            if i not in destroyed and reference.difference(old, now) is not None:
                raise BadDestroyMap(self._message(
                    node, before, f"it changed input {i} ({node.inputs[i].describe()}), which its "
                    f"destroy_map {node.op.destroy_map} does not name: {reference.difference(old, now)}"),
                    node=node, idx=i, old_val=old, new_val=now)
        for k, result in enumerate(results):
            allowed = set(node.op.view_map.get(k, [])) | set(node.op.destroy_map.get(k, []))
            for i, now in enumerate(after):
                if i not in allowed and not isinstance(node.inputs[i], Constant) \
                        and _shares_memory(result, now):
                    raise BadViewMap(self._message(
                        node, before, f"output {k} shares memory with input {i} "
                        f"({node.inputs[i].describe()}), which its view_map {node.op.view_map} "
                        "does not name"), node=node, output_idx=k, in_alias_idx=[i])
            self._check_value(node, k, result, before)
        self._check_outputs_apart(node, before, results)
        if self.mode.check_py_code:
            self._check_perform(node, before, results)
        self._check_shapes(node, before, results)
        for out, result in zip(node.outputs, results):
            values[out] = reference.snapshot(result)

    def _check_outputs_apart(self, node: Apply, before: list, results: list) -> None:
        """Two outputs that later nodes both read may share memory only as views of one input
        the view_map names: otherwise an in-place op on one silently changes the other. (Theano's
        rule: outputs of the function alone, or one output nothing reads, may share.)"""
        views = node.op.view_map
        read = [any(client != "output" for client, _ in self.fgraph.clients.get(out, ()))
                for out in node.outputs]
        for k in range(len(results)):
            for j in range(k + 1, len(results)):
                declared = set(views.get(k, [])) & set(views.get(j, []))
                if read[k] and read[j] and not declared and _shares_memory(results[k], results[j]):
                    raise BadViewMap(self._message(
                        node, before, f"outputs {k} and {j} share memory, which its view_map "
                        f"{views} does not declare (as views of one input)"), node=node, output_idx=k,
                        out_alias_idx=[j])

    def _value_of(self, var: Variable, values: dict) -> Any:
        if var not in values:
            values[var] = reference.snapshot(self.storage[var][0])  # a constant
        return values[var]

    def _check_value(self, node: Apply, k: int, result: Any, before: list) -> None:
        var = node.outputs[k]
        problem = _type_problem(var, result)
        if problem is None and self.mode.check_isfinite:
            array = reference.host(result)
            if isinstance(array, np.ndarray) and array.dtype.kind in "fc" and \
                    not np.isfinite(array).all():
                problem = ("it holds NaN" if np.isnan(array).any() else "it holds inf") + \
                    " (DebugMode(check_isfinite=False) allows NaN and inf)"
        if problem is not None:
            raise InvalidValueError(self._message(node, before, f"output {k}: {problem}"), r=var, v=result)

    def _check_perform(self, node: Apply, before: list, results: list) -> None:
        storage: list[list] = [[None] for _ in node.outputs]
        perform_of(node)(node, [reference.snapshot(v) for v in before], storage)
        for k, (cell, result) in enumerate(zip(storage, results)):
            wrong = reference.difference(cell[0], result)
            if wrong is not None:
                raise BadThunkOutput(self._message(
                    node, before, f"output {k} of the backend's thunk differs from perform's "
                    f"(the reference, run on the same inputs into fresh storage): {wrong}"),
                    r=node.outputs[k], val1=cell[0], val2=result)
            strides = getattr(cell[0], "strides", None), getattr(result, "strides", None)
            if self.mode.require_matching_strides and strides[0] != strides[1]:
                text = self._message(node, before, f"output {k} has strides {strides[1]}; "
                                     f"perform's has {strides[0]}")
                if self.mode.require_matching_strides == 2:
                    raise BadThunkOutput(text)
                warnings.warn(text, stacklevel=2)

    def _check_shapes(self, node: Apply, before: list, results: list) -> None:
        found = self.shapes.get(node)
        if found is None:
            return
        placeholders, shapes = found
        memo: dict[Variable, Any] = dict(zip(node.inputs, before))
        for var, (i, d) in placeholders.items():
            memo[var] = np.int64(np.shape(reference.host(before[i]))[d])
        for k, (shape, result) in enumerate(zip(shapes, results)):
            if shape is None:
                continue
            try:
                expected = tuple(int(e) if isinstance(e, (int, np.integer)) else
                                 int(reference.evaluate([e], memo)[0]) for e in shape)
            except reference.MissingValue:
                continue
            actual = tuple(np.shape(reference.host(result)))
            if expected != actual:
                raise BadInferShape(self._message(
                    node, before, f"infer_shape gives output {k} the shape {expected}, but it "
                    f"has shape {actual}"))

    # ------------------------------------------------------ the whole call
    def check_rewrites(self, values: dict) -> None:
        if self.history is None:
            return
        for rep in self.history.replacements:
            old, new = reference.evaluate([rep.old, rep.new], values)
            wrong = reference.difference(old, new, allow_nonfinite_change=True)
            if wrong is not None:
                raise self._bad_rewrite(rep, wrong, old, new)
        before = self.history.original
        memo = {b: values[a] for a, b in zip(self.fgraph.inputs, before.inputs)}
        expected = reference.evaluate(before.outputs, memo)
        for k, (out, value) in enumerate(zip(self.fgraph.outputs, expected)):
            wrong = reference.difference(value, reference.evaluate([out], values)[0],
                                         allow_nonfinite_change=True)
            if wrong is not None:
                raise BadOptimization(f"output {k} of the rewritten graph ({out}) differs from the "
                                      f"graph before rewriting ({before.outputs[k]}): {wrong}",
                                      reason="the rewrites as a whole", old_r=before.outputs[k], new_r=out)

    def _bad_rewrite(self, rep: Any, wrong: str, old_val: Any, new_val: Any) -> DebugModeError:
        new_node = rep.new.owner
        old = rep.old.owner
        shapes = "" if old is None else "\n" + _inputs_text(old.inputs, None)
        user = self.history.origin_of(rep.old).describe()
        if _on_gpu(rep.new) and not _on_gpu(rep.old):
            while new_node is not None and type(new_node.op).__name__ == "HostFromGpu":
                new_node = new_node.inputs[0].owner  # the node computing on the device
            return BadThunkOutput(
                f"the GPU node {new_node} (placed by the rewrite {rep.reason}) gives a different "
                f"result from the CPU op it replaced, {old}, whose perform is the reference "
                f"(computing {user}): {wrong}{shapes}", r=rep.new, val1=old_val, val2=new_val)
        return BadOptimization(
            f"the rewrite {rep.reason} replaced {rep.old} (computed by {old}) with {rep.new} "
            f"(computed by {new_node}), computing {user}, and the two differ on this call: "
            f"{wrong}{shapes}", reason=rep.reason, old_r=rep.old, new_r=rep.new, old_r_val=old_val,
            new_r_val=new_val)

    def _message(self, node: Apply, inputs: list, problem: str) -> str:
        return (f"DebugMode: node {describe_node(self.fgraph, node)}: {problem}\n"
                + _inputs_text(node.inputs, inputs))


def _inputs_text(variables: list, values: list | None) -> str:
    lines = []
    for i, var in enumerate(variables):
        if values is None:
            lines.append(f"  input {i}: {var} ({getattr(var.type, 'describe', var.type.__str__)()})")
            continue
        value = values[i]
        lines.append(f"  input {i}: {var}, shape {getattr(value, 'shape', None)}, "
                     f"dtype {getattr(value, 'dtype', type(value).__name__)}")
    return "\n".join(lines)


def _symbolic_shapes(fgraph: FunctionGraph, node: Apply) -> tuple[dict, list] | None:
    """(placeholder lengths -> (input, dim), the outputs' shapes from infer_shape), or None."""
    placeholders: dict[Variable, tuple[int, int]] = {}
    input_shapes = []
    for i, var in enumerate(node.inputs):
        pattern = getattr(var.type, "broadcastable", None)
        if pattern is None:
            return None  # not an array: infer_shape has nothing to say
        entries = []
        for d, b in enumerate(pattern):
            if b:
                entries.append(1)
                continue
            length = TensorType("int64", ())(f"len{i}_{d}")
            placeholders[length] = (i, d)
            entries.append(length)
        input_shapes.append(tuple(entries))
    try:
        shapes = node.op.infer_shape(fgraph, node, input_shapes)
    except _INFER_FAILURES:
        return None
    if len(shapes) != len(node.outputs):
        return None
    return placeholders, [None if s is None else list(s) for s in shapes]


def _type_problem(var: Variable, value: Any) -> str | None:
    ttype = var.type
    if not (isinstance(ttype, TensorType) or type(ttype).__name__ == "GpuArrayType"):
        return None
    on_device = type(ttype).__name__ == "GpuArrayType"
    if on_device != (type(value).__name__ == "GpuArray") or \
            (not on_device and not isinstance(value, np.ndarray)):
        return f"a {type(value).__name__} for {ttype}"
    if value.dtype != np.dtype(ttype.dtype) or value.ndim != len(ttype.broadcastable):
        return f"{value.dtype} with {value.ndim} dimensions for {ttype}"
    for d, (b, n) in enumerate(zip(ttype.broadcastable, value.shape)):
        if b and n != 1:
            return f"shape {value.shape} for {ttype}, whose dimension {d} is broadcastable"
    return None


def _shares_memory(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.size > 0 and b.size > 0 and np.may_share_memory(a, b)
    buffer = getattr(a, "buffer", None)
    return buffer is not None and buffer is getattr(b, "buffer", None)


def _on_gpu(var: Variable) -> bool:
    return var.owner is not None and "Gpu" in type(var.owner.op).__name__
