"""The disk cache of OpenCL programs across real processes: a new process loads the program
a previous one stored, a corrupt entry is rebuilt, processes building at once leave one
whole entry. On PoCL, binaries come from a background producer (binary_producer.py): the
second build from source starts exactly one, its parent does not wait for it, later
processes load its binary; a stale lock is taken over; the flag off starts none. The
inline store (a GPU's) is switched on for PoCL in the tests of it."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from arignote.backends.gpu import binary_producer

ROOT = Path(__file__).resolve().parents[2]

# How each program is made (from source or from a binary of ours), the kernels built and the
# producers asked for (True: started). argv: the file to wait for, "inline" (store binaries
# as they are built, as on a GPU) or "produce", and for a slow producer the file it waits for.
PROGRAM = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import numpy as np
    import pyopencl as cl
    from arignote import config, function, tensor as T
    from arignote.backends.gpu import binary_producer, get_context
    from arignote.compile.profiling import kernel_builds
    made, Program = [], cl.Program
    def program(context, *args):
        made.append("binary" if len(args) == 2 else "source")
        return Program(context, *args)
    cl.Program = program
    started, start = [], binary_producer.start
    def starting(lock, job):
        started.append(start(lock, job))
        return started[-1]
    binary_producer.start = starting
    if len(sys.argv) > 3:  # a producer that waits for a file before it starts
        command = binary_producer._command
        binary_producer._command = lambda lock: ["sh", "-c", 'while [ ! -e "$0" ]; do sleep 0.05; done; '
                                                 'exec "$@"', sys.argv[3], *command(lock)]
    go = Path(sys.argv[1])
    while not go.exists():
        time.sleep(0.001)
    with config.change_flags(device="opencl", floatX="float32", force_device=True):
        get_context(None).device.cache_binaries = sys.argv[2] == "inline"
        x = T.fvector("x")
        f = function([x], [T.tanh(x) * 3 + 1, T.sum(x ** 2)])
        v = np.linspace(-1, 1, 7).astype("float32")
        a, b = f(v)
    np.testing.assert_allclose(a, np.tanh(v) * 3 + 1, rtol=1e-6)
    np.testing.assert_allclose(b, (v ** 2).sum(), rtol=1e-6)
    print(json.dumps({"made": made, "kernels": kernel_builds()[1], "started": started}))
""")


def _start(tmp_path: Path, go: Path, how: str = "inline", *, produce: bool = True,
           release: Path | None = None) -> subprocess.Popen:
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, ARIGNOTE_FLAGS=f"compiledir={tmp_path / 'cache'},"
               f"opencl.background_binaries={produce}")
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, str(script), str(go), how, *[str(release)] * bool(release)],
                            env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _run(tmp_path: Path, how: str = "produce", **options) -> dict:
    go = tmp_path / "go"
    go.touch()
    return _finish(_start(tmp_path, go, how, **options))


def _finish(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _entry(cache: Path) -> Path:
    """The one program entry in ``cache``, checked whole: its digest, then the binary."""
    files = sorted(f.name for f in cache.iterdir())
    assert not [f for f in files if f.endswith(".tmp")], files
    (entry,) = cache.glob("gpu-*.bin")
    data = entry.read_bytes()
    assert data[:32] == hashlib.sha256(data[32:]).digest()
    return entry


def _produced(cache: Path) -> Path:
    """The entry, once the producer has removed its lock (it ends) and left it whole."""
    deadline = time.monotonic() + 600
    while list(cache.glob("gpu-*.lock")):
        assert time.monotonic() < deadline, "the producer did not end"
        time.sleep(0.05)
    return _entry(cache)


def test_a_new_process_loads_the_stored_program_and_rebuilds_a_corrupt_one(opencl, tmp_path):
    go = tmp_path / "go"
    go.touch()
    first = _finish(_start(tmp_path, go))
    assert first == {"made": ["source"], "kernels": 2, "started": []}  # both kernels in one program
    entry = _entry(tmp_path / "cache")
    assert _finish(_start(tmp_path, go)) == {"made": ["binary"], "kernels": 2, "started": []}
    entry.write_bytes(entry.read_bytes()[:-100])  # truncated, as by a full disk
    assert _finish(_start(tmp_path, go)) == {"made": ["source"], "kernels": 2, "started": []}
    assert _entry(tmp_path / "cache") == entry  # written again, whole


def test_processes_building_at_once_leave_one_whole_entry(opencl, tmp_path):
    go = tmp_path / "go"
    processes = [_start(tmp_path, go) for _ in range(3)]
    go.touch()  # all three start on an empty cache together
    results = [_finish(p) for p in processes]
    assert all(r["kernels"] == 2 and len(r["made"]) == 1 for r in results)
    _entry(tmp_path / "cache")


def test_the_second_build_from_source_starts_one_producer_whose_binary_later_processes_load(
        opencl, tmp_path):
    cache, release = tmp_path / "cache", tmp_path / "release"
    assert _run(tmp_path) == {"made": ["source"], "kernels": 2, "started": []}  # a marker only
    (marker,) = cache.glob("gpu-*.src")
    lock = marker.with_suffix(".lock")
    # The second process starts the producer, which waits for `release`: the process has
    # returned while its producer still runs (holds the lock, has stored nothing).
    assert _run(tmp_path, release=release)["started"] == [True]
    assert lock.exists() and not list(cache.glob("gpu-*.bin"))
    # A third one, meanwhile, builds from source and starts no second producer.
    assert _run(tmp_path) == {"made": ["source"], "kernels": 2, "started": [False]}
    release.touch()
    _produced(cache)
    # From now on: the binary, nothing from source, no producer.
    assert _run(tmp_path) == {"made": ["binary"], "kernels": 2, "started": []}


def test_a_stale_lock_is_taken_over_and_a_corrupt_binary_rebuilt_and_produced_again(opencl, tmp_path):
    cache = tmp_path / "cache"
    _run(tmp_path)
    (marker,) = cache.glob("gpu-*.src")
    lock = marker.with_suffix(".lock")
    lock.write_text("{}")  # left by a producer that was killed
    os.utime(lock, (time.time() - 2 * binary_producer.STALE,) * 2)
    assert _run(tmp_path)["started"] == [True]
    entry = _produced(cache)
    entry.write_bytes(entry.read_bytes()[:-100])  # truncated, as by a full disk
    assert _run(tmp_path) == {"made": ["source"], "kernels": 2, "started": [True]}
    assert _produced(cache) == entry  # whole again
    assert _run(tmp_path)["made"] == ["binary"]


def test_with_the_flag_off_no_marker_and_no_producer(opencl, tmp_path):
    for _ in range(2):
        assert _run(tmp_path, produce=False) == {"made": ["source"], "kernels": 2, "started": []}
    assert not list((tmp_path / "cache").glob("gpu-*"))
