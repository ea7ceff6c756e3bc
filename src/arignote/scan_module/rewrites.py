"""Rewrites of loops (Theano's ``scan_opt``): dropping inputs a loop does not need, moving
elementwise work on sequences out of the loop, and merging loops over the same steps into one.

``remove_constants_and_unused_inputs_scan`` (canonicalize) drops the sequences and
non-sequences no step reads, passes an outer variable given twice once, and puts
constant non-sequences into the inner graph (where its own rewrites can fold them).

``scan_pushout_outputs`` (canonicalize) takes out of the loop the plain outputs that
are a sequence's rows or a fixed value. The opt-in ``scan_pushout_seqs_ops``
(``mode.including('scan_pushout_seqs_ops')``) first vectorizes a step's elementwise work
on sequence rows and fixed values: one elementwise op over all rows instead of one per
step (the work Theano's ``PushOutSeqScan`` moved by default). (Work on fixed values
alone never enters a loop here: ``scan()`` computes it before the loop.)

``scan_pushout_dot`` (canonicalize) turns a plain output ``dot(v, W)``, ``W`` fixed, into
one product of all the steps' ``v`` after the loop.

``scan_save_mem`` (with the fusions, after the others) lets a state or plain output keep
only the last rows the graph reads of it (``Scan.kept_rows``).

``ScanMerge`` (specialize, after the steps' counts are merged into one variable)
makes one loop of loops with the same number of steps, the same ``truncate_gradient``
and mode, the same stopping condition (if any), none reading another's outputs: one
pass over the steps instead of several, and the inner graphs' common work is done
once (the merged inner graph is rewritten as one graph).
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from arignote.graph.basic import Apply, Constant, Variable, user_variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter, in_to_out, node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.graph.traversal import ancestors, clone_get_equiv, io_toposort
from arignote.scan_module.op import Scan, SequenceLengthCheck
from arignote.scan_module.utils import equal_computations
from arignote.tensor.alloc import alloc
from arignote.tensor.blas import Dot, dot
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.rewrites.shape_feature import ShapeFeature
from arignote.tensor.shape import NotScalarConstantError, get_scalar_constant_value, patternbroadcast, reshape
from arignote.tensor.subtensor.index import IndexSlice
from arignote.tensor.subtensor.read import Subtensor
from arignote.tensor.type import TensorType


@node_rewriter([Scan], name="remove_constants_and_unused_inputs_scan")
def remove_constants_and_unused_inputs_scan(fgraph: FunctionGraph, node: Apply) -> list | None:
    """The loop without the inputs no step reads, each outer variable once, constants inside."""
    op = node.op
    n_steps, seqs, inits, carries, nonseqs = op.split_outer_inputs(node.inputs)
    in_seqs, in_states, in_carries, in_nonseqs = op.split_inner_inputs()
    read = set(ancestors(op.inner_outputs))
    replace: dict[Variable, Variable] = {}
    kept_seqs: list[tuple[Variable, tuple, list]] = []
    for outer, taps, inner in zip(seqs, op.seq_taps, in_seqs):
        if not read.intersection(inner):
            continue
        twin = next((k for k in kept_seqs if k[0] is outer and k[1] == taps), None)
        if twin is not None:
            replace.update(zip(inner, twin[2]))
        else:
            kept_seqs.append((outer, taps, list(inner)))
    kept_nonseqs: list[tuple[Variable, Variable]] = []
    for outer, inner in zip(nonseqs, in_nonseqs):
        if inner not in read:
            continue
        twin = next((k for k in kept_nonseqs if k[0] is outer), None)
        if twin is not None:
            replace[inner] = twin[1]
        elif isinstance(outer, Constant) and outer.type == inner.type:
            replace[inner] = outer
        else:
            kept_nonseqs.append((outer, inner))
    if len(kept_seqs) == len(seqs) and len(kept_nonseqs) == len(nonseqs):
        return None
    outputs = list(op.inner_outputs)
    if replace:
        equiv = clone_get_equiv(list(op.inner_inputs), outputs, copy_inputs=False, replace=replace)
        outputs = [equiv[o] for o in outputs]
    inner_inputs = ([v for _, _, vs in kept_seqs for v in vs] + [v for vs in in_states for v in vs]
                    + list(in_carries) + [v for _, v in kept_nonseqs])
    new_op = _like(op, inner_inputs, outputs, seq_taps=[t for _, t, _ in kept_seqs], n_nonseq=len(kept_nonseqs))
    new = new_op.make_node(n_steps, *[s for s, _, _ in kept_seqs], *inits, *carries, *[s for s, _ in kept_nonseqs])
    return new.outputs


@node_rewriter([Scan], name="scan_pushout_outputs")
def scan_pushout_outputs(fgraph: FunctionGraph, node: Apply) -> dict | None:
    """A plain output that is a row of a sequence, or a value fixed for the loop, leaves it: it
    is that sequence's first ``n_steps`` rows, or the value repeated (not for a do-while loop,
    whose number of steps is known only once it ran). A loop left with no outputs is gone."""
    return _pushout(node, vectorize=False)


@node_rewriter([Scan], name="scan_pushout_seqs_ops")
def scan_pushout_seqs_ops(fgraph: FunctionGraph, node: Apply) -> dict | None:
    """Also compute outside the loop, for all steps at once, the elementwise work of a step that
    reads only sequences and fixed values; each result becomes a new sequence (then
    ``scan_pushout_outputs``'s rule). Opt-in: a shape error of that work then names the whole
    arrays, not the step's rows and the step it failed in."""
    return _pushout(node, vectorize=True)


def _pushout(node: Apply, vectorize: bool) -> dict | None:
    op = node.op
    n_steps, seqs, inits, carries, nonseqs = op.split_outer_inputs(node.inputs)
    in_seqs, in_states, in_carries, in_nonseqs = op.split_inner_inputs()
    row_of: dict[Variable, tuple[int, int]] = {}  # a sequence tap's variable -> (sequence, first row)
    for j, (taps, inner) in enumerate(zip(op.seq_taps, in_seqs)):
        row_of.update((var, (j, tap - min(min(taps), 0))) for tap, var in zip(taps, inner))
    whole: dict[Variable, Variable] = {}  # an inner variable -> its values for all steps, outside
    checked: dict[int, Variable] = {}  # a sequence, checked long enough (built on first use)

    def all_steps(var: Variable) -> Variable:
        if var not in whole:
            j, first = row_of[var]
            if j not in checked:
                what = f"{op}: sequence {j} ({user_variable(seqs[j]).describe()})"
                checked[j] = SequenceLengthCheck(what, op.seq_taps[j])(seqs[j], n_steps)
            whole[var] = checked[j][first:first + n_steps]
        return whole[var]

    def varying(var: Variable) -> bool:
        return var in row_of or var in whole
    fixed: dict[Variable, Variable] = dict(zip(in_nonseqs, nonseqs))  # inner -> outer, same every step
    pushed: list[Variable] = []
    for inner_node in io_toposort(list(op.inner_inputs), list(op.inner_outputs)) if vectorize else ():
        if not isinstance(inner_node.op, Elemwise):
            continue
        ins = inner_node.inputs
        if not any(map(varying, ins)) or not all(varying(v) or v in fixed or isinstance(v, Constant) for v in ins):
            continue
        outer_ins = [all_steps(v) if varying(v) else _repeated_axis(fixed.get(v, v)) for v in ins]
        outs = inner_node.op.make_node(*outer_ins).outputs
        if any(TensorType(o.dtype, o.broadcastable[1:]) != v.type for o, v in zip(outs, inner_node.outputs)):
            continue  # the rows' types would differ from the step's (a broadcastable row)
        whole.update(zip(inner_node.outputs, outs))
        pushed += inner_node.outputs
    S, N, C = op.n_states, op.n_nit, op.n_carry
    outs = list(op.inner_outputs)
    leaving: dict[int, Variable] = {}  # plain output -> its value without the loop
    if not op.as_while:
        for j in range(N):
            out = outs[S + j]
            if varying(out):
                leaving[j] = all_steps(out)
            elif out in fixed or isinstance(out, Constant):
                value = fixed.get(out, out)
                leaving[j] = alloc(value, n_steps, *[value.shape[d] for d in range(value.ndim)])
    kept = [j for j in range(N) if j not in leaving]
    roots = outs[:S] + [outs[S + j] for j in kept] + outs[S + N:]
    still_read = set(ancestors(roots, blockers=pushed))
    new_seqs = [v for v in pushed if v in still_read]
    if not new_seqs and not leaving:
        return None
    # A loop of one constant step: the value outside knows its first dimension is broadcastable,
    # the loop's output does not; the replacement keeps the output's type.
    result = {node.outputs[S + j]: patternbroadcast(value, node.outputs[S + j].broadcastable)
              for j, value in leaving.items()}
    if not (S or kept or C):
        return result
    rows = [v.type(v.name) for v in new_seqs]
    equiv = clone_get_equiv(list(op.inner_inputs), roots, copy_inputs=False, replace=dict(zip(new_seqs, rows)))
    seq_vars = [v for vs in in_seqs for v in vs]
    inner_inputs = seq_vars + rows + list(op.inner_inputs[len(seq_vars):])
    new_op = _like(op, inner_inputs, [equiv[r] for r in roots], seq_taps=op.seq_taps + ((0,),) * len(rows),
                   n_nit=len(kept), kept_rows=op.kept_rows[:S] + tuple(op.kept_rows[S + j] for j in kept))
    new = new_op.make_node(n_steps, *seqs, *[whole[v] for v in new_seqs], *inits, *carries, *nonseqs)
    olds = node.outputs[:S] + [node.outputs[S + j] for j in kept] + node.outputs[S + N:]
    result.update(zip(olds, new.outputs))
    return result


@node_rewriter([Scan], name="scan_pushout_dot")
def scan_pushout_dot(fgraph: FunctionGraph, node: Apply) -> dict | None:
    """A plain output that is ``dot(v, W)`` with ``W`` fixed for the loop becomes ``v``, and the
    products are one matrix product after the loop (``dot(W, v)`` likewise, with ``W``
    transposed): one call to a matrix-matrix kernel instead of one small product per step
    (Theano's ``PushOutScanOutput`` for dots). ``v`` may be a vector or a matrix per step."""
    op = node.op
    S, N = op.n_states, op.n_nit
    _, _, _, _, nonseqs = op.split_outer_inputs(node.inputs)
    fixed = dict(zip(op.split_inner_inputs()[3], nonseqs))
    outs = list(op.inner_outputs)
    after: dict[int, Variable] = {}  # plain output -> the fixed matrix its rows are multiplied by
    for j in range(N):
        out = outs[S + j]
        if out.owner is None or not isinstance(out.owner.op, Dot) or out.ndim == 0:
            continue
        a, b = out.owner.inputs
        outer_b, outer_a = fixed.get(b, b if isinstance(b, Constant) else None), \
            fixed.get(a, a if isinstance(a, Constant) else None)
        if outer_b is not None and outer_a is None and a.ndim in (1, 2) and b.ndim == 2:
            outs[S + j], after[j] = a, outer_b
        elif outer_a is not None and outer_b is None and a.ndim == 2 and b.ndim == 1:
            outs[S + j], after[j] = b, outer_a.T
    if not after:
        return None
    new = _like(op, op.inner_inputs, outs).make_node(*node.inputs)
    result = dict(zip(node.outputs, new.outputs))
    for j, matrix in after.items():
        rows = new.outputs[S + j]  # one v per step
        if rows.ndim == 2:
            result[node.outputs[S + j]] = dot(rows, matrix)
        else:  # a matrix per step: one product of all their rows
            flat = reshape(rows, (rows.shape[0] * rows.shape[1], rows.shape[2]), ndim=2)
            result[node.outputs[S + j]] = reshape(dot(flat, matrix), (rows.shape[0], rows.shape[1], matrix.shape[1]),
                                                  ndim=3)
    return result


def _repeated_axis(value: Variable) -> Variable:
    """``value`` with a leading broadcastable axis: the same at every step."""
    return value.dimshuffle("x", *range(value.ndim))


@node_rewriter([Scan], name="scan_save_mem")
def scan_save_mem(fgraph: FunctionGraph, node: Apply) -> list | None:
    """Keep only the last rows of a state or plain output that the graph reads (``out[-1]``,
    ``out[-k:]``, and those of ``out[s:]``), so a loop of many steps whose results are only
    read at the end holds a few rows instead of one per step (Theano's ``scan_save_mem``)."""
    op = node.op
    S = op.n_states
    kept = list(op.kept_rows)
    for k, out in enumerate(node.outputs[:S + op.n_nit]):
        rows = _last_rows_read(fgraph, out)
        if rows is None:
            continue
        least = 1 - min(op.state_taps[k]) if k < S else 1
        rows = max(rows, least)
        if kept[k] is None or rows < kept[k]:
            kept[k] = rows
    if tuple(kept) == op.kept_rows:
        return None
    new = _like(op, op.inner_inputs, op.inner_outputs, kept_rows=kept).make_node(*node.inputs)
    _forget_lengths(fgraph, node.outputs, new.outputs)
    return new.outputs


def _forget_lengths(fgraph: FunctionGraph, old: Sequence[Variable], new: Sequence[Variable]) -> None:
    """The ShapeFeature's lengths of ``old`` and the slices read from them hold every row; the
    new outputs keep fewer: give ``new`` their own lengths and drop the slices', so no later
    rewrite reads a length the kept rows do not have."""
    feature = next((f for f in fgraph.features if isinstance(f, ShapeFeature)), None)
    if feature is None:
        return
    for var in new:
        feature.shape(var)
    stack = list(old)
    while stack:
        var = stack.pop()
        for client, _ in fgraph.clients.get(var, []):
            if client != "output" and type(client.op) is Subtensor:
                for out in client.outputs:
                    feature.shape_of.pop(out, None)
                    stack.append(out)


def _last_rows_read(fgraph: FunctionGraph, var: Variable) -> int | None:
    """How many of ``var``'s last rows (along its first axis) its uses read, when that is fixed
    and every use gives the same result on those rows alone as on all of them; else None."""
    most = 0
    for client, position in fgraph.clients.get(var, []):
        if client == "output" or position != 0 or type(client.op) is not Subtensor:
            return None
        first = client.op.idx_list[0] if client.op.idx_list else IndexSlice(None, None, None)
        if isinstance(first, int) and not isinstance(first, bool) and first < 0:
            most = max(most, -first)
            continue
        if not isinstance(first, IndexSlice) or first.stop is not None or first.step not in (None, 1):
            return None
        start = first.start
        if isinstance(start, int) and start < 0:
            most = max(most, -start)
        elif start is None or isinstance(start, int):
            below = _last_rows_read(fgraph, client.outputs[0])  # var[s:][-j] reads var's last s + j
            if below is None:
                return None
            most = max(most, (start or 0) + below)
        else:
            return None
    return most


def _like(op: Scan, inner_inputs: Sequence[Variable], inner_outputs: Sequence[Variable], **changes: Any) -> Scan:
    """A Scan with ``op``'s settings, this inner graph, and ``changes`` to its layout. Its rows kept
    are ``op``'s: a change of the states or plain outputs must say which it keeps."""
    layout = dict(seq_taps=op.seq_taps, state_taps=op.state_taps, n_nit=op.n_nit, n_carry=op.n_carry,
                  n_nonseq=op.n_nonseq, as_while=op.as_while, name=op.name, kept_rows=op.kept_rows)
    layout.update(changes)
    return type(op)(inner_inputs, inner_outputs, truncate_gradient=op.truncate_gradient, mode=op.mode,
                    allow_gc=op.allow_gc, profile=op.profile, **layout)


class ScanMerge(GraphRewriter):
    """Merge loops over the same steps into one (see the module's docstring)."""

    name = "scan_merge"

    @staticmethod
    def _steps(node: Apply) -> Any:
        try:
            return int(get_scalar_constant_value(node.inputs[0]))
        except NotScalarConstantError:
            return node.inputs[0]

    def belongs_to_set(self, node: Apply, set_nodes: Sequence[Apply]) -> bool:
        """Whether ``node`` can be merged with every node of ``set_nodes`` (Theano's name)."""
        rep = set_nodes[0]
        a, b = node.op, rep.op
        if (type(a) is not type(b) or a.as_while != b.as_while or a.truncate_gradient != b.truncate_gradient
                or a.mode != b.mode):
            return False
        steps, rep_steps = self._steps(node), self._steps(rep)
        if steps is not rep_steps and not (isinstance(steps, int) and steps == rep_steps):
            return False
        mine = set(node.outputs)
        for other in set_nodes:
            if mine & set(ancestors(other.inputs)) or set(other.outputs) & set(ancestors(node.inputs)):
                return False
        if not a.as_while:
            return True
        pairs = _common_inner_inputs(node, rep)
        return equal_computations([a.inner_outputs[-1]], [b.inner_outputs[-1]],
                                  [p for p, _ in pairs], [q for _, q in pairs])

    def merge(self, nodes: Sequence[Apply]) -> dict[Variable, Variable]:
        """One loop doing the work of ``nodes``: each old output -> the merged loop's."""
        parts = []
        for nd in nodes:  # fresh inner variables: one op may run in several nodes
            op = nd.op
            equiv = clone_get_equiv(list(op.inner_inputs), list(op.inner_outputs), copy_inputs=True)
            parts.append((nd, [equiv[v] for v in op.inner_inputs], [equiv[v] for v in op.inner_outputs]))
        seq_vars, seq_taps, seq_outer = [], [], []
        states, nit_outs, carry_vars, carry_outs, carry_outer, nonseq_vars, nonseq_outer = [], [], [], [], [], [], []
        for nd, ins, outs in parts:
            op = nd.op
            _, seqs, inits, carries, nonseqs = op.split_outer_inputs(nd.inputs)
            n_seq_in = sum(map(len, op.seq_taps))
            seq_vars += ins[:n_seq_in]
            seq_taps += op.seq_taps
            seq_outer += seqs
            pos = n_seq_in
            for k, taps in enumerate(op.state_taps):
                states.append((taps, ins[pos:pos + len(taps)], outs[k], inits[k], nd.outputs[k], op.kept_rows[k]))
                pos += len(taps)
            S, N, C = op.n_states, op.n_nit, op.n_carry
            nit_outs += [(outs[S + j], nd.outputs[S + j], op.kept_rows[S + j]) for j in range(N)]
            carry_vars += ins[pos:pos + C]
            carry_outs += [(outs[S + N + c], nd.outputs[S + N + c]) for c in range(C)]
            carry_outer += carries
            nonseq_vars += ins[pos + C:]
            nonseq_outer += nonseqs
        states.sort(key=lambda s: s[0] == (-1,))  # Theano's order: mit_sot, then sit_sot
        inner_inputs = seq_vars + [v for s in states for v in s[1]] + carry_vars + nonseq_vars
        inner_outputs = [s[2] for s in states] + [o for o, _, _ in nit_outs] + [o for o, _ in carry_outs]
        first = nodes[0].op
        if first.as_while:
            inner_outputs.append(parts[0][2][-1])
        names = [nd.op.name for nd in nodes if nd.op.name]
        merged = _like(first, inner_inputs, inner_outputs, seq_taps=seq_taps, state_taps=[s[0] for s in states],
                       n_nit=len(nit_outs), n_carry=len(carry_vars), n_nonseq=len(nonseq_vars),
                       name="&".join(names) if names else None,
                       kept_rows=[s[5] for s in states] + [k for _, _, k in nit_outs])
        new = merged.make_node(nodes[0].inputs[0], *seq_outer, *[s[3] for s in states], *carry_outer, *nonseq_outer)
        olds = [s[4] for s in states] + [o for _, o, _ in nit_outs] + [o for _, o in carry_outs]
        return dict(zip(olds, new.outputs))

    def apply(self, fgraph: FunctionGraph) -> int:
        if not any(isinstance(nd.op, Scan) for nd in fgraph.apply_nodes):
            return 0
        sets: list[list[Apply]] = []
        for nd in fgraph.toposort():
            if not isinstance(nd.op, Scan):
                continue
            for subset in sets:
                if self.belongs_to_set(nd, subset):
                    subset.append(nd)
                    break
            else:
                sets.append([nd])
        changes = 0
        for subset in sets:
            if len(subset) > 1:
                pairs = [(old, new) for old, new in self.merge(subset).items() if old in fgraph.variables]
                fgraph.replace_all(pairs, reason=self.name)
                changes += 1
        return changes


def _common_inner_inputs(x: Apply, y: Apply) -> list[tuple[Variable, Variable]]:
    """Pairs of inner inputs of ``x`` and ``y`` reading the same outer sequence at the same tap,
    or the same non-sequence: the variables two steps share."""
    def keyed(node: Apply) -> dict[tuple, Variable]:
        op = node.op
        _, seqs, _, _, nonseqs = op.split_outer_inputs(node.inputs)
        in_seqs, _, _, in_nonseqs = op.split_inner_inputs()
        keys: dict[tuple, Variable] = {}
        for outer, taps, inner in zip(seqs, op.seq_taps, in_seqs):
            for tap, var in zip(taps, inner):
                keys.setdefault(("seq", outer, tap), var)
        for outer, var in zip(nonseqs, in_nonseqs):
            keys.setdefault(("nonseq", outer), var)
        return keys
    mine, theirs = keyed(x), keyed(y)
    return [(mine[k], theirs[k]) for k in mine if k in theirs]


rewrites.register(remove_constants_and_unused_inputs_scan, "canonicalize", "fast_run", "scan")
rewrites.register(scan_pushout_outputs, "canonicalize", "fast_run", "scan")
rewrites.register(scan_pushout_dot, "canonicalize", "fast_run", "scan", "scanOp_pushout_output")
rewrites.register(scan_pushout_seqs_ops, "canonicalize", "scan_pushout", opt_in=True)
# Again after merging, which may give one loop an outer variable twice.
rewrites.register(remove_constants_and_unused_inputs_scan, "specialize", "fast_run", "scan",
                  name="remove_constants_and_unused_inputs_scan_merged")
# After merging and the other loop rewrites; the loops they rebuild, and the GPU lowering's,
# keep the same rows (a length read after this rewrite is the kept rows' length).
rewrites.register(in_to_out(scan_save_mem, name="scan_save_mem"), "fusion", "fast_run", "scan", name="scan_save_mem")
rewrites.register(ScanMerge(), "specialize", "fast_run", "scan", "scanOp_merge", name="scan_merge")
