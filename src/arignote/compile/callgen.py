"""Generates each Function's call path as straight-line Python.

The generic call loops over cells, specs and thunks; here those loops are
unrolled once at link time into one function whose locals are the cells,
thunks and checks themselves. What the generated code does is exactly what
the link-time decisions in executor.py say: fill and check inputs, read the
shared values, run the thunks, copy what must be copied, write the updates,
release handed-out buffers. ``_body`` writes those steps; ``generate_call``
wraps them in the locks of the thread model (docs/architecture.md, "Threads"):
the Function's turn (a token taken from a one-item ``SimpleQueue``, the
cheapest blocking lock CPython offers: about 50 ns a call, where
``Lock.acquire``/``release`` cost 150), then the locks of the shared variables
it updates, in rank order, around ``try: <body> finally: <release>``.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

import numpy as np

from arignote.compile.sharedvalue import COMMIT_LOCK

if TYPE_CHECKING:
    from arignote.compile.executor import Function


def generate_call(fn: Function) -> Callable[..., Any]:
    ns: dict[str, Any] = {"ndarray": np.ndarray, "fn": fn, "merge": fn._merge_keywords,
                          "fail": fn._fail, "COMMIT": COMMIT_LOCK.acquire,
                          "COMMITTED": COMMIT_LOCK.release}
    ns["TURN"], ns["DONE"] = fn._turns.get, fn._turns.put
    for k, lock in enumerate(fn._state_locks):
        ns[f"L{k}"], ns[f"UL{k}"] = lock.acquire, lock.release
    body = _body(fn, ns)
    for k in reversed(range(len(fn._state_locks))):
        body = [f"L{k}()", "try:", *_indent(body), "finally:", f"    UL{k}()"]
    lines = ["def call(*args, **kwargs):", "    turn = TURN()", "    try:", *_indent(body, 2),
             "    finally:", "        DONE(turn)"]
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<arignote call of {fn.name or 'function'}>", "exec"), ns)
    call = ns["call"]
    call.source = source
    return call


def _body(fn: Function, ns: dict[str, Any]) -> list[str]:
    """The steps of one call, unindented; cells, thunks and checks are bound in ``ns``."""
    n = len(fn._input_cells)
    # Implicit inputs (no argument) are filled by merge, which every call then goes through.
    lines = ([f"if kwargs or len(args) != {n}:", "    args = merge(args, kwargs)"]
             if len(fn._visible) == n else ["args = merge(args, kwargs)"])
    if n:
        lines.append(f"{', '.join(f'a{i}' for i in range(n))}, = args")
        lines.append("if not fn.trust_input:")
        for i, (ttype, dtype, ndim, plain, strict, downcast, label) in enumerate(fn._specs):
            ns[f"F{i}"] = functools.partial(ttype.filter, strict=strict, allow_downcast=downcast,
                                            name=label)
            if dtype is not None and plain and not strict:
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
            lines.append(f"I{i}[0] = a{i}{'.copy()' if i in copies else ''}")
    # Several shared values are read (and later written) as one step, so a call never
    # sees half of another call's updates.
    snapshot = [f"P{k}[0] = S{k}[0]" for k in range(len(fn._shared_cells))]
    for k, (cell, source) in enumerate(fn._shared_cells):
        ns[f"P{k}"], ns[f"S{k}"] = cell, source
    lines += _atomic(snapshot)
    if fn._thunks:
        lines.append("i = 0")
        lines.append("try:")
        for k, thunk in enumerate(fn._thunks):
            ns[f"T{k}"] = thunk
        lines += _indent(_run(fn._schedule, fn, ns))
        lines.append("except Exception as err:")
        lines.append("    fail(err, i)")
        lines.append("    raise")
    copy_out = set(fn._copy_outputs)
    for k, cell in enumerate(fn._output_cells):
        ns[f"O{k}"] = cell
        lines.append(f"r{k} = O{k}[0]{'.copy()' if k in copy_out else ''}")
    copy_upd = set(fn._copy_updates)
    for j, (cell, target) in enumerate(zip(fn._update_cells, fn._update_targets)):
        ns[f"U{j}"], ns[f"UT{j}"] = cell, target
        lines.append(f"u{j} = U{j}[0]{'.copy()' if j in copy_upd else ''}")
    lines += _atomic([f"UT{j}[0] = u{j}" for j in range(len(fn._update_cells))])
    for m, cell in enumerate(fn._release_cells):
        ns[f"R{m}"] = cell
        lines.append(f"R{m}[0] = None")
    lines += [f"I{i}[0] = None" for i in range(n)]
    lines += [f"P{k}[0] = None" for k in range(len(fn._shared_cells))]
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


def _run(schedule: list, fn: Function, ns: dict[str, Any]) -> list[str]:
    """The thunk calls in ``schedule`` order; a lazy ``Branch`` (compile/lazy.py) runs the nodes
    only its taken branch needs under ``if``/``else`` on the condition's cell."""
    lines: list[str] = []
    for item in schedule:
        k = item if isinstance(item, int) else item.index
        if not isinstance(item, int):
            ns[f"C{k}"] = fn.storage_map[item.cond]
            lines += [f"if C{k}[0]:", *_indent(_run(item.then, fn, ns) or ["pass"]),
                      "else:", *_indent(_run(item.orelse, fn, ns) or ["pass"])]
        if k:
            lines.append(f"i = {k}")
        lines.append(f"T{k}()")
    return lines


def _indent(lines: list[str], levels: int = 1) -> list[str]:
    return ["    " * levels + line for line in lines]


def _atomic(assignments: list[str]) -> list[str]:
    """Cell assignments other threads must see all at once (one alone is atomic already)."""
    if len(assignments) < 2:
        return assignments
    return ["COMMIT()", *assignments, "COMMITTED()"]
