"""RecordMode: a run's inputs, nodes and values as lines; a replay checks it repeats them."""
from __future__ import annotations

import io
import re

import numpy as np
import pytest
import scipy.sparse

from arignote import function, shared, tensor as T
from arignote.compile.record import MismatchError, Record, RecordMode, hex_digest
from arignote.graph.basic import Apply, Op


def _record(build, calls):
    """Record calls of the function ``build(mode)`` makes; return the record's text."""
    out = io.StringIO()
    mode = RecordMode(Record(file_object=out, replay=False))
    f = build(mode)
    for args in calls:
        f(*args)
    return out.getvalue()


def _replay(text, build, calls):
    mode = RecordMode(file_object=io.StringIO(text), replay=True)
    f = build(mode)
    for args in calls:
        f(*args)


def _affine(mode):
    x = T.dvector("x")
    return function([x], x * 2 + 1, mode=mode, name="affine")


def test_a_run_is_recorded_node_by_node_and_its_replay_passes():
    calls = [(np.arange(3.0),), (np.ones(3),)]
    text = _record(_affine, calls)
    lines = text.splitlines()
    f = _affine(RecordMode(file_object=io.StringIO()))
    n = len(f.maker.fgraph.apply_nodes)
    assert lines[0] == f"Function affine has {n} nodes."
    assert lines[1] == f"Function affine called; inputs: {hex_digest(np.arange(3.0))}"
    # per call: its inputs, then two lines a node; the first line only once
    assert len(lines) == 1 + len(calls) * (1 + 2 * n)
    assert lines[3].startswith("Function affine node 0 outputs: ")
    _replay(text, _affine, calls)


def test_a_replay_with_other_inputs_fails_at_the_call_that_differs():
    text = _record(_affine, [(np.arange(3.0),), (np.ones(3),)])
    with pytest.raises(MismatchError, match=r"function 'affine' at the start of a call: .*this run wrote"):
        _replay(text, _affine, [(np.arange(3.0),), (np.zeros(3),)])


def test_a_shared_value_that_changed_is_seen():
    def build(mode):
        w = shared(np.ones(2), name="w")
        x = T.dvector("x")
        return function([x], x * w, mode=mode, name="scaled"), w
    out = io.StringIO()
    f, _ = build(RecordMode(Record(out)))
    f(np.ones(2))
    g, w = build(RecordMode(Record(io.StringIO(out.getvalue()), replay=True)))
    w.set_value(np.full(2, 3.0))
    with pytest.raises(MismatchError, match="start of a call"):
        g(np.ones(2))


class _Drifting(Op):
    """An op whose output changes from one call to the next: non-determinism to catch."""
    __props__ = ()

    def __init__(self):
        self.calls = 0

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        self.calls += 1
        outputs[0][0] = inputs[0] + self.calls


def test_a_node_computing_something_else_is_named():
    def build(mode):
        x = T.dvector("x")
        return function([x], _Drifting()(x), mode=mode, name="drift")
    text = _record(build, [(np.zeros(2),)])
    _replay(text, build, [(np.zeros(2),)])  # a fresh op: its first call again
    out = io.StringIO(text)
    f = build(RecordMode(Record(out, replay=True)))
    f.maker.fgraph.toposort()[0].op.calls = 5
    with pytest.raises(MismatchError, match=r"function 'drift' at node 0 \(_Drifting\): .*outputs"):
        f(np.zeros(2))


def test_the_users_own_lines_mark_where_a_run_is():
    text = _record(_affine, [])
    record = Record(io.StringIO(text + "step 1\n"), replay=True)
    record.handle_line("step 1\n")
    with pytest.raises(MismatchError, match="the record ends there"):
        record.handle_line("step 2\n")
    with pytest.raises(ValueError, match="one line ending in a newline"):
        record.handle_line("no newline")


def test_an_unnamed_function_is_named_by_its_line_and_records_need_a_file():
    out = io.StringIO()
    x = T.dvector("x")
    function([x], x + 1, mode=RecordMode(file_object=out))(np.ones(1))
    assert re.match(r"Function \S*test_record\.py:\d+ has 1 nodes\.\n", out.getvalue())
    with pytest.raises(ValueError, match="file_object"):
        Record()
    with pytest.raises(TypeError, match="not both"):
        RecordMode(Record(io.StringIO()), replay=True)


def test_a_record_on_disk(tmp_path):
    path = str(tmp_path / "run.txt")
    mode = RecordMode(file_path=path)
    _affine(mode)(np.arange(2.0))
    mode.record.f.close()
    replay = RecordMode(file_path=path, replay=True)
    _affine(replay)(np.arange(2.0))
    with pytest.raises(MismatchError):
        _affine(replay)(np.arange(2.0))  # a second function: its first line is not in the record


def test_digests_tell_dtypes_shapes_and_formats_apart():
    a = np.arange(4.0)
    assert hex_digest(a) == hex_digest(a.copy()) == hex_digest(a[::-1][::-1].copy())
    assert len({hex_digest(a), hex_digest(a.astype("float32")), hex_digest(a.reshape(2, 2))}) == 3
    m = scipy.sparse.csr_matrix(np.eye(2))
    assert hex_digest(m) == hex_digest(m.copy()) != hex_digest(m.tocsc())
    assert hex_digest(None) != hex_digest(0)



def test_a_program_replayed_after_disturb_mem_repeats_its_graph_and_values():
    # Theano's use: names, order and values must not depend on where objects sit in memory.
    from arignote.compile.record import disturb_mem
    from arignote.printing import var_descriptor

    def run(record):
        mode = RecordMode(record)
        disturb_mem()
        b = shared(np.array([1.0, 3.0]), name="b")
        disturb_mem()
        top, span = b.max(axis=0), b.max(axis=0) - b.min(axis=0)
        updates = [(shared(0.0, name=f"s{i}"), v) for i, v in enumerate([top, span, top * span])]
        f = function([], [], updates=updates, mode=mode, name="f")
        for out in f.maker.fgraph.outputs:
            record.handle_line(var_descriptor(out) + "\n")
        disturb_mem()
        f()
    out = io.StringIO()
    run(Record(out))
    assert "Elemwise{sub" in out.getvalue()
    for _ in range(3):
        run(Record(io.StringIO(out.getvalue()), replay=True))
