"""Profiles of compiled functions: ``function(..., profile=True)`` gives ``f.profile``.

A :class:`ProfileStats` (Theano's name and attributes) holds, for each
function compiled with it: the time of each node and the number of calls
(timed around each thunk by the generated call path, the device synchronised
after a GPU node so its time is its own), the time of whole calls, the
compile time split into rewriting (per phase), linking and kernel builds,
the bytes each transfer node moved, and the size of every intermediate value
(for the peak memory of a call; with ``config.profile_memory`` also their shapes,
for the memory profile of compile/memory.py). A function compiled without a profile runs
a call path with no timing in it at all. ``config.profile=True`` profiles
every function and prints every profile at exit.
"""
from __future__ import annotations

import atexit
import sys
import threading
import time
from functools import singledispatch
from typing import Any, TextIO
from collections.abc import Callable

import numpy as np

from arignote.config import config

# The transfer ops by class name (the GPU layer defines them): the way each moves data.
DIRECTIONS = {"GpuFromHost": "to the device", "HostFromGpu": "to the host",
              "GpuToGpu": "between devices"}

_registry: list[ProfileStats] = []
_registry_lock = threading.Lock()
_builds = threading.local()  # kernel builds of this thread: [seconds, count]


def kernel_builds() -> tuple[float, int]:
    """Seconds spent, and kernels prepared, by ``kernel_build`` in this thread so far."""
    totals = getattr(_builds, "totals", None)
    return (totals[0], totals[1]) if totals else (0.0, 0)


def kernel_build(build: Callable[[], Any], count: int = 1) -> Any:
    """Run ``build`` (``count`` kernel compiles, or their cache lookups) and count its time."""
    totals = getattr(_builds, "totals", None)
    if totals is None:
        totals = _builds.totals = [0.0, 0]
    start = time.perf_counter()
    try:
        return build()
    finally:
        totals[0] += time.perf_counter() - start
        totals[1] += count


@singledispatch
def synchronizer(var_type: Any) -> Callable[[], None] | None:
    """What waits for the device a value of ``var_type`` lives on (None: the host, no wait).
    The GPU layer registers its array type."""
    return None


def nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return value.nbytes
    size, dtype = getattr(value, "size", None), getattr(value, "dtype", None)
    return int(size) * dtype.itemsize if size is not None and dtype is not None else 0


class FunctionRecord:
    """What the call path of one profiled Function writes: plain lists it indexes."""

    def __init__(self, fn: Any):
        self.fn = fn
        self.nodes = list(fn._nodes)
        n = len(self.nodes)
        self.times = [0.0] * n
        self.calls = [0] * n
        self.call_time = [0.0]
        self.call_count = [0]
        self.build_time = [0.0]
        self.builds = [0]
        self.sizes: list[tuple] = [()] * n  # per node: (bytes, on the device) of each output
        memory = config.profile_memory
        self.shapes: list[list] | None = [[] for _ in range(n)] if memory else None
        self.stamps: list[int] | None = [-1] * n if memory else None  # the call each node last ran in
        self.memory_calls = [0]  # calls made, counted by the call path with profile_memory
        self.moved = {direction: [0, 0] for direction in DIRECTIONS.values()}  # [count, bytes]

    def forget(self) -> None:
        """Zero what the calls so far wrote (``profiling.ignore_first_call``: the first call's
        times include one-time work such as kernel builds); the call path keeps these lists."""
        for numbers in (self.times, self.calls, self.call_time, self.call_count, self.build_time,
                        self.builds, *self.moved.values()):
            numbers[:] = [0 * v for v in numbers]

    def sync(self, node: Any) -> Callable[[], None] | None:
        for var in node.outputs + node.inputs:
            wait = synchronizer(var.type)
            if wait is not None:
                return wait
        return None

    def recorder(self, k: int) -> Callable[[], None]:
        """What runs after thunk ``k``: its outputs' sizes (and, with ``config.profile_memory``
        when the function was made, their shapes and this call's number) written down."""
        node = self.nodes[k]
        cells = [self.fn.storage_map[v] for v in node.outputs]
        where = [synchronizer(v.type) is not None for v in node.outputs]  # on a device
        sizes = self.sizes
        moved = self.moved.get(DIRECTIONS.get(type(node.op).__name__))
        shapes, stamps, calls = self.shapes, self.stamps, self.memory_calls

        def record() -> None:
            found = tuple((nbytes(c[0]), w) for c, w in zip(cells, where))
            sizes[k] = found
            if moved is not None:
                moved[0] += 1
                moved[1] += found[0][0]

        def record_memory() -> None:
            record()
            shapes[k] = [getattr(c[0], "shape", None) for c in cells]
            stamps[k] = calls[0]
        return record if shapes is None else record_memory

    def memory_model(self) -> Any:
        """The memory model of this function's last call (compile/memory.py); None before one."""
        from arignote.compile.memory import Model
        if not any(self.sizes):
            return None
        ran = None
        if self.stamps is not None:
            last = max(self.stamps)
            ran = {k for k, stamp in enumerate(self.stamps) if stamp == last}
        return Model(self.fn, self.sizes, ran, self.shapes, _inner_peaks(self))


def _inner_peaks(record: FunctionRecord) -> dict[int, tuple[int, int]]:
    """Per node running an inner function that has a profile of its own (``scan(profile=)``):
    that function's peak (host, device) with its own gc, held while the node runs."""
    found = {}
    for k, node in enumerate(record.nodes):
        inner = getattr(node.op, "inner_function", None)
        if inner is None or not record.sizes[k]:
            continue
        profile = getattr(inner(), "profile", None)
        if profile is not None:
            peak = profile.peak_memory()
            found[k] = (peak["host"], peak["device"])
    return found


class ProfileStats:
    """Theano's profile: ``summary()`` prints it; the attributes hold the numbers.

    ``compile_time`` (the whole ``function()`` call), ``optimizer_time`` (its
    rewriting, per phase in ``rewrite_times``), ``linker_time``,
    ``kernel_build_time``/``kernel_builds`` (kernels compiled or loaded during
    compiles and calls: GPU kernels are built at ``function()`` time, a form only
    a call shows on that node's first call, then part of its node time too),
    ``fct_callcount``/``fct_call_time`` (whole calls), ``apply_time``/
    ``apply_callcount`` (per node), ``transfers`` (per call: count and bytes in
    each direction).

    The signature is Theano's; ``flag_time_thunks`` and ``gpu_checks`` are
    accepted and have no effect (every node is timed; transfers are counted).
    """

    def __init__(self, atexit_print: bool = True, flag_time_thunks: bool | None = None,
                 gpu_checks: bool = True, message: str | None = None):
        self.message = message
        self.compile_time = 0.0
        self.optimizer_time = 0.0
        self.rewrite_times: dict[str, float] = {}
        self.linker_time = 0.0
        self._compile_builds = [0.0, 0]
        self.records: list[FunctionRecord] = []
        self._lock = threading.Lock()
        if atexit_print:
            with _registry_lock:
                if not _registry:
                    atexit.register(_print_at_exit)
                _registry.append(self)

    # ------------------------------------------------------------ filling in
    def record(self, fn: Any) -> FunctionRecord:
        """A new record for Function ``fn``'s call path to write into."""
        found = FunctionRecord(fn)
        with self._lock:
            self.records.append(found)
        return found

    def add_compile(self, total: float, rewriting: float, phases: dict[str, float], linking: float,
                    builds: tuple[float, int]) -> None:
        with self._lock:
            self.compile_time += total
            self.optimizer_time += rewriting
            for phase, seconds in phases.items():
                self.rewrite_times[phase] = self.rewrite_times.get(phase, 0.0) + seconds
            self.linker_time += linking
            self._compile_builds[0] += builds[0]
            self._compile_builds[1] += builds[1]

    # --------------------------------------------------------------- numbers
    @property
    def fct_callcount(self) -> int:
        return sum(r.call_count[0] for r in self.records)

    @property
    def fct_call_time(self) -> float:
        return sum(r.call_time[0] for r in self.records)

    @property
    def apply_time(self) -> dict:
        return {node: r.times[k] for r in self.records for k, node in enumerate(r.nodes)}

    @property
    def apply_callcount(self) -> dict:
        return {node: r.calls[k] for r in self.records for k, node in enumerate(r.nodes)}

    @property
    def kernel_build_time(self) -> float:
        return self._compile_builds[0] + sum(r.build_time[0] for r in self.records)

    @property
    def kernel_builds(self) -> int:
        return self._compile_builds[1] + sum(r.builds[0] for r in self.records)

    @property
    def transfers(self) -> dict[str, tuple[float, float]]:
        """Per direction: (transfers, bytes) per call, averaged over the calls made."""
        calls = max(self.fct_callcount, 1)
        totals = {d: [0, 0] for d in DIRECTIONS.values()}
        for r in self.records:
            for d, (count, size) in r.moved.items():
                totals[d][0] += count
                totals[d][1] += size
        return {d: (count / calls, size / calls) for d, (count, size) in totals.items() if count}

    def class_time(self) -> dict[str, float]:
        return self._grouped(lambda node: type(node.op).__name__)

    def op_time(self) -> dict[str, float]:
        return self._grouped(lambda node: str(node.op))

    def class_callcount(self) -> dict[str, int]:
        return self._grouped(lambda node: type(node.op).__name__, self.apply_callcount)

    def op_callcount(self) -> dict[str, int]:
        return self._grouped(lambda node: str(node.op), self.apply_callcount)

    def class_nodes(self) -> dict[str, int]:
        return self._grouped(lambda node: type(node.op).__name__, dict.fromkeys(self.apply_time, 1))

    def op_nodes(self) -> dict[str, int]:
        return self._grouped(lambda node: str(node.op), dict.fromkeys(self.apply_time, 1))

    def _grouped(self, key: Callable, per_node: dict | None = None) -> dict[str, Any]:
        """``per_node`` (default: the time) summed over the nodes of each ``key``; Theano keyed
        the per-Op tables by the op, these by its text (ops that print alike are one row)."""
        groups: dict[str, Any] = {}
        for node, amount in (self.apply_time if per_node is None else per_node).items():
            groups[key(node)] = groups.get(key(node), 0) + amount
        return groups

    def compute_total_times(self) -> dict:
        """Per node: its time plus the total times of the nodes it reads (a loose upper bound on
        what removing it and its ancestors would save: an ancestor counts once per path)."""
        own = self.apply_time
        totals: dict = {}
        for node in own:
            stack = [node]  # an explicit stack: deep graphs
            while stack:
                top = stack[-1]
                pending = [i.owner for i in top.inputs if i.owner in own and i.owner not in totals]
                if pending:
                    stack.extend(pending)
                    continue
                stack.pop()
                totals[top] = own[top] + sum(totals[i.owner] for i in top.inputs if i.owner in own)
        return totals

    def peak_memory(self, allow_gc: bool | None = None) -> dict[str, int]:
        """Bytes of intermediate values alive at once during the last call, on the host and
        on the device: all of them when buffers are kept between calls (``allow_gc=False``),
        else each freed after its last reader, where the executor frees it (None: each
        function's own ``allow_gc``)."""
        peak = {"host": 0, "device": 0}
        for r in self.records:
            model = r.memory_model()
            if model is None:
                continue
            gc = model.fn.allow_gc if allow_gc is None else allow_gc
            found = model.run(model.executed(), model.gc_frees() if gc else None)[0]
            peak = {"host": max(peak["host"], found.host), "device": max(peak["device"], found.device)}
        return peak

    # -------------------------------------------------------------- printing
    def summary(self, file: TextIO | None = None, n_ops_to_print: int | None = None,
                n_apply_to_print: int | None = None) -> None:
        """Print the profile in Theano's layout: the function, then time per Op class,
        per Op and per node, each sorted by time (``config.profiling.n_ops`` and ``n_apply``
        rows by default); with ``config.profiling.debugprint``, then each function's graph."""
        self.summary_function(file)
        self.summary_class(file, n_ops_to_print)
        self.summary_ops(file, n_ops_to_print)
        self.summary_nodes(file, n_apply_to_print)
        if any(r.shapes is not None for r in self.records):  # config.profile_memory
            self.summary_memory(file, n_apply_to_print)
        if config.profiling.debugprint:  # each function's graph, with its nodes' times
            from arignote.printing import debugprint
            for fn in dict.fromkeys(r.fn for r in self.records):
                debugprint(fn, print_type=True, file=_out(file))

    # Theano's parts of the summary, each printable alone (``N``: rows; default the flags').
    def summary_function(self, file: TextIO | None = None) -> None:
        _out(file).write(self._summary_function() + "\n")

    def summary_class(self, file: TextIO | None = None, N: int | None = None) -> None:
        _out(file).write(_table("Class", "<Class name>", self._rows(lambda n: type(n.op).__name__),
                                sum(self.apply_time.values()), _rows_to_print(N, "n_ops"), True) + "\n")

    def summary_ops(self, file: TextIO | None = None, N: int | None = None) -> None:
        _out(file).write(_table("Ops", "<Op name>", self._rows(lambda n: str(n.op)),
                                sum(self.apply_time.values()), _rows_to_print(N, "n_ops"), True) + "\n")

    def summary_nodes(self, file: TextIO | None = None, N: int | None = None) -> None:
        _out(file).write(_table("Apply", "<Apply name>", self._rows(lambda n: n, by_node=True),
                                sum(self.apply_time.values()), _rows_to_print(N, "n_apply"), False) + "\n")

    def memory_report(self, min_peak: bool | None = None) -> Any:
        """The memory profile's figures (compile/memory.py ``Report``; None before a call);
        ``min_peak``: also search the node orders (None: ``profiling.min_peak_memory``)."""
        from arignote.compile.memory import memory_report
        search = config.profiling.min_peak_memory if min_peak is None else min_peak
        return memory_report([r for r in self.records if r.shapes is not None], search)

    def summary_memory(self, file: TextIO | None = None, N: int | None = None) -> None:
        """Theano's memory profile (functions made with ``config.profile_memory``): the peaks
        with gc, without, without in-place ops, the minimum over node orders
        (``profiling.min_peak_memory``), what is held at the peak and the largest nodes."""
        from arignote.compile.memory import summary_memory
        summary_memory([r for r in self.records if r.shapes is not None], _out(file),
                       _rows_to_print(N, "n_apply"))

    def _summary_function(self) -> str:
        calls, call_time = self.fct_callcount, self.fct_call_time
        thunks = sum(self.apply_time.values())
        share = f" ({100 * thunks / call_time:.1f}%)" if call_time else ""
        lines = ["Function profiling", "==================", f"  Message: {self.message}",
                 f"  Time in {calls} calls to Function.__call__: {call_time:e}s",
                 f"  Time in thunks: {thunks:e}s{share}",
                 f"  Total compile time: {self.compile_time:e}s",
                 f"    Rewriting time: {self.optimizer_time:e}s"]
        for phase, seconds in self.rewrite_times.items():
            lines.append(f"      {phase}: {seconds:e}s")
        lines.append(f"    Linker time: {self.linker_time:e}s")
        lines.append(f"    Kernel builds: {self.kernel_builds} kernels prepared in "
                     f"{self.kernel_build_time:e}s (at function() time, or on the first call of a node "
                     "needing a form its types did not predict, within its time)")
        moved = self.transfers
        text = ", ".join(f"{count:g} {direction} ({format_bytes(size)})"
                         for direction, (count, size) in moved.items()) or "none"
        lines.append(f"  Transfers per call: {text}")
        kept, freed = self.peak_memory(False), self.peak_memory(True)
        lines.append(f"  Peak memory of intermediates: host {format_bytes(kept['host'])}, device "
                     f"{format_bytes(kept['device'])} with allow_gc=False (kept between calls); "
                     f"host {format_bytes(freed['host'])}, device {format_bytes(freed['device'])} with "
                     "allow_gc=True")
        return "\n".join(lines) + "\n"

    def _rows(self, key: Callable, by_node: bool = False) -> list[tuple]:
        """(seconds, calls, nodes, where, label) per group, slowest first."""
        groups: dict[Any, list] = {}
        for r in self.records:
            for k, node in enumerate(r.nodes):
                entry = groups.setdefault(key(node), [0.0, 0, 0, _where(node), None])
                entry[0] += r.times[k]
                entry[1] += r.calls[k]
                entry[2] += 1
                entry[4] = f"{k:4d}   {node}" if by_node else str(key(node))
        return sorted((tuple(v) for v in groups.values()), key=lambda row: -row[0])

    def __repr__(self) -> str:
        return f"<ProfileStats {self.message!r}: {self.fct_callcount} calls>"


def _out(file: TextIO | None) -> TextIO:
    return sys.stderr if file is None else file


def _rows_to_print(n: int | None, flag: str) -> int:
    return getattr(config.profiling, flag) if n is None else n


def _where(node: Any) -> str:
    name = type(node.op).__name__
    if name in DIRECTIONS:
        return "transfer"
    return "gpu" if name.startswith("Gpu") else "cpu"


def _table(title: str, name: str, rows: list[tuple], total: float, limit: int, grouped: bool) -> str:
    head = ("<% time> <sum %> <apply time> <time per call> <type> <#call> <#apply> " if grouped
            else "<% time> <sum %> <apply time> <time per call> <type> <#call> <id> ")
    lines = [title, "-" * len(title), head + name]
    running = 0.0
    for seconds, calls, n_nodes, where, label in rows[:limit]:
        share = 100 * seconds / total if total else 0.0
        running += share
        per_call = seconds / calls if calls else 0.0
        count = f"{calls:7d} {n_nodes:8d}   " if grouped else f"{calls:7d} "
        lines.append(f"  {share:5.1f}%   {running:5.1f}%   {seconds:9.3f}s   {per_call:10.2e}s "
                     f"{where:>8} {count}{label}")
    rest = rows[limit:]
    if rest:
        seconds = sum(r[0] for r in rest)
        lines.append(f"   ... (remaining {len(rest)} account for "
                     f"{100 * seconds / total if total else 0:.2f}%({seconds:.2f}s) of the runtime)")
    return "\n".join(lines) + "\n"


def format_bytes(n: float) -> str:
    """``1.6 MB``, ``400 B``: sizes as explain and summary print them."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def _print_at_exit() -> None:
    if not config.profile:
        return
    with _registry_lock:
        profiles = [p for p in _registry if p.fct_callcount or p.compile_time > 1]
    ordered = sorted(profiles, key=lambda p: -(p.compile_time + p.fct_call_time))
    where = config.profiling.destination
    if where in ("stderr", "stdout"):
        for profile in ordered:
            profile.summary(file=getattr(sys, where))
        return
    with open(where, "a") as out:
        for profile in ordered:
            profile.summary(file=out)
