"""The memory profile (``config.profile_memory``): peaks worked out on paper for small graphs,
with and without gc, views, in-place ops, a lazy ifelse, a scan's step, a device; the
minimum over node orders, exact and bounded; the executor freeing each value after its last
reader with allow_gc, as the profile counts it."""
from __future__ import annotations

import io

import numpy as np
import pytest

from arignote import Mode, config, function, scan, tensor as T
from arignote.ifelse import ifelse
from arignote.compile.linkers import VM_Linker
from arignote.compile.memory import min_peak
from tests.gpu.conftest import DEVICES, use

KB4 = 4 * 1024 * 1024  # a 1024 x 1024 float32 matrix
V4 = 4096  # a 1024 float32 vector


@pytest.fixture
def memory():
    with config.change_flags(profile_memory=True):
        yield


def _theano_test_graph(**kwargs):
    """Theano's test_profiling graph: two outer products summed, two sums of inputs."""
    x = [T.fvector(f"val{i}") for i in range(3)]
    z = [T.outer(x[i], x[i + 1]).sum(axis=1) for i in range(2)] + [x[i] + x[i + 1] for i in range(2)]
    f = function(x, z, profile=True, **kwargs)
    f(*[np.arange(1024, dtype="float32") + 1 for _ in range(3)])
    return f


def test_theanos_test_graph_figures_worked_out_by_hand(memory):
    """Our graph: per outer product Alloc (4 MB) then Ger writing into it in place, then the
    sum (4 kB); three Shape_i (8 B each). With gc the peak is while the second sum runs: the
    second Alloc's buffer and both sums. Without in-place, Ger makes a second 4 MB buffer next
    to its Alloc's (plus the first sum, 4 kB). Without gc every buffer stays."""
    with config.change_flags(allow_gc=True):
        f = _theano_test_graph()
    names = [type(n.op).__name__ for n in f._nodes]
    assert names.count("Alloc") == 2 and names.count("Ger") == 2  # the graph the figures are for
    report = f.profile.memory_report(min_peak=True)
    assert report.current.host == report.gc.host == KB4 + 2 * V4
    assert report.no_inplace.host == 2 * KB4 + V4
    assert report.no_gc.host == 2 * KB4 + 4 * V4 + 3 * 8
    assert report.current.device == 0
    assert report.inplace == 2 * KB4 and report.views == 0
    assert report.min_peak.exact and report.min_peak.high == KB4 + 2 * V4  # Theano's 4104KB
    out = io.StringIO()
    with config.change_flags(**{"profiling.min_peak_memory": True}):
        f.profile.summary(file=out)
    text = out.getvalue()
    for part in ("Memory Profile", "Max peak memory with current setting (allow_gc=True)",
                 "CPU: 4104KB (4104KB)", "CPU: 8196KB (8196KB)", "CPU: 8208KB",
                 "Minimum peak from all valid apply node order is 4104KB",
                 "<Sum apply outputs (bytes)> <Apply outputs shape> <created/inplace/view> <Apply node>",
                 "  4194304B  [(1024, 1024)] i Ger{destructive}", "  4194304B  [(1024, 1024)] c Alloc",
                 "by in-place ops: 8192KB"):
        assert part in text, part
    # which node holds the memory at the peak: the second Alloc's buffer, read by the sum
    held = text.split("Held at the peak (4104KB, while node")[1].split("---")[0]
    assert "4194304B  Alloc.0" in held and "an output of the function" in held


def test_without_gc_the_current_setting_keeps_every_buffer(memory):
    f = _theano_test_graph()  # allow_gc=False, our default
    report = f.profile.memory_report()
    assert report.current.host == report.no_gc.host == 2 * KB4 + 4 * V4 + 3 * 8
    assert report.gc.host == KB4 + 2 * V4
    assert report.min_peak is None  # profiling.min_peak_memory is off
    out = io.StringIO()
    f.profile.summary(file=out)
    assert "(allow_gc=False)" in out.getvalue() and "allow_gc=False keeps it" in out.getvalue()


def test_a_view_holds_its_inputs_memory(memory):
    """exp (8 kB) is viewed by the transpose, which the product (8 kB) reads: both are alive
    then; the sum (8 B) comes after the product frees exp's buffer (through its view)."""
    x = T.dmatrix("x")
    with config.change_flags(allow_gc=True):
        f = function([x], (T.exp(x).T * 2).sum(), mode=Mode(optimizer=None), profile=True)
    f(np.ones((32, 32)))
    report = f.profile.memory_report()
    assert report.gc.host == 2 * 8192
    assert report.no_gc.host == 2 * 8192 + 8
    assert report.views == 8192 + 1  # the transpose, and the int8 constant's broadcast


def test_an_inplace_result_is_no_new_memory(memory):
    v = T.dvector("v")
    with config.change_flags(allow_gc=True):
        f = function([v], T.set_subtensor(T.exp(v)[:10], 0.0).sum(), profile=True)
    f(np.ones(1024))
    assert any(n.op.destroy_map for n in f._nodes)
    report = f.profile.memory_report()
    assert report.current.host == 8192 + 8  # exp's buffer, written in place, then the sum
    assert report.no_inplace.host == 2 * 8192  # a new buffer next to exp's
    assert report.inplace == 8192


def test_a_lazy_ifelse_counts_the_branch_the_last_call_ran(memory):
    c, d, v = T.dscalar("c"), T.dscalar("d"), T.dvector("v")
    with config.change_flags(allow_gc=True):
        f = function([c, d, v], ifelse(T.lt(c, d), T.exp(v), T.log(v) * T.exp(v)), profile=True)
    f(1, 0, np.ones(1024))  # the else branch: exp and the product are both alive once
    assert f.profile.memory_report().current.host == 2 * 8192 + 1
    f(0, 1, np.ones(1024))  # the then branch: only exp (the else branch's sizes are stale)
    report = f.profile.memory_report()
    assert report.current.host == 8192 + 1
    # a linker running every node would make both branches (sizes of the call that ran each)
    assert report.current_every.host == 2 * 8192 + 1


def test_a_scans_step_peak_is_held_while_the_scan_runs(memory):
    """The step's own peak (its Alloc for the outer product, 512 kB, and two 8 B values) is
    held on top of the outer graph's values alive then (the length, 8 B; the output, 32 B)."""
    X = T.dmatrix("X")
    with config.change_flags(allow_gc=True):
        out, _ = scan(lambda row: T.outer(row, row).sum() + row.sum(), sequences=X, profile=True)
        f = function([X], out, profile=True)
    f(np.ones((4, 256)))
    loop = next(n for n in f._nodes if hasattr(n.op, "inner_function"))
    step = loop.op.inner_function().profile.peak_memory()
    assert step["host"] >= 256 * 256 * 8
    assert f.profile.memory_report().current.host == step["host"] + 8 + 4 * 8
    out = io.StringIO()
    f.profile.summary_memory(file=out)
    assert f"{step['host']:9d}B  the peak of node 1's inner function" in out.getvalue()


@pytest.mark.parametrize("where", ["opencl", "cuda"])
def test_host_and_device_are_counted_apart(memory, where):
    with use(DEVICES[where]), config.change_flags(floatX="float32", allow_gc=True):
        x = T.fvector("x")
        f = function([x], T.exp(x) + T.log(x), profile=True)
        f(np.ones(1024, dtype="float32"))
    names = [type(n.op).__name__ for n in f._nodes]
    assert names[0] == "GpuFromHost" and names[-1] == "HostFromGpu" and len(names) == 3
    report = f.profile.memory_report()
    # the input's copy and the fused result on the device; the result's copy on the host
    assert (report.gc.host, report.gc.device, report.gc.total) == (V4, 2 * V4, 2 * V4)
    assert report.no_gc.total == 3 * V4


def _two_chains(schedule=None):
    """Two independent exp -> sum chains of 8 kB; the order decides the peak."""
    x, y = T.dvector("x"), T.dvector("y")
    mode = Mode(linker=VM_Linker(allow_gc=True, schedule=schedule), optimizer=None)
    f = function([x, y], [T.exp(x).sum(), T.exp(y).sum()], mode=mode, profile=True)
    f(np.ones(1024), np.ones(1024))
    return f


def _both_exps_first(fgraph):
    nodes = fgraph.toposort()
    return sorted(nodes, key=lambda n: (type(n.op).__name__ != "Elemwise", nodes.index(n)))


def test_the_minimum_peak_over_orders_beats_a_bad_order(memory):
    f = _two_chains(_both_exps_first)
    report = f.profile.memory_report(min_peak=True)
    assert report.current.host == 2 * 8192 + 8  # both exps alive when the first sum runs
    assert report.min_peak.exact and report.min_peak.high == 8192 + 2 * 8  # one chain, then the other
    assert report.min_peak.low == report.min_peak.high
    out = io.StringIO()
    f.profile.summary_memory(file=out)
    held = out.getvalue().split("Held at the peak (16KB, while node 2 ran: Sum")[1].split("---")[0]
    assert "8192B  Elemwise{exp,no_inplace}.0 (made by node 0; read by node 2)" in held
    assert "8192B  Elemwise{exp,no_inplace}.0 (made by node 1; read later by node 3)" in held
    assert "8B  Sum{axis=[0], acc_dtype=float64}.0 (made by node 2; an output of the function)" in held


def test_the_minimum_peak_search_is_bounded(memory):
    f = _two_chains(_both_exps_first)
    model = f._profile_record.memory_model()
    found = min_peak(model, budget=2)  # two nodes ready at first: one try is all it may do
    assert not found.exact and found.steps == 1 and "stopped at its bound" in found.why
    assert found.low == 8192 + 8 <= 8192 + 2 * 8 <= found.high == 2 * 8192 + 8
    # a graph whose orders are far too many to try still answers
    xs = [T.dvector(f"x{i}") for i in range(40)]
    g = function(xs, [T.exp(x).sum() for x in xs], mode=Mode(optimizer=None), profile=True)
    g(*[np.ones(4)] * 40)
    wide = min_peak(g._profile_record.memory_model())
    # the executed order runs each chain to its sum: at the last sum, 40 sums and one exp
    assert not wide.exact and wide.low == 32 + 8 and wide.high == 40 * 8 + 32


def test_with_gc_the_executor_frees_each_value_after_its_last_reader():
    """exp's value is gone once the product (its last reader) has run, not at the call's end;
    without gc it stays."""
    seen = {}

    def watch(node, thunk, storage_map, compute_map):
        seen[type(node.op).__name__] = {str(v): storage_map[v][0] is None for v in storage_map
                                        if v.owner is not None}

    x = T.dvector("x")
    for gc in (True, False):
        mode = Mode(linker=VM_Linker(allow_gc=gc, callback=watch), optimizer=None)
        f = function([x], (T.exp(x) * 2).sum(), mode=mode)
        f(np.ones(3))
        names = [type(n.op).__name__ for n in f._nodes]
        assert names[-1] == "CAReduce"
        assert seen["CAReduce"]["Elemwise{exp,no_inplace}.0"] is gc
        assert f(np.ones(3)) == pytest.approx(6 * np.e)


def test_without_profile_memory_no_shapes_are_recorded():
    x = T.dvector("x")
    f = function([x], T.exp(x), profile=True)
    f(np.ones(3))
    assert f._profile_record.shapes is None and "MC[0]" not in f._call.source
    assert f.profile.memory_report() is None
    out = io.StringIO()
    f.profile.summary(file=out)
    assert "Memory Profile" not in out.getvalue()
    assert "Peak memory of intermediates" in out.getvalue()


def test_min_memory_size_hides_small_nodes(memory):
    x = T.dvector("x")
    f = function([x], T.exp(x), profile=True)
    f(np.ones(3))
    out = io.StringIO()
    with config.change_flags(**{"profiling.min_memory_size": 100}):
        f.profile.summary_memory(file=out)
    assert "All Apply nodes have output sizes that take less than 100B." in out.getvalue()
    out = io.StringIO()
    with config.change_flags(**{"profiling.min_memory_size": 1}):
        f.profile.summary_memory(file=out)
    assert "       24B  [(3,)] c Elemwise{exp,no_inplace}(x)" in out.getvalue()


def test_explain_names_the_node_and_the_value_at_the_peak():
    import arignote
    with config.change_flags(allow_gc=True):
        f = _theano_test_graph()
    text = arignote.explain(f, file=io.StringIO())
    line = next(line for line in text.splitlines() if line.startswith("memory"))
    at = f._nodes.index(next(n for n in reversed(f._nodes) if type(n.op).__name__ == "CAReduce"))
    assert line.startswith(f"memory (last profiled call, allow_gc=True): peak of intermediates 4.2 MB on "
                           f"the host, 0 B on the device, while node {at} ran")
    assert "the largest value then held: Alloc.0 (4.2 MB, made by node" in line
    x = T.dvector("x")
    plain = function([x], T.exp(x))  # no profile: nothing to say about memory
    plain(np.ones(3))
    assert "memory" not in arignote.explain(plain, file=io.StringIO())


def test_the_minimum_peak_keeps_an_inplace_node_after_the_values_other_readers(memory, monkeypatch):
    """``a`` is overwritten by ``a += X``, so ``a * 2`` (kept: an output) must run first: then
    a, X and the product are alive at once (3 x 8 kB). Running the in-place add first would
    free X before the product is made (2 x 8 kB + 8 B), an order the graph does not allow."""
    from arignote.graph.fg import FunctionGraph
    from arignote.tensor import inplace
    x, y = T.dvector("x"), T.dvector("y")
    a = T.exp(x)
    with config.change_flags(allow_gc=True):
        f = function([x, y], [inplace.add_inplace(a, T.exp(y)).sum(), a * 2], mode=Mode(optimizer=None),
                     accept_inplace=True, profile=True)
    assert f(np.ones(1024), np.ones(1024))[1] == pytest.approx(2 * np.e)  # read before the add
    model = f._profile_record.memory_model()
    assert min_peak(model).high == 3 * 8192
    monkeypatch.setattr(FunctionGraph, "orderings", lambda self: {})
    assert min_peak(model).high == 2 * 8192 + 8  # what ignoring the constraint would claim
