"""Record a run and check that a second run repeats it (Theano's ``tests.record``).

Non-determinism (a kernel that sums in another order, a stray random draw) shows as a
different value somewhere in a run. ``RecordMode(Record(file, replay=False))`` writes
one line per event of every call of its functions: the call's inputs, then each node's
op, input values and output values, values as SHA-256 digests. A second run under
``RecordMode(Record(file, replay=True))`` computes the same lines and compares each with
the record as it goes: the first line that differs raises ``MismatchError`` naming the
function, the node and both lines. A program may write its own lines
(``record.handle_line``) between calls to mark where it is; ``disturb_mem()`` between
the steps of building a graph moves objects in memory, so that a result depending on
where they sit (an order taken from ids) differs between runs and the replay catches it.
"""
from __future__ import annotations

import hashlib
import time
from typing import IO, Any

import numpy as np

from arignote.compile.linkers import Instruments, Linker, Thunk
from arignote.compile.mode import Mode
from arignote.graph.basic import Apply

__all__ = ["MismatchError", "Record", "RecordMode", "hex_digest", "disturb_mem"]

_ballast: list[list[int]] = []


class MismatchError(Exception):
    """A replayed run wrote a line other than the one the record holds there."""


def _shown(line: str) -> str:
    return repr(line if len(line) <= 100 else line[:100] + "...")


class Record:
    """A sequence of lines: written to ``file_object`` (or a new file at ``file_path``) when
    recording, read back from it and compared line by line when ``replay`` is True."""

    def __init__(self, file_object: IO[str] | None = None, file_path: str | None = None,
                 replay: bool = False):
        if file_object is None and file_path is None:
            raise ValueError("Record: give the file_object to write the record to (or to read it "
                             "from with replay=True), or a file_path")
        self.replay = replay
        self.file_path = file_path
        self.f = file_object if file_object is not None else open(file_path, "r" if replay else "w")

    def handle_line(self, line: str) -> None:
        """Write ``line`` (one line, ending in a newline), or, replaying, check that it is
        the record's next line."""
        if not line.endswith("\n") or "\n" in line[:-1]:
            raise ValueError(f"Record.handle_line takes one line ending in a newline, got {line!r}")
        if not self.replay:
            self.f.write(line)
            return
        recorded = self.f.readline()
        if recorded != line:
            was = f"the record has {_shown(recorded)}" if recorded else "the record ends there"
            raise MismatchError(f"replay differs from the record: this run wrote {_shown(line)}, {was}")


def hex_digest(value: Any) -> str:
    """SHA-256 of a value: an array's dtype, shape and contents (a sparse matrix's parts),
    else its repr."""
    digest = hashlib.sha256()
    if hasattr(value, "tocsr") and hasattr(value, "indptr"):  # scipy.sparse, in its own format
        digest.update(f"{value.format}{value.shape}".encode())
        for part in (value.data, value.indices, value.indptr):
            digest.update(np.ascontiguousarray(part).tobytes())
    elif isinstance(value, (np.ndarray, np.generic)):
        array = np.ascontiguousarray(value)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    else:
        digest.update(repr(value).encode())
    return digest.hexdigest()


class RecordMode(Mode):
    """``RecordMode(record)`` (or ``RecordMode(file_object=..., replay=...)``, a Record's
    arguments): ``fast_run`` rewrites, and every call of its functions is recorded or, with
    a replaying record, checked. The lines name each function: its ``name``, by default the
    file and line of its ``function()`` call, which a rerun of the program repeats."""

    def __init__(self, record: Record | None = None, **kwargs: Any):
        if record is None:
            record = Record(**kwargs)
        elif kwargs:
            raise TypeError(f"RecordMode: give a Record or the arguments to make one, not both "
                            f"(got {sorted(kwargs)})")
        super().__init__(_RecordingLinker(), optimizer="fast_run", name="RecordMode")
        self.set_record(record)

    def set_record(self, record: Record) -> None:
        """Record into (or replay from) ``record`` from now on."""
        self.record = record
        self.linker.record = record


class _RecordingLinker(Linker):
    """The linker of a RecordMode: each call's inputs, then each node, as lines."""

    record: Record

    def instrument(self, fn: Any, nodes: list[Apply], thunks: list[Thunk]) -> Instruments:
        name = fn.name
        storage = fn.storage_map
        input_cells = [storage[v] for v in fn.maker.fgraph.inputs]
        announced = [False]

        def start() -> None:
            if not announced[0]:
                self._write(f"Function {name} has {len(nodes)} nodes.", name)
                announced[0] = True
            self._write(f"Function {name} called; inputs: {_digests(input_cells)}", name)
        watched = [self._watched(name, k, node, thunk, [storage[v] for v in node.inputs],
                                 [storage[v] for v in node.outputs])
                   for k, (node, thunk) in enumerate(zip(nodes, thunks))]
        return watched, {}, [start]

    def _watched(self, name: str, k: int, node: Apply, thunk: Thunk, inputs: list[list],
                 outputs: list[list]) -> Thunk:
        where = f"node {k} ({node.op})"

        def watched() -> None:
            self._write(f"Function {name} node {k}: {node.op}; inputs: {_digests(inputs)}", name, where)
            thunk()
            self._write(f"Function {name} node {k} outputs: {_digests(outputs)}", name, where)
        return watched

    def _write(self, line: str, name: str, where: str = "the start of a call") -> None:
        try:
            self.record.handle_line(line + "\n")
        except MismatchError as err:
            raise MismatchError(f"non-determinism, or another program: function {name!r} at {where}: "
                                f"{err}") from err


def _digests(cells: list[list]) -> str:
    return " ".join(hex_digest(cell[0]) for cell in cells)


def disturb_mem() -> None:
    """Hold a clock-dependent number of small lists (up to a thousand, replacing the last
    call's), so objects made next land at addresses that change from run to run."""
    micros = time.time_ns() // 1000 % 1_000_000
    _ballast[:] = [[0] * (micros // 1000) for _ in range(micros % 1000)]
