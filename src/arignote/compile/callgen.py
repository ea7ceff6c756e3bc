"""Generates each Function's call path as straight-line Python.

The generic call loops over cells, specs and thunks; here those loops are
unrolled once at link time into one function whose locals are the cells,
thunks and checks themselves. What the generated code does is exactly what
the link-time decisions in executor.py say: fill and check inputs, read the
shared values (copying those an in-place op of the user's graph overwrites), run
the thunks (output copies are nodes: compile/output_copies.py), write the updates
(handing each spare-buffered update its target's previous buffer),
release handed-out buffers (with gc, each intermediate right after the thunk that last
reads it: compile/lifetimes.py); for a profiled Function, also time each thunk and
the whole call (``_profiled_thunk``), with nothing of that otherwise; then the
backends' call checks (``backends.linking.add_call_check``), before anything is written. ``_body``
writes those steps; ``generate_call``
wraps them in the locks of the thread model (docs/architecture.md, "Threads"):
the Function's turn (compile/turn.py, inlined), then numpy's error reports off
(compile/fperrors.py), then the locks of the shared variables it updates, in rank
order, around ``try: <body> finally: <release>``.
"""
from __future__ import annotations

import functools
import inspect
import sys
import time
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

import numpy as np

from arignote.backends.kernels import cache
from arignote.compile.fperrors import QUIET
from arignote.compile.output_copies import copier
from arignote.compile.profiling import kernel_builds
from arignote.compile.sharedvalue import COMMIT_LOCK
from arignote.config import config

if TYPE_CHECKING:
    from arignote.compile.executor import Function


def generate_call(fn: Function) -> Callable[..., Any]:
    ns: dict[str, Any] = {"ndarray": np.ndarray, "fn": fn, "merge": fn._merge_keywords,
                          "fail": fn._fail, "COMMIT": COMMIT_LOCK.acquire,
                          "COMMITTED": COMMIT_LOCK.release}
    ns["QGET"], ns["QSET"], ns["QUIET"], ns["QRESET"] = QUIET
    turn = fn._turn
    ns.update(TAKE=turn.token.pop, WAIT=turn.wait, GIVE=turn.token.append, WAITING=turn.waiting,
              WAKE=turn.wake)
    for k, lock in enumerate(fn._state_locks):
        ns[f"L{k}"], ns[f"UL{k}"] = lock.acquire, lock.release
    body = _locked(_body(fn, ns), len(fn._state_locks))
    ns["SUBSET"] = fn._call_subset
    lines = ["def call(*args, **kwargs):", "    if kwargs and 'output_subset' in kwargs:",
             "        return SUBSET(args, kwargs)", "    try:", "        TAKE()", "    except IndexError:",
             "        WAIT()", "    quiet = QGET() is not QUIET and QSET(QUIET)", "    try:", *_indent(body, 2),
             "    finally:", "        if quiet:", "            QRESET(quiet)", "        GIVE(True)", "        if WAITING[0]:", "            WAKE()"]
    source = "\n".join(lines) + "\n"
    exec(cache.python_code(source, f"<arignote call of {fn.name or 'function'}>"), ns)
    call = ns["call"]
    call.source = source
    return call


def filter_for(ttype: Any, name: str, **options: Any) -> Callable[[Any], Any]:
    """``ttype.filter`` with ``options``, and the input's ``name`` for its error messages when
    the filter takes one: a Type a user wrote with Theano's ``filter(value, strict,
    allow_downcast)`` gets no ``name``."""
    if _takes_name(type(ttype).filter):
        options["name"] = name
    return functools.partial(ttype.filter, **options)


@functools.cache
def _takes_name(method: Callable) -> bool:
    params = inspect.signature(method).parameters.values()
    return any(p.name == "name" or p.kind is p.VAR_KEYWORD for p in params)


def _body(fn: Function, ns: dict[str, Any]) -> list[str]:
    """The steps of one call, unindented; cells, thunks and checks are bound in ``ns``."""
    n = len(fn._input_cells)
    # Implicit inputs (no argument) are filled by merge, which every call then goes through.
    lines = ([f"if kwargs or len(args) != {n}:", "    args = merge(args, kwargs)"]
             if len(fn._visible) == n else ["args = merge(args, kwargs)"])
    record = fn._profile_record
    if record is not None:
        ns.update(CLOCK=time.perf_counter, BUILDS=kernel_builds, AT=record.times, AC=record.calls,
                  FT=record.call_time, FC=record.call_count, KT=record.build_time, KN=record.builds)
        lines = ["t_call = CLOCK()", "b_call, n_call = BUILDS()", *lines]
        if record.stamps is not None:  # profile_memory: each node's sizes carry the call's number
            ns["MC"] = record.memory_calls
            lines.insert(0, "MC[0] += 1")
    if n:
        lines.append(f"{', '.join(f'a{i}' for i in range(n))}, = args")
        lines.append("if not fn.trust_input:")
        for i, (ttype, dtype, ndim, plain, strict, downcast, label) in enumerate(fn._specs):
            ns[f"F{i}"] = filter_for(ttype, strict=strict, allow_downcast=downcast, name=label)
            # The fast path skips filter for arrays already of the type, unless filter must look
            # at the values (TensorType.filter_checks_isfinite, as set when the function is made).
            if dtype is not None and plain and not strict and not getattr(ttype, "filter_checks_isfinite", False):
                ns[f"D{i}"] = dtype
                lines.append(f"    if type(a{i}) is not ndarray or a{i}.dtype is not D{i} "
                             f"or a{i}.ndim != {ndim}:")
                lines.append(f"        a{i} = F{i}(a{i})")
            else:
                lines.append(f"    a{i} = F{i}(a{i})")
        copies = set(fn._copy_inputs)
        if fn._check_for_aliased_inputs:
            ns["unalias"] = fn._unalias
            lines.append(f"{', '.join(f'a{i}' for i in range(n))}, = unalias(({''.join(f'a{i}, ' for i in range(n))}))")
        for i, cell in enumerate(fn._input_cells):
            ns[f"I{i}"] = cell
            if i in copies:
                ns[f"CI{i}"] = copier(fn.maker.fgraph.inputs[i].type)
            lines.append(f"I{i}[0] = CI{i}(a{i})" if i in copies else f"I{i}[0] = a{i}")
    # Several shared values are read (and later written) as one step, so a call never
    # sees half of another call's updates.
    snapshot = [f"P{k}[0] = S{k}[0]" for k in range(len(fn._shared_cells))]
    for k, (cell, source) in enumerate(fn._shared_cells):
        ns[f"P{k}"], ns[f"S{k}"] = cell, source
    lines += _atomic(snapshot)
    # A shared value an in-place op of the graph overwrites is the call's own copy.
    shared_vars = fn.maker.fgraph.inputs[n:]
    for k in fn._copy_shared:
        ns[f"CS{k}"] = copier(shared_vars[k].type)
        lines.append(f"P{k}[0] = CS{k}(P{k}[0])")
    for m, cell in enumerate(fn._release_at_start):  # the last call's outputs, kept till now
        ns[f"RS{m}"] = cell
        lines.append(f"RS{m}[0] = None")
    for k, hook in enumerate(fn._start_hooks):  # a linker's, once the inputs are in (VM_Linker)
        ns[f"HS{k}"] = hook
        lines.append(f"HS{k}()")
    if fn._thunks:
        lines.append("i = 0")
        lines.append("try:")
        for k, thunk in enumerate(fn._thunks):
            ns[f"T{k}"] = thunk
        lines += _indent(_run(fn._schedule, fn, ns, record))
        for k, (index, check) in enumerate(fn._call_checks):  # backends.linking.add_call_check
            ns[f"K{k}"] = check
            lines += [f"    i = {index}", f"    K{k}()"]
        lines.append("except Exception as err:")
        lines.append("    fail(err, i)")
        lines.append("    raise")
    for k, cell in enumerate(fn._output_cells):  # copies, where needed, are nodes of the graph
        ns[f"O{k}"] = cell
        lines.append(f"r{k} = O{k}[0]")
    for j, (cell, target) in enumerate(zip(fn._update_cells, fn._update_targets)):
        ns[f"U{j}"], ns[f"UT{j}"] = cell, target
        lines.append(f"u{j} = U{j}[0]")
    spares = fn._spare_updates
    lines += [f"s{j} = UT{j}[0]" for j in spares]
    lines += _atomic([f"UT{j}[0] = u{j}" for j in range(len(fn._update_cells))])
    freed = {id(cell) for cells in fn._free_after.values() for cell in cells}
    for m, cell in enumerate(fn._release_cells):
        if id(cell) not in freed:
            ns[f"R{m}"] = cell
            lines.append(f"R{m}[0] = None")
    lines += [f"I{i}[0] = None" for i in range(n)]
    lines += [f"P{k}[0] = None" for k in range(len(fn._shared_cells))]
    # A previous buffer nobody else holds (no other call's snapshot, no borrowed
    # reference, no view) is where the next call writes that update.
    ns["REFS"] = sys.getrefcount
    lines += [f"U{j}[0] = s{j} if REFS(s{j}) == 2 else None" for j in spares]
    if record is not None:
        lines += ["FT[0] += CLOCK() - t_call", "FC[0] += 1", "b_now, n_now = BUILDS()",
                  "KT[0] += b_now - b_call", "KN[0] += n_now - n_call"]
        if config.profiling.ignore_first_call:  # as the flag was when the function was made
            ns.update(FIRST=[True], FORGET=record.forget)
            lines += ["if FIRST[0]:", "    FIRST[0] = False", "    FORGET()"]
    keys = fn.maker.output_keys
    results = [f"r{k}" for k in range(len(fn._output_cells))]
    if keys is None:
        lines.append(f"return {results[0]}")
    elif isinstance(keys, int):
        lines.append(f"return [{', '.join(results)}]")
    else:
        ns["KEYS"] = tuple(keys)
        lines.append(f"return dict(zip(KEYS, ({', '.join(results)}{',' if len(results) == 1 else ''})))")
    return lines


def _run(schedule: list, fn: Function, ns: dict[str, Any], record: Any) -> list[str]:
    """The thunk calls in ``schedule`` order (timed when profiling); a lazy ``Branch``
    (compile/lazy.py) runs the nodes only its taken branch needs under ``if``/``else`` on
    the condition's cell."""
    lines: list[str] = []
    for item in schedule:
        k = item if isinstance(item, int) else item.index
        if not isinstance(item, int):
            ns[f"C{k}"] = fn.storage_map[item.cond]
            if k in fn._branch_hooks:  # the linker sees the lazy node pick its branch
                ns[f"HB{k}"] = fn._branch_hooks[k]
                lines += [f"i = {k}", f"HB{k}()"]
            lines += [f"if C{k}[0]:", *_indent(_run(item.then, fn, ns, record) or ["pass"]),
                      "else:", *_indent(_run(item.orelse, fn, ns, record) or ["pass"])]
        if k:
            lines.append(f"i = {k}")
        lines += [f"T{k}()"] if record is None else _profiled_thunk(record, k, ns)
        for m, cell in enumerate(fn._free_after.get(k, ())):  # allow_gc: read for the last time
            ns[f"G{k}_{m}"] = cell
            lines.append(f"G{k}_{m}[0] = None")
    return lines


def _profiled_thunk(record: Any, k: int, ns: dict[str, Any]) -> list[str]:
    """Thunk ``k`` timed for the profile: the device synchronised before the clock stops on
    a node that runs there, then the sizes of its outputs recorded (outside the timing)."""
    ns[f"RC{k}"] = record.recorder(k)
    lines = ["t = CLOCK()", f"T{k}()"]
    sync = record.sync(record.nodes[k])
    if sync is not None:
        ns[f"SY{k}"] = sync
        lines.append(f"SY{k}()")
    return lines + [f"AT[{k}] += CLOCK() - t", f"AC[{k}] += 1", f"RC{k}()"]


def _locked(body: list[str], n_locks: int) -> list[str]:
    """``body`` under locks ``L0 .. L{n-1}``, taken in that (rank) order and released in the
    reverse, however the body ends. One flat ``try`` counting the locks held, not one nested
    ``try`` per lock: Python compiles at most 20 nested blocks, and a model's training step
    can update more shared variables than that."""
    if not n_locks:
        return body
    take = [f"L{k}(); held = {k + 1}" for k in range(n_locks)]
    release = [line for k in reversed(range(n_locks)) for line in (f"if held > {k}:", f"    UL{k}()")]
    return ["held = 0", "try:", *_indent(take + body), "finally:", *_indent(release)]


def _indent(lines: list[str], levels: int = 1) -> list[str]:
    return ["    " * levels + line for line in lines]


def _atomic(assignments: list[str]) -> list[str]:
    """Cell assignments other threads must see all at once (one alone is atomic already)."""
    if len(assignments) < 2:
        return assignments
    return ["COMMIT()", *assignments, "COMMITTED()"]
