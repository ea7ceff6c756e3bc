"""``Scan.infer_shape``: the loop's output shapes without running it.

A recurrent state's buffer has its initial rows plus one per step, each row of
the initial value's shape; a plain output has one row per step, each of the
shape the inner graph gives its output, inferred from the inner inputs'
shapes (a sequence's row, a state's row, the outer values of carried states and
non-sequences) with the same ``ShapeFeature`` the rewrites use. A length that
cannot be inferred that way (a do-while loop's number of steps, an inner shape
read from an inner value) is the output's own, read at run time.
"""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply, Variable
from arignote.tensor.rewrites.shape_feature import outer_shapes
from arignote.tensor.shape import shape_i


def scan_output_shapes(op: Any, node: Apply, input_shapes: list) -> list:
    n_steps, seqs, inits, carries, nonseqs = op.split_outer_inputs(input_shapes)
    in_seqs, in_states, in_carries, in_nonseqs = op.split_inner_inputs()
    S, N = op.n_states, op.n_nit
    known: dict[Variable, tuple] = {}
    for shape, taps in zip(seqs, in_seqs):
        known.update((v, tuple(shape[1:])) for v in taps)
    for shape, taps in zip(inits, in_states):
        known.update((v, tuple(shape[1:])) for v in taps)
    known.update((v, tuple(s)) for v, s in zip(in_carries + in_nonseqs, carries + nonseqs))
    inner = outer_shapes(op.inner_outputs[S:S + N + op.n_carry], known)
    steps = None if op.as_while else node.inputs[0]
    shapes = []
    for k, out in enumerate(node.outputs):
        if not hasattr(out.type, "ndim"):
            shapes.append(())
            continue
        own = [shape_i(out, d) for d in range(out.ndim)]
        kept = op.kept_rows[k] if k < S + N else None
        if kept is not None:
            lead = own[0]  # the last rows kept (scan_save_mem): read at run time
        if k < S:
            rows = inits[k]
            if kept is None:
                lead = own[0] if steps is None else rows[0] + steps
            shapes.append((lead,) + tuple(rows[1:]))
        elif k < S + N:
            row = inner[k - S] or own[1:]
            if kept is None:
                lead = own[0] if steps is None else steps
            shapes.append((lead,) + tuple(row))
        else:
            shapes.append(tuple(inner[k - S] or own))
    return shapes
