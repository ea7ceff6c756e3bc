"""The Scan Op: a loop whose body is an inner graph, compiled once and run per step.

Outer inputs, in order: ``n_steps`` (int64 scalar); the sequences (whole
arrays; step ``t`` reads ``seq[t + tap - lo]`` for each of its taps, with ``lo
= min(taps, 0)``); the recurrent states' initial buffers (``m`` rows for taps
reaching ``m`` steps back); the carried states' initial values; the non-sequences.

Outer outputs, in order: one buffer per recurrent state (``m + n`` rows: the
initial rows, then one row per step, so each step reads earlier rows of the
same buffer); one array per output that is not fed back (``n`` rows); the last
value of each carried state (used for the updates of shared variables changed
inside the loop, whose history no one needs).

Inner inputs follow the same order: one variable per sequence tap, one per
state tap, one per carried state, one per non-sequence. Inner outputs: one per
state, one per plain output, one per carried state, then the stopping condition
when the loop is a do-while (``until``).
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.compile.function import function
from arignote.compile.io import In, Out
from arignote.config import config
from arignote.graph.basic import Apply, Op, Variable, _hashable, user_variable
from arignote.graph.traversal import ancestors
from arignote.scan_module.names import TheanoScanNames
from arignote.scan_module.shapes import scan_output_shapes
from arignote.scan_module.utils import equal_computations
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable
from arignote.tensor import math as tm


class Scan(TheanoScanNames, Op):
    """A loop over ``n_steps`` running the inner graph ``inner_inputs -> inner_outputs``.

    Two Scans are equal when their layouts and settings are and their inner graphs compute
    the same from corresponding inner inputs (Theano's rule), so equal loops over the same
    outer inputs merge into one node (whose name and mode are one of theirs).
    """

    __props__ = ("inner_inputs", "inner_outputs", "seq_taps", "state_taps", "n_nit", "n_carry",
                 "n_nonseq", "as_while", "truncate_gradient", "name", "mode", "kept_rows")

    def __init__(self, inner_inputs: Sequence[Variable], inner_outputs: Sequence[Variable],
                 seq_taps: Sequence[Sequence[int]], state_taps: Sequence[Sequence[int]],
                 n_nit: int, n_carry: int, n_nonseq: int, as_while: bool = False,
                 truncate_gradient: int = -1, name: str | None = None, mode: Any = None,
                 allow_gc: bool | None = None, profile: Any = None,
                 kept_rows: Sequence[int | None] | None = None):
        self.inner_inputs = tuple(inner_inputs)
        self.inner_outputs = tuple(inner_outputs)
        self.seq_taps = tuple(tuple(int(k) for k in taps) for taps in seq_taps)
        self.state_taps = tuple(tuple(int(k) for k in taps) for taps in state_taps)
        self.n_nit = n_nit
        self.n_carry = n_carry
        self.n_nonseq = n_nonseq
        self.as_while = as_while
        self.truncate_gradient = truncate_gradient
        self.name = name
        self.mode = mode
        self.allow_gc = allow_gc  # the inner function's allow_gc; None: config.allow_gc
        self.profile = profile  # function(profile=...) of the inner function
        for taps in self.state_taps:
            if not taps or max(taps) >= 0:
                raise ValueError(f"scan: the taps of a recurrent output must be negative, got {list(taps)}")
        # Per state and plain output: how many of its last rows the output keeps (None: all of
        # them); set by the scan_save_mem rewrite where the graph reads no others. A state's
        # buffer then holds that many rows and the steps write them round-robin.
        self.kept_rows = tuple(kept_rows) if kept_rows is not None else (None,) * (len(self.state_taps) + n_nit)
        least = [1 - min(taps) for taps in self.state_taps] + [1] * n_nit
        if len(self.kept_rows) != len(least) or any(k is not None and k < lo for k, lo in zip(self.kept_rows, least)):
            raise ValueError(f"scan: kept_rows {list(self.kept_rows)} must give, per state and plain output, "
                             f"None or at least {least}")
        n_in = sum(map(len, self.seq_taps)) + sum(map(len, self.state_taps)) + n_carry + n_nonseq
        n_out = len(self.state_taps) + n_nit + n_carry + int(as_while)
        if len(self.inner_inputs) != n_in or len(self.inner_outputs) != n_out:
            raise ValueError(f"scan: the inner graph has {len(self.inner_inputs)} inputs and "
                             f"{len(self.inner_outputs)} outputs; the loop layout needs {n_in} and {n_out}")
        self._fn = None
        self._idle: list = []  # inner functions no loop is running now
        self._compiling = threading.Lock()

    def __getstate__(self) -> dict:
        """The loop's definition; its inner functions are compiled again where it is loaded."""
        state = dict(super().__getstate__())
        del state["_fn"], state["_idle"], state["_compiling"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _fn=None, _idle=[], _compiling=threading.Lock())
        if "kept_rows" not in state:  # pickled before loops kept rows
            self.kept_rows = (None,) * (len(self.state_taps) + self.n_nit)

    def __str__(self) -> str:
        return f"Scan{{{self.name}}}" if self.name else "Scan"

    # What equality compares besides the inner graph (Theano's keys): a loop's name, mode and
    # allow_gc change how it is compiled and shown, not what it computes.
    _SETTINGS = ("seq_taps", "state_taps", "n_nit", "n_carry", "n_nonseq", "as_while", "truncate_gradient",
                 "profile", "kept_rows")

    def _settings(self) -> tuple:
        return tuple(getattr(self, p) for p in self._SETTINGS)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(self) is not type(other) or self._settings() != other._settings():
            return False
        mine, theirs = self.inner_inputs, other.inner_inputs
        return (len(mine) == len(theirs) and len(self.inner_outputs) == len(other.inner_outputs)
                and all(a.type == b.type for a, b in zip(mine, theirs))
                and equal_computations(self.inner_outputs, other.inner_outputs, mine, theirs))

    def __hash__(self) -> int:
        found = self.__dict__.get("_hash")
        if found is None:
            graph = (tuple(v.type for v in self.inner_inputs), tuple(v.type for v in self.inner_outputs))
            found = self.__dict__["_hash"] = hash((type(self), tuple(map(_hashable, self._settings())), graph))
        return found

    # ------------------------------------------------------------ layout
    @property
    def n_seqs(self) -> int:
        return len(self.seq_taps)

    @property
    def n_states(self) -> int:
        return len(self.state_taps)

    def split_outer_inputs(self, inputs: Sequence[Any]) -> tuple[Any, list, list, list, list]:
        """(n_steps, sequences, state buffers, carried states, non-sequences)."""
        a = 1 + self.n_seqs
        b = a + self.n_states
        c = b + self.n_carry
        return inputs[0], list(inputs[1:a]), list(inputs[a:b]), list(inputs[b:c]), list(inputs[c:])

    def split_inner_inputs(self) -> tuple[list[list], list[list], list, list]:
        """Inner inputs grouped: per sequence its taps' variables, per state its taps', carried, non-seqs."""
        rest = list(self.inner_inputs)
        seqs = []
        for taps in self.seq_taps:
            seqs.append(rest[:len(taps)])
            rest = rest[len(taps):]
        states = []
        for taps in self.state_taps:
            states.append(rest[:len(taps)])
            rest = rest[len(taps):]
        return seqs, states, rest[:self.n_carry], rest[self.n_carry:]

    # ------------------------------------------------------------ graph
    def make_node(self, n_steps: Any, *inputs: Any) -> Apply:
        n_steps = tm.cast(as_tensor_variable(n_steps), "int64")
        if n_steps.ndim != 0:
            raise TypeError(f"scan: n_steps must be a scalar, got {n_steps.type.describe()}")
        inputs = [as_tensor_variable(v) if not isinstance(v, Variable) else v for v in inputs]
        expected = self.n_seqs + self.n_states + self.n_carry + self.n_nonseq
        if len(inputs) != expected:
            raise TypeError(f"{self} takes n_steps and {expected} inputs, got {len(inputs)}")
        _, seqs, inits, carries, nonseqs = self.split_outer_inputs([n_steps] + inputs)
        in_seqs, in_states, in_carries, in_nonseqs = self.split_inner_inputs()
        for outer, inner_vars in zip(seqs, in_seqs):
            for inner in inner_vars:
                self._check_row(outer, inner, "sequence")
        for outer, inner_vars in zip(inits, in_states):
            for inner in inner_vars:
                self._check_row(outer, inner, "initial state")
        for outer, inner in zip(carries + nonseqs, in_carries + in_nonseqs):
            if outer.type != inner.type:
                raise TypeError(f"{self}: outer input {outer.describe()} is {outer.type}, but the inner "
                                f"graph expects {inner.type}")
        outs = self.inner_outputs
        for k, (outer, out) in enumerate(zip(inits + carries, outs[:self.n_states] + outs[
                self.n_states + self.n_nit:self.n_states + self.n_nit + self.n_carry])):
            if not self._is_array(outer.type):
                if out.type != outer.type:
                    raise TypeError(f"scan: the step updates {outer.describe()} ({outer.type}) to a "
                                    f"value of type {out.type}")
                continue
            want_ndim = outer.type.ndim - (k < self.n_states)
            if out.type.dtype != outer.type.dtype or out.type.ndim != want_ndim:
                raise TypeError(
                    f"scan: the step function returns {out.type.describe()} for the recurrent value "
                    f"whose initial value {outer.describe()} is {outer.type.describe()}"
                    + (" (one row per step)" if k < self.n_states else "")
                    + ": the two must have the same dtype and number of dimensions; cast the step's "
                    f"result with tensor.cast(..., {outer.type.dtype!r}) or change the initial value")
        outputs = []
        for init in inits:
            outputs.append(self._array_type(init.type, (False,) + init.type.broadcastable[1:])())
        for out in outs[self.n_states:self.n_states + self.n_nit]:
            outputs.append(self._array_type(out.type, (False,) + out.type.broadcastable)())
        for carry in carries:
            outputs.append(carry.type())
        return Apply(self, [n_steps] + inputs, outputs)

    def _check_row(self, outer: Variable, inner: Variable, what: str) -> None:
        """``inner`` must be the type of one row of ``outer``."""
        otype = outer.type
        if not self._is_array(otype) or otype.ndim < 1:
            raise TypeError(f"scan: the {what} {outer.describe()} must have a leading time dimension, "
                            f"got {getattr(otype, 'describe', lambda: str(otype))()}")
        row = self._array_type(otype, otype.broadcastable[1:])
        if row != inner.type:
            raise TypeError(f"scan: one step of the {what} {outer.describe()} is {row.describe()}, but "
                            f"the inner graph expects {inner.type.describe()}")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return scan_output_shapes(self, node, input_shapes)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Which outer outputs each outer input reaches through the steps (Theano's rule, so a
        cost that no step connects to an input gets DisconnectedInputError for it).

        A recurrent value read by later steps passes on what its own step reads. A state's
        initial rows sit in its buffer, but the user sees only the rows after them: they
        count as connected only when some step reads the state at all.
        """
        in_seqs, in_states, in_carries, in_nonseqs = self.split_inner_inputs()
        S, N = self.n_states, self.n_nit
        groups = [*in_seqs, *in_states, *([v] for v in in_carries), *([v] for v in in_nonseqs)]
        slot = {v: 1 + i for i, group in enumerate(groups) for v in group}
        first_state = 1 + self.n_seqs
        fed_by = {first_state + k: k for k in range(S)}  # outer slot -> inner output fed into it
        fed_by.update({first_state + S + c: S + N + c for c in range(self.n_carry)})
        reads = [{slot[v] for v in ancestors([out]) if v in slot} for out in self.inner_outputs]
        reached = [set(r) for r in reads[:len(node.outputs)]]
        changed = True
        while changed:
            changed = False
            for conn in reached:
                more = set().union(*(reached[fed_by[s]] for s in conn if s in fed_by)) - conn
                changed |= bool(more)
                conn |= more
        read_anywhere = set().union(*reads)
        for k in range(S):
            if first_state + k in read_anywhere:
                reached[k].add(first_state + k)
        for c in range(self.n_carry):  # no step run: the last value is the initial one
            reached[S + N + c].add(first_state + S + c)
        # n_steps (input 0, in no ``reached``) sets how many rows there are, not their values.
        return [[i in conn for conn in reached] for i in range(len(node.inputs))]

    # ------------------------------------------------------------ arrays
    # The loop's buffers are numpy arrays here; the GPU scan (backends/gpu/scan.py)
    # overrides these few primitives for device arrays and keeps the loop itself.
    @staticmethod
    def _is_array(t: Any) -> bool:
        return isinstance(t, TensorType)

    @staticmethod
    def _array_type(like: Any, broadcastable: Sequence[bool]) -> Any:
        """The type of an array of ``like``'s dtype (and device) with these dimensions."""
        return TensorType(like.dtype, broadcastable)

    @staticmethod
    def _empty(like: Any, shape: tuple, dtype: Any) -> Any:
        """A new buffer where ``like`` (a value or a type) lives."""
        return np.empty(shape, dtype=dtype)

    @staticmethod
    def _row(a: Any, i: int) -> Any:
        return a[i, ...]

    @staticmethod
    def _head(a: Any, k: int) -> Any:
        return a[:k]

    @staticmethod
    def _write(dst: Any, value: Any) -> None:
        dst[...] = value

    def _in_order(self, a: Any, start: int) -> Any:
        """The rows of a round-robin buffer, oldest (row ``start``) first: a new buffer, copied row
        by row with the primitives above (so the GPU loop does it on the device)."""
        length = a.shape[0]
        out = self._empty(a, a.shape, a.dtype)
        for i in range(length):
            self._write(self._row(out, i), self._row(a, (start + i) % length))
        return out

    def _finished(self, buf: Any, rows: int) -> Any:
        """The output of a buffer whose steps produced ``rows`` rows in all."""
        length = buf.shape[0]
        return self._head(buf, rows) if rows <= length else self._in_order(buf, rows % length)

    # ------------------------------------------------------------ running
    def inner_function(self) -> Any:
        """The inner function, compiled on first use and kept for every later step and call."""
        if self._fn is None:
            with self._compiling:
                if self._fn is None:
                    outs = self.inner_outputs
                    keep = self.n_states + self.n_nit
                    # Rows are copied into the output buffers at once, so the inner
                    # function may hand back its internal buffers; carried values live
                    # on into the next step and must be the loop's own.
                    specs = [Out(o, borrow=k < keep) for k, o in enumerate(outs)]
                    # The step's own in-place ops must not overwrite the loop's inputs
                    # (rows of sequences, states, non-sequences): they get copies.
                    inputs = [In(v, mutable=False) for v in self.inner_inputs]
                    with self._gc_flag():
                        fn = function(inputs, specs, mode=self.mode,
                                      on_unused_input="ignore", accept_inplace=True,
                                      profile=self.profile)
                    self._idle.append(fn)
                    self._fn = fn
        return self._fn

    def _gc_flag(self) -> Any:
        """The flags the inner function is linked under (its buffers are freed after each
        step, or kept for the next, as ``allow_gc`` says)."""
        if self.allow_gc is None:
            return contextlib.nullcontext()
        return config.change_flags(allow_gc=self.allow_gc)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        # The inner function hands back buffers its next call overwrites, so a loop
        # needs one to itself: loops of this op on several threads at once (from
        # functions sharing it) each take one, and a copy is made when none is idle.
        first = self.inner_function()
        try:
            fn = self._idle.pop()
        except IndexError:
            with self._gc_flag():
                fn = first.copy()
        try:
            self._loop(fn, node, inputs, output_storage)
        finally:
            self._idle.append(fn)

    def _loop(self, fn: Any, node: Apply, inputs: list, output_storage: list[list]) -> None:
        n_steps, seqs, inits, carries, nonseqs = self.split_outer_inputs(inputs)
        n = int(n_steps)
        if n < 0:
            raise ValueError(f"{self}: n_steps is {n}; it must be 0 or more (to run backwards, "
                             "pass go_backwards=True)")
        seq_reads = []
        for j, (seq, taps) in enumerate(zip(seqs, self.seq_taps)):
            lo, hi = min(min(taps), 0), max(max(taps), 0)
            if seq.shape[0] < n + hi - lo:
                raise ValueError(short_sequence(f"{self}: sequence {j} ({user_variable(node.inputs[1 + j]).describe()})",
                                                seq.shape[0], n, taps))
            seq_reads.append([(seq, k - lo) for k in taps])
        buffers = []
        for i, (init, taps) in enumerate(zip(inits, self.state_taps)):
            m = -min(taps)
            if init.shape[0] != m:
                raise ValueError(f"{self}: the initial value of recurrent output {i} has "
                                 f"{init.shape[0]} rows, but taps {list(taps)} need exactly {m}")
            kept = self.kept_rows[i]
            buf = self._empty(init, (m + n if kept is None else min(kept, m + n),) + init.shape[1:], init.dtype)
            self._write(self._head(buf, m), init)
            buffers.append(buf)
        nits: list[np.ndarray | None] = [None] * self.n_nit
        carried = list(carries)
        steps = n
        for t in range(n):
            args = [self._row(seq, t + offset) for reads in seq_reads for seq, offset in reads]
            for buf, taps in zip(buffers, self.state_taps):
                m = -min(taps)
                args.extend(self._row(buf, (m + t + k) % buf.shape[0]) for k in taps)
            try:
                results = fn(*args, *carried, *nonseqs)
            except Exception as err:
                _note_step(err, self, node, t)
                raise
            for i, buf in enumerate(buffers):
                row = results[i]
                if row.shape != buf.shape[1:]:
                    init = user_variable(node.inputs[1 + self.n_seqs + i]).describe()
                    raise ValueError(f"{self}: step {t} of recurrent output {i} has shape {row.shape}, "
                                     f"but the rows of its initial value {init} have shape "
                                     f"{buf.shape[1:]}: the step function must keep the shape of each "
                                     "recurrent output")
                self._write(self._row(buf, (-min(self.state_taps[i]) + t) % buf.shape[0]), row)
            for j in range(self.n_nit):
                row = results[self.n_states + j]
                if nits[j] is None:
                    kept = self.kept_rows[self.n_states + j]
                    nits[j] = self._empty(row, (n if kept is None else min(kept, n),) + row.shape, row.dtype)
                elif row.shape != nits[j].shape[1:]:
                    raise ValueError(f"{self}: step {t} of output {self.n_states + j} has shape "
                                     f"{row.shape}, but step 0 had {nits[j].shape[1:]}: every step "
                                     "must give the same shape")
                self._write(self._row(nits[j], t % nits[j].shape[0]), row)
            carried = results[self.n_states + self.n_nit:self.n_states + self.n_nit + self.n_carry]
            if self.as_while and results[-1]:
                steps = t + 1
                break
        outputs = [self._finished(buf, -min(taps) + steps)
                   for buf, taps in zip(buffers, self.state_taps)]
        for j, arr in enumerate(nits):
            if arr is None:
                var = node.outputs[self.n_states + j]
                arr = self._empty(var.type, (0,) * var.type.ndim, var.type.dtype)
            outputs.append(self._finished(arr, steps))
        outputs.extend(carried)
        for cell, value in zip(output_storage, outputs):
            cell[0] = value


def short_sequence(what: str, length: int, n: int, taps: Sequence[int]) -> str:
    """The error for a sequence too short for ``n`` steps at these taps."""
    need = n + max(max(taps), 0) - min(min(taps), 0)
    return (f"{what} has {length} entries, but {n} steps with taps {list(taps)} need {need}: pass a longer "
            "sequence or fewer n_steps")


class SequenceLengthCheck(Op):
    """``check(seq, n_steps)``: ``seq`` (a view), after checking it has the rows ``n_steps`` steps at
    ``taps`` read; stands for the loop's own check where a rewrite moved work on ``seq`` out of it."""

    __props__ = ("what", "taps")
    view_map = {0: [0]}

    def __init__(self, what: str, taps: Sequence[int]):
        self.what, self.taps = what, tuple(taps)

    def make_node(self, seq: Any, n_steps: Any) -> Apply:
        return Apply(self, [seq, as_tensor_variable(n_steps)], [seq.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        seq, n = inputs[0], int(inputs[1])
        if seq.shape[0] < n + max(max(self.taps), 0) - min(min(self.taps), 0):
            raise ValueError(short_sequence(self.what, seq.shape[0], n, self.taps))
        output_storage[0][0] = seq

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]


def _note_step(err: BaseException, op: Scan, node: Apply, t: int) -> None:
    """Say which step failed and which outer variable each input of the step stands for."""
    _, seqs, inits, carries, nonseqs = op.split_outer_inputs(node.inputs)
    in_seqs, in_states, in_carries, in_nonseqs = op.split_inner_inputs()
    pairs = [(v, "a row of", o) for o, vs in zip(seqs, in_seqs) for v in vs]
    pairs += [(v, "an earlier value of", o) for o, vs in zip(inits, in_states) for v in vs]
    pairs += [(v, "", o) for o, v in zip(carries + nonseqs, in_carries + in_nonseqs)]
    lines = [f"in step {t} of {op} (built at {node.outputs[0].tag.trace or '?'})"]
    for inner, what, outer in pairs:
        outer = user_variable(outer)
        if not what and inner.name and inner.name == outer.name:
            continue  # the step names it as the user did
        lines.append(f"  inside the step, {inner.describe()} is {what}{' ' if what else ''}"
                     f"{outer.describe()}")
    if hasattr(err, "add_note"):
        err.add_note("\n".join(lines))
