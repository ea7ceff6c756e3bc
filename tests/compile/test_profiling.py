"""Profiles: numbers that add up (node times within call times, compile parts within the
compile), transfers that match explain(), on the CPU and on OpenCL; nothing in the call
path of a function compiled without a profile."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import pytest

import arignote
from arignote import Mode, config, function, shared, tensor as T
from arignote.backends.gpu import get_context
from arignote.backends.gpu.explain import transfer_bytes
from arignote.backends.gpu.placement import TRANSFERS
from arignote.backends.gpu.type import GpuFromHost, HostFromGpu
from arignote.compile.profiling import ProfileStats
from arignote.graph.rewriting.db import PHASES
from tests.gpu.conftest import DEVICES, use

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")


@pytest.fixture(params=["cpu", "opencl"])
def where(request):
    with use(DEVICES[request.param]), config.change_flags(floatX="float32"):
        yield request.param


def _training_step(**kwargs):
    rng = np.random.default_rng(0)
    X, y = T.fmatrix("X"), T.ivector("y")
    w = shared(rng.normal(size=(20, 4)).astype("float32"), name="w")
    cost = T.nnet.categorical_crossentropy(T.nnet.softmax(T.dot(X, w)), y).mean()
    step = function([X, y], cost, updates=[(w, w - np.float32(0.1) * arignote.grad(cost, w))],
                    name="step", **kwargs)
    return step, rng.normal(size=(16, 20)).astype("float32"), rng.integers(0, 4, 16).astype("int32")


def test_node_times_add_up_within_the_call_times(where, monkeypatch):
    if where == "opencl":  # kernels built earlier in this process would be found, not built
        monkeypatch.setattr(get_context(None).device, "_kernels", {})
    step, data, labels = _training_step(profile=True)
    profile = step.profile
    assert isinstance(profile, ProfileStats) and profile.message == "step"
    for _ in range(5):
        step(data, labels)
    nodes = step.maker.fgraph.toposort()
    assert profile.fct_callcount == 5
    assert set(profile.apply_time) == set(nodes)
    assert all(profile.apply_callcount[n] == 5 for n in nodes)
    assert all(t >= 0 for t in profile.apply_time.values())
    node_total = sum(profile.apply_time.values())
    assert 0 < node_total <= profile.fct_call_time
    assert sum(profile.class_time().values()) == pytest.approx(node_total)
    assert sum(profile.op_time().values()) == pytest.approx(node_total)
    # the compile: rewriting (per phase) and linking are parts of the whole
    assert 0 < profile.optimizer_time + profile.linker_time <= profile.compile_time
    assert set(profile.rewrite_times) <= {"merge", *PHASES}
    assert sum(profile.rewrite_times.values()) <= profile.optimizer_time
    if where == "opencl":
        assert profile.kernel_builds > 0 and profile.kernel_build_time > 0


def test_transfers_per_call_match_explain(where):
    step, data, labels = _training_step(profile=True)
    for _ in range(3):
        step(data, labels)
    nodes = step.maker.fgraph.toposort()
    moves = [n for n in nodes if isinstance(n.op, TRANSFERS)]
    expected = {}
    for cls, direction in ((GpuFromHost, "to the device"), (HostFromGpu, "to the host")):
        group = [n for n in moves if isinstance(n.op, cls)]
        if group:
            expected[direction] = (len(group), sum(transfer_bytes(step, n) for n in group))
    assert step.profile.transfers == expected
    text = arignote.explain(step, file=io.StringIO())
    if where == "cpu":
        assert expected == {} and "transfers per call: none" in text
    else:
        up, down = expected["to the device"], expected["to the host"]
        assert f"{up[0]} to the device" in text and f"{down[0]} to the host" in text


def test_the_summary_has_theanos_sections(where):
    step, data, labels = _training_step(profile=True)
    step(data, labels)
    out = io.StringIO()
    step.profile.summary(file=out, n_ops_to_print=3, n_apply_to_print=2)
    text = out.getvalue()
    for part in ("Function profiling", "Message: step", "Time in 1 calls to Function.__call__",
                 "Time in thunks", "Total compile time", "Rewriting time", "canonicalize",
                 "Linker time", "Kernel builds", "Transfers per call", "Peak memory of intermediates",
                 "\nClass\n", "\nOps\n", "\nApply\n", "<% time> <sum %> <apply time>"):
        assert part in text, part
    assert "remaining" in text.split("\nApply\n")[1]  # only two nodes listed
    if where == "opencl":
        full = io.StringIO()
        step.profile.summary(file=full)
        classes = full.getvalue().split("\nClass\n")[1].split("\nOps\n")[0]
        assert " gpu " in classes and " transfer " in classes and "GpuFromHost" in classes


def test_peak_memory_of_intermediates_kept_or_freed():
    x = T.dvector("x")
    f = function([x], (T.exp(x) * 2).sum(), mode=Mode(optimizer=None), profile=True)
    f(np.ones(1000))
    # exp and the product are 8000 bytes each, the sum 8; the constant's broadcast is a view
    assert f.profile.peak_memory(allow_gc=False) == {"host": 16008, "device": 0}
    assert f.profile.peak_memory(allow_gc=True) == {"host": 16000, "device": 0}


def test_without_a_profile_the_call_path_has_no_timing():
    x = T.vector("x")
    plain = function([x], T.exp(x))
    profiled = function([x], T.exp(x), profile=True)
    assert plain.profile is None and "CLOCK" not in plain._call.source
    assert "CLOCK" in profiled._call.source


def test_a_gpu_node_is_timed_with_the_device_synchronised():
    with use("opencl"):
        x = T.fvector("x")
        f = function([x], T.exp(x), profile=True)
    assert "SY0()" in f._call.source  # the GpuElemwise waits for its kernel
    y = T.fvector("y")
    g = function([y], y * 2, profile=True)
    assert "SY" not in g._call.source


def test_one_profile_shared_by_two_functions_and_config_profile():
    shared_profile = ProfileStats(message="both")
    x = T.vector("x")
    f = function([x], T.exp(x), profile=shared_profile)
    g = function([x], T.log(x), profile=shared_profile)
    f(np.ones(3))
    g(np.ones(3))
    g(np.ones(3))
    assert shared_profile.fct_callcount == 3 and len(shared_profile.apply_time) == 2
    with config.change_flags(profile=True):
        h = function([x], x * 2, name="h")
    assert h.profile is not None and h.profile.message == "h"
    named = function([x], x * 3, profile="my profile")
    assert named.profile.message == "my profile"
    assert function([x], x * 4, profile=False).profile is None
    assert h.copy().profile.message == "h copy"


def test_config_profile_prints_every_profile_at_exit():
    code = ("import numpy, arignote\nfrom arignote import tensor as T\n"
            "x = T.vector('x')\nf = arignote.function([x], T.exp(x), name='seed')\nf(numpy.ones(4))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARIGNOTE")}
    env.update(ARIGNOTE_FLAGS="profile=True", PYTHONPATH=SRC)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Function profiling" in result.stderr and "Message: seed" in result.stderr
    assert "Time in 1 calls to Function.__call__" in result.stderr


@pytest.mark.parametrize("destination", ["stdout", "file"])
def test_profiling_destination_says_where_the_profiles_at_exit_go(destination, tmp_path):
    code = ("import numpy, arignote\nfrom arignote import tensor as T\n"
            "x = T.vector('x')\nf = arignote.function([x], T.exp(x), name='seed')\nf(numpy.ones(4))\n")
    target = tmp_path / "profiles.txt"
    where = "stdout" if destination == "stdout" else str(target)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARIGNOTE")}
    env.update(ARIGNOTE_FLAGS=f"profile=True,profiling.destination={where}", PYTHONPATH=SRC)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Function profiling" not in result.stderr
    text = result.stdout if destination == "stdout" else target.read_text()
    assert "Function profiling" in text and "Message: seed" in text


def test_theanos_call_of_profile_stats(capsys):
    import io
    import arignote.compat.theano.top as top
    profile = ProfileStats(False, gpu_checks=False)  # Theano's arguments: no print at exit
    assert top.ProfileStats is ProfileStats
    x = T.vector("x")
    f = function([x], T.exp(x).sum(), profile=profile, name="theanos")
    f(np.ones(4, dtype=x.dtype))
    out = io.StringIO()
    f.profile.summary(out)
    assert f.profile is profile and "Time in 1 calls" in out.getvalue() and "Sum{" in out.getvalue()


def test_the_per_op_counts_and_the_summarys_parts_as_theano_named_them():
    x = T.dvector("x")
    prof = ProfileStats(atexit_print=False)
    f = function([x], T.exp(x) * T.exp(x * x) + x, profile=prof, mode=Mode(optimizer=None))
    for _ in range(3):
        f(np.ones(4))
    assert prof.op_nodes()["Elemwise{exp,no_inplace}"] == 2
    assert prof.op_callcount()["Elemwise{exp,no_inplace}"] == 6
    assert prof.class_nodes() == {"Elemwise": 5} and prof.class_callcount() == {"Elemwise": 15}
    assert sum(prof.op_time().values()) == pytest.approx(sum(prof.apply_time.values()))
    totals = prof.compute_total_times()
    add = f.maker.fgraph.outputs[0].owner
    mul = add.inputs[0].owner
    assert totals[add] == pytest.approx(prof.apply_time[add] + totals[mul])
    assert totals[mul] == pytest.approx(sum(prof.apply_time.values()) - prof.apply_time[add])
    parts = []
    for part in (prof.summary_function, prof.summary_class, prof.summary_ops, prof.summary_nodes):
        out = io.StringIO()
        part(out)
        parts.append(out.getvalue())
    whole = io.StringIO()
    prof.summary(whole)
    assert "".join(parts).splitlines()[5:] == whole.getvalue().splitlines()[5:]  # times differ only above
    assert [p.splitlines()[0] for p in parts] == ["Function profiling", "Class", "Ops", "Apply"]
    out = io.StringIO()
    prof.summary_nodes(out, N=1)
    assert "remaining 4 account for" in out.getvalue()  # 5 nodes, 1 shown


def test_ignore_first_call_leaves_each_functions_first_call_out():
    x = T.dvector("x")
    with config.change_flags({"profiling.ignore_first_call": True}):
        f = function([x], T.exp(x) * 2, profile=ProfileStats(atexit_print=False))
    g = function([x], T.exp(x) * 2, profile=ProfileStats(atexit_print=False))
    for fn in (f, g):
        fn(np.ones(3))
    assert f.profile.fct_callcount == 0 and set(f.profile.apply_callcount.values()) == {0}
    assert sum(f.profile.apply_time.values()) == 0 and g.profile.fct_callcount == 1
    for _ in range(2):
        f(np.ones(3))
    assert f.profile.fct_callcount == 2 and set(f.profile.apply_callcount.values()) == {2}
    assert f.profile.fct_call_time > 0


def test_profiling_debugprint_ends_the_summary_with_the_timed_graph():
    x = T.dvector("x")
    f = function([x], T.exp(x) * 2, profile=ProfileStats(atexit_print=False), mode=Mode(optimizer=None))
    f(np.ones(3))
    plain = io.StringIO()
    f.profile.summary(plain)
    assert "Timing Info" not in plain.getvalue()
    out = io.StringIO()
    with config.change_flags({"profiling.debugprint": True}):
        f.profile.summary(out)
    text = out.getvalue()
    assert text.startswith(plain.getvalue().split("\n")[0]) and "Timing Info" in text
    assert "Elemwise{exp,no_inplace} [id B] <TensorType(float64, vector)> ''   0 --> " in text
