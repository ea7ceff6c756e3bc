"""The memory profile: what a compiled function's intermediate values held during its last
profiled call, worked out from the sizes the call path recorded (compile/profiling.py).

A node's output owns new memory unless its op declares it a view (``view_map``) or an
in-place result (``destroy_map``) of an input: then it holds the memory of that input's
owner, which stays alive while any value holding it does (Python's reference counting).
Values are freed where the executor frees them: with ``allow_gc`` right after their last
reader (compile/lifetimes.py), without it never (kept between calls for reuse). The graph's
inputs, constants and shared values are the caller's memory and are not counted.

``min_peak`` searches the valid node orders for the lowest peak with gc, exactly unless it
meets its bound: it stops after ``MIN_PEAK_WORK`` (each node it tries counts the nodes ready
then) and does not start on more than ``MIN_PEAK_NODES`` nodes, giving bounds instead (a big
graph never makes the summary hang).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from arignote.compile.lazy import Branch
from arignote.compile.lifetimes import free_points
from arignote.config import config
from arignote.graph.basic import Apply, Variable

MIN_PEAK_WORK = 1_000_000  # the minimum-peak search's bound: nodes it may try, times the nodes ready then
MIN_PEAK_NODES = 4096  # past this many nodes the search is not tried (bounds only)
N_ALIVE = 5  # values listed as held at the peak


@dataclass
class Peak:
    """A run's peak bytes (host, device, both at once) and where the total peaked."""

    host: int = 0
    device: int = 0
    total: int = 0
    step: int = -1  # position in the order of the node at whose run the total peaked


class Model:
    """One function's nodes with the sizes (bytes, on the device) its last call recorded."""

    def __init__(self, fn: Any, sizes: Sequence[tuple], ran: set[int] | None = None,
                 shapes: Sequence[list] | None = None, transient: dict[int, tuple[int, int]] | None = None):
        self.fn = fn
        self.nodes: list[Apply] = list(fn._nodes)
        self.ran = set(range(len(self.nodes))) if ran is None else ran
        self.sizes = [tuple(sizes[k]) if k in self.ran else () for k in range(len(self.nodes))]
        self.known = [tuple(found) for found in sizes]  # with the sizes of earlier calls' nodes
        self._shapes = shapes
        self.outputs = set(fn.maker.fgraph.outputs)
        self.transient = transient or {}

    # ------------------------------------------------------------------ orders
    def executed(self) -> list[int]:
        """The last call's thunk order: the lazy schedule's, only the nodes that ran."""
        return [k for k in _flat(self.fn._schedule) if k in self.ran]

    def gc_frees(self, lazy: bool = True) -> dict[int, list[Variable]]:
        """Where the executor frees each value with allow_gc (``lazy=False``: a linker that
        runs every node in order, Theano's c|py linkers)."""
        schedule = self.fn._schedule if lazy else list(range(len(self.nodes)))
        return free_points(self.nodes, schedule, self.outputs)

    # ------------------------------------------------------------------ sizes
    def shapes(self, k: int) -> list:
        """The shapes of node ``k``'s outputs in the last call it ran (None: not an array)."""
        return list(self._shapes[k]) if self._shapes is not None else []

    def output(self, k: int, j: int, every: bool = False) -> tuple[int, bool]:
        """(bytes, on the device) of output ``j`` of node ``k`` in the last call (``every``: in
        the last call that ran the node, for runs of every node)."""
        found = (self.known if every else self.sizes)[k]
        return found[j] if j < len(found) else (0, False)

    def aliased(self, node: Apply, j: int, inplace: bool = True) -> list[Variable] | None:
        """The inputs output ``j`` of ``node`` holds the memory of (None: it owns its own);
        ``inplace=False`` counts in-place results as new memory (optimizer_excluding=inplace)."""
        linked = list(node.op.view_map.get(j, []))
        if inplace:
            linked += node.op.destroy_map.get(j, [])
        return [node.inputs[i] for i in linked] if linked else None

    def code(self, node: Apply, j: int) -> str:
        """Theano's letter for output ``j``: c(reated), i(n place) or v(iew)."""
        return "i" if j in node.op.destroy_map else "v" if j in node.op.view_map else "c"

    # ------------------------------------------------------------------- runs
    def run(self, order: Sequence[int], frees: dict | None, inplace: bool = True,
            stop: int | None = None, every: bool = False) -> tuple[Peak, dict]:
        """Peak bytes over ``order`` (``frees``: values freed after each node, None: nothing
        freed; ``every``: sizes as ``output`` says); with ``stop``, also the memory owners
        alive at that step (owner -> bytes)."""
        holders: dict[Variable, int] = {}
        size_of: dict[Variable, tuple[int, bool]] = {}
        cell_roots: dict[Variable, tuple] = {}
        current = [0, 0]
        peak = Peak()
        alive: dict[Variable, int] = {}
        for step, k in enumerate(order):
            node = self.nodes[k]
            for j, out in enumerate(node.outputs):
                linked = self.aliased(node, j, inplace)
                if linked is None:
                    size_of[out] = found = self.output(k, j, every)
                    holders[out] = 1
                    cell_roots[out] = (out,)
                    current[found[1]] += found[0]
                    continue
                roots = tuple(dict.fromkeys(r for v in linked for r in cell_roots.get(v, ())))
                for r in roots:
                    holders[r] += 1
                cell_roots[out] = roots
            extra = self.transient.get(k, (0, 0))
            host, device = current[0] + extra[0], current[1] + extra[1]
            peak.host, peak.device = max(peak.host, host), max(peak.device, device)
            if host + device > peak.total:
                peak.total, peak.step = host + device, step
            if step == stop:
                alive = {r: size_of[r][0] for r, n in holders.items() if n}
            for var in (frees or {}).get(k, ()):
                for r in cell_roots.pop(var, ()):
                    holders[r] -= 1
                    if not holders[r]:
                        current[size_of[r][1]] -= size_of[r][0]
        return peak, alive

    def saved(self, order: Sequence[int]) -> tuple[int, int]:
        """Bytes of the outputs declared views, and in-place results, over ``order``."""
        views = inplace = 0
        for k in order:
            node = self.nodes[k]
            for j in range(len(node.outputs)):
                size = self.output(k, j)[0]
                if j in node.op.destroy_map:
                    inplace += size
                elif j in node.op.view_map:
                    views += size
        return views, inplace


def _flat(schedule: list) -> list[int]:
    order: list[int] = []
    for item in schedule:
        if isinstance(item, Branch):
            order += _flat(item.then) + _flat(item.orelse) + [item.index]
        else:
            order.append(item)
    return order


# ------------------------------------------------------------------ minimum peak
@dataclass
class MinPeak:
    low: int
    high: int
    exact: bool
    steps: int
    seconds: float
    why: str = ""  # why it is not exact


def min_peak(model: Model, budget: int = MIN_PEAK_WORK) -> MinPeak:
    """The lowest peak (host and device together) over every order of the nodes that ran
    that respects their dependencies (inputs, and a node that overwrites a value after the
    value's other readers: ``fgraph.orderings()``), with gc after each value's last reader.

    A breadth-first search over the sets of finished nodes (what is alive depends only on
    that set), keeping the lowest peak that reaches each; past ``budget`` (each node tried
    costs the number of nodes then ready) it stops and gives bounds: no order peaks below
    the largest node's inputs and outputs at once, and the executed order is one order."""
    start = time.perf_counter()
    nodes = model.executed()
    index = {k: i for i, k in enumerate(nodes)}
    producer = {out: index[k] for k in nodes for out in model.nodes[k].outputs}
    n = len(nodes)
    owned: dict[Variable, int] = {}  # memory owner -> bytes
    roots: dict[Variable, tuple] = {}
    for k in nodes:
        node = model.nodes[k]
        for j, out in enumerate(node.outputs):
            linked = model.aliased(node, j)
            if linked is None:
                owned[out] = model.output(k, j)[0]
                roots[out] = (out,)
            else:
                roots[out] = tuple(dict.fromkeys(r for v in linked for r in roots.get(v, ())))
    created = [sum(owned.get(out, 0) for out in model.nodes[k].outputs) for k in nodes]
    reads = [{r for var in model.nodes[k].inputs for r in roots.get(var, ())} for k in nodes]
    extra = [sum(model.transient.get(k, (0, 0))) for k in nodes]
    low = max((created[i] + extra[i] + sum(owned[r] for r in reads[i]) for i in range(n)), default=0)
    if len(nodes) > MIN_PEAK_NODES or not budget:
        return MinPeak(low, model.run(nodes, model.gc_frees())[0].total, False, 0, time.perf_counter() - start,
                       f"not searched: {len(nodes)} nodes, more than {MIN_PEAK_NODES}")
    kept = {r for v in model.outputs for r in roots.get(v, ())}
    needers = dict.fromkeys(owned, 0)  # owner -> bit mask of the nodes reading a holder of it
    preds, succs = [0] * n, [set() for _ in range(n)]
    position = {model.nodes[k]: i for i, k in enumerate(nodes)}
    orderings = model.fn.maker.fgraph.orderings()  # an in-place node after the other readers
    for i, k in enumerate(nodes):
        node = model.nodes[k]
        before = {producer[v] for v in node.inputs if v in producer}
        before |= {position[j] for j in orderings.get(node, ()) if j in position}
        for j in before:
            preds[i] |= 1 << j
            succs[j].add(i)
        for r in reads[i]:
            needers[r] |= 1 << i
    # what running node i may free: what it reads, and what it makes that nothing reads
    touched = [reads[i] | {o for o in model.nodes[k].outputs if o in owned} for i, k in enumerate(nodes)]
    first = [i for i in range(n) if not preds[i]]
    level: dict[int, tuple[int, int, list[int]]] = {0: (0, 0, first)}  # done -> peak, alive, ready
    steps = work = 0
    for _ in range(n):
        following: dict[int, tuple[int, int, list[int]]] = {}
        for done, (peak, alive, ready) in level.items():
            for i in ready:
                steps += 1
                work += len(ready)
                if work > budget:
                    high = model.run(nodes, model.gc_frees())[0].total
                    return MinPeak(low, high, False, steps - 1, time.perf_counter() - start,
                                   f"the search stopped at its bound, {budget} nodes tried each counting "
                                   "the nodes then ready")
                now = done | 1 << i
                step_peak = max(peak, alive + created[i] + extra[i])
                known = following.get(now)
                if known is not None:
                    if step_peak < known[0]:
                        following[now] = (step_peak, known[1], known[2])
                    continue
                freed = sum(owned[r] for r in touched[i] if r not in kept and not needers[r] & ~now)
                opened = [s for s in succs[i] if not preds[s] & ~now]
                following[now] = (step_peak, alive + created[i] - freed, [r for r in ready if r != i] + opened)
        level = following
    best = min((peak for peak, _, _ in level.values()), default=0)
    return MinPeak(best, best, True, steps, time.perf_counter() - start)


# ------------------------------------------------------------------- the report
def _kb(n: int) -> int:
    return int(round(n / 1024.0))


@dataclass
class Report:
    """The memory profile's figures, the max over the functions of a profile: peaks (outside:
    the nodes the last call ran; ``*_every``: every node run in order, a non-lazy linker),
    with each function's own ``allow_gc`` (``current``), that without in-place ops
    (``no_inplace``), with gc (``gc``) and without (``no_gc``); the bytes of outputs declared
    views and in-place results; the minimum peak over node orders (when asked for); what is
    held at the highest peak (owner -> bytes, the model, the node then running)."""

    current: Peak
    current_every: Peak
    no_inplace: Peak
    no_inplace_every: Peak
    gc: Peak
    gc_every: Peak
    no_gc: Peak
    views: int
    inplace: int
    min_peak: MinPeak | None
    held: tuple[int, Model, dict, int] | None
    rows: list[tuple[Model, int]]
    settings: list[str]


def memory_report(records: list, with_min_peak: bool = False) -> Report | None:
    """The figures of ``records``' last calls (None before any call)."""
    models = [m for m in (r.memory_model() for r in records) if m is not None]
    if not models:
        return None
    runs: dict[str, list[Peak]] = {}
    held: tuple[int, Model, dict, int] | None = None
    views = inplace = 0
    rows: list[tuple[Model, int]] = []
    for m in models:
        order, every = m.executed(), list(range(len(m.nodes)))
        lazy_frees, flat_frees = m.gc_frees(), m.gc_frees(lazy=False)
        mine = (lazy_frees, flat_frees) if m.fn.allow_gc else (None, None)
        for name, peak in (("current", m.run(order, mine[0])[0]),
                           ("current_every", m.run(every, mine[1], every=True)[0]),
                           ("no_inplace", m.run(order, mine[0], False)[0]),
                           ("no_inplace_every", m.run(every, mine[1], False, every=True)[0]),
                           ("gc", m.run(order, lazy_frees)[0]),
                           ("gc_every", m.run(every, flat_frees, every=True)[0]),
                           ("no_gc", m.run(order, None)[0])):
            runs.setdefault(name, []).append(peak)
        peak = runs["current"][-1]
        if peak.step >= 0 and (held is None or peak.total > held[0]):
            held = (peak.total, m, m.run(order, mine[0], stop=peak.step)[1], order[peak.step])
        saved = m.saved(order)
        views, inplace = max(views, saved[0]), max(inplace, saved[1])
        rows += [(m, k) for k in order]
    found = None
    if with_min_peak:
        each = [min_peak(m) for m in models]
        found = MinPeak(max(f.low for f in each), max(f.high for f in each), all(f.exact for f in each),
                        sum(f.steps for f in each), sum(f.seconds for f in each),
                        "; ".join(dict.fromkeys(f.why for f in each if f.why)))
    settings = sorted({"allow_gc=True" if m.fn.allow_gc else "allow_gc=False" for m in models})
    return Report(**{name: _most(peaks) for name, peaks in runs.items()}, views=views, inplace=inplace,
                  min_peak=found, held=held, rows=rows, settings=settings)


def peak_text(fn: Any) -> str | None:
    """One line for ``explain(fn)``: the peak of ``fn``'s last profiled call (with its own
    allow_gc), the node then running and the largest value then held; None without one."""
    from arignote.compile.profiling import format_bytes
    record = getattr(fn, "_profile_record", None)
    model = record.memory_model() if record is not None else None
    if model is None:
        return None
    order = model.executed()
    frees = model.gc_frees() if fn.allow_gc else None
    peak = model.run(order, frees)[0]
    if peak.step < 0:
        return None
    at = order[peak.step]
    alive = model.run(order, frees, stop=peak.step)[1]
    text = (f"memory (last profiled call, allow_gc={fn.allow_gc}): peak of intermediates "
            f"{format_bytes(peak.host)} on the host, {format_bytes(peak.device)} on the device, "
            f"while node {at} ran ({model.nodes[at]})")
    if alive:
        var, size = max(alive.items(), key=lambda item: item[1])
        text += f"; the largest value then held: {var} ({format_bytes(size)}, made by node {model.nodes.index(var.owner)})"
    return text


def _most(peaks: list[Peak]) -> Peak:
    return Peak(max(p.host for p in peaks), max(p.device for p in peaks), max(p.total for p in peaks))


def summary_memory(records: list, file: TextIO, n_nodes: int) -> None:
    """Print the memory profile of ``records`` in Theano's layout, then what views, in-place
    ops and gc save, what is held at the peak, and the nodes with the largest outputs."""
    report = memory_report(records, config.profiling.min_peak_memory)
    if report is None:
        return
    several = len({id(m) for m, _ in report.rows}) > 1
    lines = ["Memory Profile" + (" (the max over the functions of this profile)" if several else ""),
             "(Intermediate values only: the inputs, constants and shared values are not counted;",
             " in brackets: every node run in order, as a linker with lazy=False does; outside: the",
             " nodes the last call ran)", "---",
             f"    Max peak memory with current setting ({', '.join(report.settings)})",
             *_pair_lines(report.current, report.current_every),
             "    Max peak memory with current setting and Theano flag optimizer_excluding=inplace",
             *_pair_lines(report.no_inplace, report.no_inplace_every),
             "    Max peak memory if allow_gc=True (each value freed after its last reader)",
             *_pair_lines(report.gc, report.gc_every),
             "    Max peak memory if allow_gc=False (every value kept between calls)",
             *_single_lines(report.no_gc), "---"]
    found = report.min_peak
    if found is not None:
        if found.exact:
            lines.append(f"    Minimum peak from all valid apply node order is {_kb(found.high)}KB"
                         f"(took {found.seconds:.3f}s to compute)")
        else:
            lines.append(f"    Minimum peak from all valid apply node order is between {_kb(found.low)}KB "
                         f"and {_kb(found.high)}KB ({found.why}; "
                         f"took {found.seconds:.3f}s)")
        lines.append("---")
    lines.append(f"    Memory saved by views: {_kb(report.views)}KB; by in-place ops: {_kb(report.inplace)}KB; "
                 f"by gc (allow_gc=True over False): {_kb(report.no_gc.total - report.gc.total)}KB")
    if report.held is not None and report.held[2]:
        total, m, alive, at = report.held
        lines.append(f"    Held at the peak ({_kb(total)}KB, while node {at} ran: {m.nodes[at]}):")
        for var, size in sorted(alive.items(), key=lambda item: -item[1])[:N_ALIVE]:
            lines.append(f"      {size:9d}B  {var} (made by node {m.nodes.index(var.owner)}; "
                         f"{_why_alive(m, var, at)})")
        inner = sum(m.transient.get(at, (0, 0)))
        if inner:
            lines.append(f"      {inner:9d}B  the peak of node {at}'s inner function (its own profile)")
    lines.append("---")
    lines += _node_lines(report.rows, n_nodes, several)
    file.write("\n".join(lines) + "\n\n")


def _pair_lines(executed: Peak, every: Peak) -> list[str]:
    return [f"        {label}: {_kb(getattr(executed, field))}KB ({_kb(getattr(every, field))}KB)"
            for label, field in (("CPU", "host"), ("GPU", "device"), ("CPU + GPU", "total"))]


def _single_lines(peak: Peak) -> list[str]:
    return [f"        {label}: {_kb(getattr(peak, field))}KB"
            for label, field in (("CPU", "host"), ("GPU", "device"), ("CPU + GPU", "total"))]


def _why_alive(m: Model, var: Variable, at: int) -> str:
    """Why ``var``'s memory is still held when node ``at`` runs."""
    holders = {var}  # var and the views (of views) of it
    for node in m.nodes:
        for j, out in enumerate(node.outputs):
            if holders.intersection(m.aliased(node, j) or ()):
                holders.add(out)
    if holders & m.outputs:
        return "an output of the function"
    if var.owner is m.nodes[at]:
        return "just made"
    if not m.fn.allow_gc:
        return "allow_gc=False keeps it"
    order = m.executed()
    later = [k for k in order[order.index(at) + 1:] if holders.intersection(m.nodes[k].inputs)]
    return f"read later by node {later[0]}" if later else f"read by node {at}"


def _node_lines(rows: list[tuple[Model, int]], limit: int, several: bool) -> list[str]:
    """Theano's table of the nodes with the largest outputs, down to profiling.min_memory_size."""
    lines = ["    This list is based on all functions in the profile"] if several else []
    lines += ["    <Sum apply outputs (bytes)> <Apply outputs shape> <created/inplace/view> <Apply node>", ""]
    sized = sorted(((sum(s for s, _ in m.sizes[k]), m, k) for m, k in rows), key=lambda row: -row[0])
    shown = [row for row in sized[:limit] if row[0] >= config.profiling.min_memory_size]
    for total, m, k in shown:
        node = m.nodes[k]
        codes = " ".join(m.code(node, j) for j in range(len(node.outputs)))
        lines.append(f"     {total:9d}B  {m.shapes(k)} {codes} {node}")
    rest = sized[len(shown):]
    everything = sum(row[0] for row in sized)
    share = f"({100 * sum(r[0] for r in rest) / everything:.2f}%)" if everything else "0%"
    lines.append(f"   ... (remaining {len(rest)} Apply account for {sum(r[0] for r in rest)}B/{everything}B "
                 f"{share} of the Apply with dense outputs sizes)")
    if not shown:
        lines.append(f"    All Apply nodes have output sizes that take less than "
                     f"{config.profiling.min_memory_size}B.")
    lines += ["    <created/inplace/view> is what the op declares (view_map, destroy_map): a node "
              "marked i or v", "    may still allocate; DebugMode warns where it does.", ""]
    return lines
