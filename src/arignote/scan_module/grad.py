"""The gradient of a Scan: another scan, over the same steps in reverse order.

Backward step ``t`` recomputes forward step ``t`` from the values it read (the
sequences' taps and the recurrent outputs' earlier rows, handed to the backward
loop as reversed sequences) and back-propagates through it the gradient of the
step's outputs. A recurrent output read ``m`` steps back needs the gradients
that later steps sent to its last ``m`` rows: the backward loop carries them as
``m`` recurrent "window" states, shifted by one row each step. After the last
backward step the window holds the gradient of the initial rows. Gradients of
sequences come out per step and tap and are added into place; gradients of
non-sequences are summed over the steps.

Because the backward loop is an ordinary scan, its own gradient (second
derivatives, and ``Rop`` as a double ``Lop``) comes from this same rule.
``truncate_gradient=k`` runs the backward loop over the last ``k`` steps only.

Shared variables the step updates are carried without history (only their last
value is kept). When a gradient flows through one, the rule differentiates an
equal loop in which they are recurrent outputs (Theano's sit-sot form), so the
backward loop can replay their per-step values (``_through_carried``).
"""
from __future__ import annotations

import contextlib
from typing import Any

from arignote.config import config
from arignote.gradient import NullTypeGradError, register_grad, total_grad
from arignote.graph.testvalue import TestValueError
from arignote.graph.traversal import ancestors, clone_get_equiv
from arignote.scalar.dtypes import DISCRETE, FLOAT
from arignote.scan_module.basic import scan
from arignote.scan_module.op import Scan
from arignote.tensor import math as tm
from arignote.tensor.alloc import zeros_like
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.join import stack
from arignote.tensor.rewrites.utils import is_scalar_constant
from arignote.tensor.shape import shape_i
from arignote.tensor.subtensor import inc_subtensor
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable


def _float(var: Any) -> bool:
    return getattr(var.type, "dtype", "int") not in DISCRETE


@register_grad(Scan)
def scan_grad(op: Scan, inputs: list, outputs: list, output_grads: list) -> list:
    if any(k is not None for k in op.kept_rows):
        raise NotImplementedError(
            f"{op} keeps only the last rows of its outputs (kept_rows {list(op.kept_rows)}, set when a "
            "function was compiled), so the steps' values its gradient replays are gone: "
            "differentiate the graph as built, before compiling it")
    through = _through_carried(op, inputs, outputs, output_grads)
    if through is not None:
        return through
    n_steps, seqs, inits, carries, nonseqs = op.split_outer_inputs(inputs)
    in_seqs, in_states, in_carries, in_nonseqs = op.split_inner_inputs()
    S, N = op.n_states, op.n_nit
    bufs, nits = outputs[:S], outputs[S:S + N]
    g_bufs, g_nits = output_grads[:S], output_grads[S:S + N]
    marks = [-min(taps) for taps in op.state_taps]
    differentiated = [o for o, out in zip(op.inner_outputs[:S + N], outputs[:S + N]) if _float(out)]
    draws = _recorded_draws(op, inputs, outputs, output_grads, differentiated)
    if draws is not None:
        return draws
    _refuse_carried_dependence(op, in_carries, differentiated)

    # Steps actually run (fewer than n_steps after an ``until``), and the ones back-propagated.
    if S:
        n = shape_i(bufs[0], 0) - marks[0]
    elif N:
        n = shape_i(nits[0], 0)
    else:
        n = tm.cast(n_steps, "int64")
    truncated = op.truncate_gradient is not None and op.truncate_gradient >= 0
    n_back = tm.minimum(n, op.truncate_gradient) if truncated else n
    start = n - n_back if truncated else 0

    sequences = []
    for seq, taps in zip(seqs, op.seq_taps):
        lo, hi = min(min(taps), 0), max(max(taps), 0)
        sequences.append(dict(input=seq[start:start + n_back + hi - lo][::-1], taps=[hi - k for k in taps]))
    for buf, taps, m in zip(bufs, op.state_taps, marks):
        sequences.append(dict(input=buf[start:start + m + n_back][::-1], taps=[-k for k in taps]))
    for g, m in zip(g_bufs, marks):
        sequences.append(g[start + m:start + m + n_back][::-1])
    for g in g_nits:
        sequences.append(g[start:start + n_back][::-1])
    windows = [zeros_like(init[0]) for init, m in zip(inits, marks) for _ in range(m)]

    seq_wrt = [v for group in in_seqs for v in group]
    state_wrt = [v for group in in_states for v in group]
    n_seq_vals, n_state_vals = len(seq_wrt), len(state_wrt)
    n_windows = len(windows)

    def step(*args: Any) -> list:
        args = list(args)
        seq_vals = args[:n_seq_vals]
        state_vals = args[n_seq_vals:n_seq_vals + n_state_vals]
        rest = args[n_seq_vals + n_state_vals:]
        g_buf_vals, g_nit_vals = rest[:S], rest[S:S + N]
        window_vals = rest[S + N:S + N + n_windows]
        # The loop hands the step the outer non-sequences themselves, and one may be computed
        # from another (``W`` and a hoisted ``W.T``): the step differentiates stand-ins, so each
        # gets its own partial derivative, not also the path through the other.
        outer_nonseqs = rest[S + N + n_windows:]
        nonseq_vals = [_stand_in(v) for v in outer_nonseqs]
        replace = dict(zip(seq_wrt + state_wrt + list(in_nonseqs), seq_vals + state_vals + nonseq_vals))
        replace.update(zip(in_carries, carries))
        equiv = clone_get_equiv(list(replace), list(op.inner_outputs[:S + N]), copy_inputs=False,
                                replace=replace)
        ys = [equiv[o] for o in op.inner_outputs[:S + N]]
        # The gradient of each output at this step: the direct one plus what later steps sent.
        known: dict = {}
        slot = 0
        for i, m in enumerate(marks):
            if _float(ys[i]):
                _add(known, ys[i], g_buf_vals[i] + window_vals[slot + m - 1])
            slot += m
        for j in range(N):
            if _float(ys[S + j]):
                _add(known, ys[S + j], g_nit_vals[j])
        wrt = [v for v in seq_vals + state_vals + nonseq_vals if _float(v)]
        grads = dict(zip(wrt, total_grad(wrt, known, disconnected_inputs="ignore"))) \
            if known and wrt else {}
        zero = lambda v: grads.get(v, zeros_like(v))  # noqa: E731
        new_windows = []
        slot = 0
        state_pos = 0
        for taps, m in zip(op.state_taps, marks):
            by_tap = dict(zip(taps, state_vals[state_pos:state_pos + len(taps)]))
            for j in range(m):
                value = window_vals[slot + j - 1] if j else None
                if j - m in by_tap and by_tap[j - m] in grads:
                    value = grads[by_tap[j - m]] if value is None else value + grads[by_tap[j - m]]
                new_windows.append(value if value is not None else zeros_like(window_vals[slot + j]))
            slot += m
            state_pos += len(taps)
        step_outs = new_windows + [zero(v) for v in seq_vals] + [zero(v) for v in nonseq_vals]
        back = clone_get_equiv(nonseq_vals, step_outs, copy_inputs=False,
                               replace=dict(zip(nonseq_vals, outer_nonseqs)))
        return [back[o] for o in step_outs]

    results, _ = scan(step, sequences=sequences, outputs_info=windows + [None] * (n_seq_vals + len(nonseqs)),
                      non_sequences=nonseqs, n_steps=n_back, mode=op.mode, allow_gc=op.allow_gc,
                      name=f"grad_of_{op.name}" if op.name else "grad_of_scan", return_list=True)
    window_out, rest = results[:n_windows], results[n_windows:]
    seq_out, nonseq_out = rest[:n_seq_vals], rest[n_seq_vals:]

    grads: list = [None]
    pos = 0
    for seq, taps in zip(seqs, op.seq_taps):
        if not _float(seq):
            grads.append(None)
            pos += len(taps)
            continue
        lo = min(min(taps), 0)
        total = zeros_like(seq)
        for k in taps:
            first = start + k - lo
            total = inc_subtensor(total[first:first + n_back], seq_out[pos][::-1])
            pos += 1
        grads.append(total)
    slot = 0
    for init, g_buf, m in zip(inits, g_bufs, marks):
        rows = [window_out[slot + j][-1] for j in range(m)]
        slot += m
        carried = rows[0].dimshuffle("x", *range(rows[0].ndim)) if m == 1 else stack(rows)
        if truncated:
            carried = tm.switch(tm.eq(start, 0), carried, zeros_like(carried))
        grads.append(g_buf[:m] + carried if _float(init) else None)
    grads.extend([None] * len(carries))
    for var, g in zip(nonseqs, nonseq_out):
        grads.append(g.sum(axis=0) if _float(var) else None)
    return grads


def _stand_in(var: Any) -> Any:
    """A variable of ``var``'s type and name, with its test value (compute_test_value)."""
    new = var.type(var.name)
    if config.compute_test_value != "off":
        with contextlib.suppress(TestValueError):
            new.tag.test_value = var.get_test_value()
    return new


def _recorded_draws(op: Scan, inputs: list, outputs: list, output_grads: list,
                    differentiated: list) -> list | None:
    """The gradient when the step draws random numbers (from carried generator states), else None.

    The draws are constants for the gradient, as in Theano: an equal loop that also
    returns each step's draws as outputs records them, and the loop is differentiated
    with them read as sequences instead of drawn, so the backward loop replays the
    very numbers the forward one used. (That loop runs once more, from the same
    generator states, so it draws the same numbers.)
    """
    in_seqs, in_states, in_carries, in_nonseqs = op.split_inner_inputs()
    carried = set(in_carries)
    if not carried or not differentiated or not set(ancestors(differentiated)) & carried:
        return None
    S, N = op.n_states, op.n_nit
    kept_outputs = set(op.inner_outputs[S + N:])
    read = set(ancestors(differentiated))
    draws = list(dict.fromkeys(
        out for v in ancestors(differentiated)
        if v.owner is not None and getattr(v.owner.op, "random_draw", False) and set(v.owner.inputs) & carried
        for out in v.owner.outputs
        if out in read and out not in kept_outputs and isinstance(out.type, TensorType)))
    if not draws or set(ancestors(differentiated, blockers=draws)) & carried:
        return None  # not (only) draws: the per-step carried values themselves are needed
    n_steps, seqs, inits, carries, nonseqs = op.split_outer_inputs(inputs)
    outs = list(op.inner_outputs)
    recorder = Scan(op.inner_inputs, outs[:S + N] + draws + outs[S + N:], op.seq_taps, op.state_taps,
                    N + len(draws), op.n_carry, op.n_nonseq, op.as_while, op.truncate_gradient,
                    op.name, op.mode, op.allow_gc, op.profile)
    recorded = recorder.make_node(*inputs).outputs[S + N:S + N + len(draws)]
    # The same loop with the draws read from sequences.
    rows = [d.type(d.name) for d in draws]
    equiv = clone_get_equiv(list(op.inner_inputs), outs, copy_inputs=False, replace=dict(zip(draws, rows)))
    seq_vars = [v for group in in_seqs for v in group]
    replayed = Scan(seq_vars + rows + list(op.inner_inputs[len(seq_vars):]), [equiv[o] for o in outs],
                    op.seq_taps + ((0,),) * len(draws), op.state_taps, N, op.n_carry, op.n_nonseq,
                    op.as_while, op.truncate_gradient, op.name, op.mode, op.allow_gc, op.profile)
    n_head = 1 + len(seqs)
    grads = scan_grad(replayed, inputs[:n_head] + recorded + inputs[n_head:], outputs, output_grads)
    return grads[:n_head] + grads[n_head + len(draws):]


def _through_carried(op: Scan, inputs: list, outputs: list, output_grads: list) -> list | None:
    """The gradient when it flows through float shared variables updated in the loop, else None.

    It does when the final value of one is differentiated, or when an output the
    gradient goes through reads one. The loop is rebuilt with those carried values
    as recurrent outputs (tap -1, initial value the variable's), whose buffers
    hold every step's value; their final values are the buffers' last rows.
    """
    n_steps, seqs, inits, carries, nonseqs = op.split_outer_inputs(inputs)
    in_seqs, in_states, in_carries, in_nonseqs = op.split_inner_inputs()
    S, N, C = op.n_states, op.n_nit, op.n_carry
    outs = list(op.inner_outputs)
    g_finals = output_grads[S + N:S + N + C]
    moved = [k for k in range(C) if getattr(carries[k].type, "dtype", None) in FLOAT]
    if not moved:
        return None
    differentiated = [o for o, out, g in zip(outs[:S + N], outputs[:S + N], output_grads[:S + N])
                      if _float(out)] + [outs[S + N + k] for k in moved if not _is_zeros(g_finals[k])]
    read = set(ancestors(differentiated)) if differentiated else set()
    if all(_is_zeros(g_finals[k]) and in_carries[k] not in read for k in moved):
        return None
    kept = [k for k in range(C) if k not in moved]
    # Each moved value becomes a host recurrent state; a device-typed inner variable
    # reads it through the device type's conversion.
    hosts = [as_tensor_variable(carries[k]) for k in moved]
    rows = [TensorType(h.dtype, h.broadcastable)(in_carries[k].name) for h, k in zip(hosts, moved)]
    replace = {in_carries[k]: in_carries[k].type.convert_variable(row) for k, row in zip(moved, rows)}
    equiv = clone_get_equiv(list(op.inner_inputs), outs, copy_inputs=False, replace=replace)
    new_outs = [equiv[o] for o in outs]
    seq_vars = [v for group in in_seqs for v in group]
    state_vars = [v for group in in_states for v in group]
    history = Scan(seq_vars + state_vars + rows + [in_carries[k] for k in kept] + list(in_nonseqs),
                   new_outs[:S] + [as_tensor_variable(new_outs[S + N + k]) for k in moved]
                   + new_outs[S:S + N] + [new_outs[S + N + k] for k in kept] + new_outs[S + N + C:],
                   op.seq_taps, op.state_taps + ((-1,),) * len(moved), N, len(kept), op.n_nonseq,
                   op.as_while, op.truncate_gradient, op.name, op.mode, op.allow_gc, op.profile)
    node = history.make_node(n_steps, *seqs, *inits, *[h.dimshuffle("x", *range(h.ndim)) for h in hosts],
                             *[carries[k] for k in kept], *nonseqs)
    bufs = node.outputs[S:S + len(moved)]
    g_bufs = [inc_subtensor(zeros_like(buf)[-1], as_tensor_variable(g_finals[k]))
              for buf, k in zip(bufs, moved)]
    g_out = (list(output_grads[:S]) + g_bufs + list(output_grads[S:S + N])
             + [g_finals[k] for k in kept])
    grads = scan_grad(history, node.inputs, node.outputs, g_out)
    # Back to the original layout: the moved values' gradients are those of their one initial row.
    n_head = 1 + len(seqs) + len(inits)
    g_moved = dict(zip(moved, grads[n_head:n_head + len(moved)]))
    g_carries = [g_moved[k][0] if k in g_moved else None for k in range(C)]
    return grads[:n_head] + g_carries + grads[n_head + len(moved) + len(kept):]


def _is_zeros(g: Any) -> bool:
    """Whether ``g`` is the zeros ``grad`` hands a node for an output nothing differentiates."""
    node = g.owner
    return (node is not None and isinstance(node.op, Elemwise) and node.op.scalar_op.name == "second"
            and is_scalar_constant(node.inputs[1], 0))


def _add(known: dict, var: Any, g: Any) -> None:
    known[var] = known[var] + g if var in known else g


class CarriedStateGradError(NotImplementedError, NullTypeGradError):
    """A scan gradient needing the per-step values of a state the loop carries without history
    (Theano raised NullTypeGradError for its random states; the error is both)."""


def _refuse_carried_dependence(op: Scan, in_carries: list, differentiated: list) -> None:
    """The backward loop cannot replay carried states (shared variables updated inside the loop,
    random states): refuse a gradient whose outputs depend on them rather than get it wrong."""
    if not in_carries or not differentiated:
        return
    used = set(ancestors(differentiated)) & set(in_carries)
    if used:
        raise CarriedStateGradError(
            f"the gradient of {op} needs the per-step values of {sorted(map(str, used))}, a shared "
            "variable updated inside the loop (random draws update one): compute those values "
            "outside scan (e.g. draw the noise for all steps at once) and pass them as a sequence")
