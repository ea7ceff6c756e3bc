"""Theano's names for the parts of a Scan, for code that reads a loop's internals.

Theano grouped a loop's recurrent values by kind: ``mit_sot`` (a state read at
several or other taps than ``-1``), ``sit_sot`` (read one step back), ``nit_sot``
(an output not fed back) and ``shared`` (a shared variable the step updates);
``mit_mot`` (a state written at several taps) appears only in its gradients,
never here (our gradient loops carry windows of ``sit_sot`` states instead).
``scan()`` orders a Scan's states as Theano did, ``mit_sot`` before ``sit_sot``.

One difference of layout: Theano's outer inputs held, after the shared
variables, one buffer length per ``nit_sot`` output; ours do not (a plain
output has one row per step), so every outer index after the shared variables
is that many lower than Theano's, and a ``nit_sot`` output maps to no outer
input (-1) in ``var_mappings``.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from arignote.graph.basic import Apply


def _spans(start: int, counts: Sequence[tuple[str, int]]) -> dict[str, tuple[int, int]]:
    """Consecutive ``(begin, end)`` index ranges, from ``start``, of parts of the given sizes."""
    ends = {}
    for kind, count in counts:
        ends[kind] = (start, start + count)
        start += count
    return ends


def _selector(spans: str, kind: str, side: str = "inputs") -> Any:
    """One of Theano's ``inner_*``/``outer_*`` methods: the ``kind`` part of a list laid out
    by the method named ``spans``."""
    def select(self: Any, items: Sequence | Apply) -> list:
        return self._part(items, getattr(self, spans)()[kind], side)
    return select


class TheanoScanNames:
    """Mixed into Scan: ``fn``, ``inputs``/``outputs`` (the inner graph), ``info``,
    ``var_mappings`` and the ``inner_*``/``outer_*`` selectors of Theano's Scan."""

    # ------------------------------------------------------------ counts
    @property
    def n_mit_mot(self) -> int:
        return 0

    @property
    def n_mit_sot(self) -> int:
        return sum(taps != (-1,) for taps in self.state_taps)

    @property
    def n_sit_sot(self) -> int:
        return self.n_states - self.n_mit_sot

    @property
    def n_nit_sot(self) -> int:
        return self.n_nit

    @property
    def n_shared_outs(self) -> int:
        return self.n_carry

    @property
    def tap_array(self) -> list[list[int]]:
        """The taps of each recurrent state (Theano's ``tap_array``)."""
        return [list(taps) for taps in self.state_taps]

    @property
    def info(self) -> dict[str, Any]:
        """Theano's description of the loop (a new dict: changing it changes nothing)."""
        return {"tap_array": self.tap_array, "n_seqs": self.n_seqs, "n_mit_mot": 0, "n_mit_mot_outs": 0,
                "mit_mot_out_slices": [], "n_mit_sot": self.n_mit_sot, "n_sit_sot": self.n_sit_sot,
                "n_shared_outs": self.n_carry, "n_nit_sot": self.n_nit, "truncate_gradient": self.truncate_gradient,
                "name": self.name, "mode": self.mode, "destroy_map": dict(self.destroy_map), "gpua": False,
                "as_while": self.as_while, "profile": self.profile, "allow_gc": self.allow_gc}

    # ------------------------------------------------------------ the inner graph
    @property
    def inputs(self) -> list:
        """The inner graph's inputs (Theano's ``op.inputs``): one per sequence tap, per state tap,
        per shared variable, per non-sequence."""
        return list(self.inner_inputs)

    @property
    def outputs(self) -> list:
        """The inner graph's outputs: one per state, per plain output, per shared variable, then the
        stopping condition of a do-while loop."""
        return list(self.inner_outputs)

    @property
    def fn(self) -> Any:
        """The compiled inner function (compiled on first use), as Theano's ``op.fn``."""
        return self.inner_function()

    # ------------------------------------------------------------ selectors
    # Each takes a node's (or the inner graph's) list and returns the part of one kind.
    def _outer_spans(self) -> dict[str, tuple[int, int]]:
        return _spans(1, [("seqs", self.n_seqs), ("mitsot", self.n_mit_sot), ("sitsot", self.n_sit_sot),
                          ("shared", self.n_carry), ("non_seqs", self.n_nonseq)])

    def _inner_spans(self) -> dict[str, tuple[int, int]]:
        n_seq_taps = sum(map(len, self.seq_taps))
        n_mitsot_taps = sum(len(t) for t in self.state_taps[:self.n_mit_sot])
        return _spans(0, [("seqs", n_seq_taps), ("mitsot", n_mitsot_taps), ("sitsot", self.n_sit_sot),
                          ("shared", self.n_carry), ("non_seqs", self.n_nonseq)])

    def _out_spans(self) -> dict[str, tuple[int, int]]:
        return _spans(0, [("mitsot", self.n_mit_sot), ("sitsot", self.n_sit_sot), ("nitsot", self.n_nit),
                          ("shared", self.n_carry)])

    @staticmethod
    def _part(items: Sequence | Any, span: tuple[int, int], side: str = "inputs") -> list:
        """``items[span]``; a node stands for its inputs (or outputs), as in Theano."""
        if isinstance(items, Apply):
            items = getattr(items, side)
        return list(items[span[0]:span[1]])

    outer_seqs = _selector("_outer_spans", "seqs")
    outer_mitsot = _selector("_outer_spans", "mitsot")
    outer_sitsot = _selector("_outer_spans", "sitsot")
    outer_shared = _selector("_outer_spans", "shared")
    outer_non_seqs = _selector("_outer_spans", "non_seqs")
    inner_seqs = _selector("_inner_spans", "seqs")
    inner_mitsot = _selector("_inner_spans", "mitsot")
    inner_sitsot = _selector("_inner_spans", "sitsot")
    inner_shared = _selector("_inner_spans", "shared")
    inner_non_seqs = _selector("_inner_spans", "non_seqs")
    # inner and outer outputs share one layout
    outer_mitsot_outs = inner_mitsot_outs = _selector("_out_spans", "mitsot", "outputs")
    outer_sitsot_outs = inner_sitsot_outs = _selector("_out_spans", "sitsot", "outputs")
    outer_nitsot_outs = inner_nitsot_outs = _selector("_out_spans", "nitsot", "outputs")
    outer_shared_outs = inner_shared_outs = _selector("_out_spans", "shared", "outputs")

    def mitsot_taps(self) -> list[list[int]]:
        return self.tap_array[:self.n_mit_sot]

    # ------------------------------------------------------------ mappings
    @property
    def var_mappings(self) -> dict[str, dict]:
        """Theano's twelve maps between outer inputs, inner inputs, inner outputs and outer outputs
        (``<to>_from_<from>``): an outer index is an int (-1 for none), inner ones are lists."""
        return self.get_oinp_iinp_iout_oout_mappings()

    def get_oinp_iinp_iout_oout_mappings(self) -> dict[str, dict]:
        rows = [(0, [], [], -1)]  # (outer input, inner inputs, inner outputs, outer output)
        o_in, i_in = 1, 0
        for taps in self.seq_taps:
            rows.append((o_in, list(range(i_in, i_in + len(taps))), [], -1))
            o_in, i_in = o_in + 1, i_in + len(taps)
        for k, taps in enumerate(self.state_taps):
            rows.append((o_in, list(range(i_in, i_in + len(taps))), [k], k))
            o_in, i_in = o_in + 1, i_in + len(taps)
        first_nit = self.n_states
        rows += [(-1, [], [first_nit + j], first_nit + j) for j in range(self.n_nit)]
        for c in range(self.n_carry):
            out = first_nit + self.n_nit + c
            rows.append((o_in, [i_in], [out], out))
            o_in, i_in = o_in + 1, i_in + 1
        for _ in range(self.n_nonseq):
            rows.append((o_in, [i_in], [], -1))
            o_in, i_in = o_in + 1, i_in + 1
        names = ("outer_inp", "inner_inp", "inner_out", "outer_out")
        maps: dict[str, dict] = {f"{to}_from_{src}": {} for src in names for to in names if to != src}
        for row in rows:
            for s, src in enumerate(names):
                keys = row[s] if isinstance(row[s], list) else [] if row[s] == -1 else [row[s]]
                for key in keys:
                    for t, to in enumerate(names):
                        if t != s:
                            maps[f"{to}_from_{src}"][key] = row[t]
        return maps
