"""The disk cache of OpenCL programs across real processes: a new process loads the program
a previous one stored, a corrupt entry is rebuilt, processes building at once leave one
whole entry. (On PoCL, which keeps its own cache, ours is switched on for these tests.)"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# How each program is made (from source or from a binary of ours), and the kernels built.
PROGRAM = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import numpy as np
    import pyopencl as cl
    from arignote import config, function, tensor as T
    from arignote.backends.gpu import get_context
    from arignote.compile.profiling import kernel_builds
    made, Program = [], cl.Program
    def program(context, *args):
        made.append("binary" if len(args) == 2 else "source")
        return Program(context, *args)
    cl.Program = program
    go = Path(sys.argv[1])
    while not go.exists():
        time.sleep(0.001)
    with config.change_flags(device="opencl", floatX="float32", force_device=True):
        get_context(None).device.cache_binaries = True
        x = T.fvector("x")
        f = function([x], [T.tanh(x) * 3 + 1, T.sum(x ** 2)])
        v = np.linspace(-1, 1, 7).astype("float32")
        a, b = f(v)
    np.testing.assert_allclose(a, np.tanh(v) * 3 + 1, rtol=1e-6)
    np.testing.assert_allclose(b, (v ** 2).sum(), rtol=1e-6)
    print(json.dumps({"made": made, "kernels": kernel_builds()[1]}))
""")


def _start(tmp_path: Path, go: Path) -> subprocess.Popen:
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, ARIGNOTE_FLAGS=f"compiledir={tmp_path / 'cache'}")
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, str(script), str(go)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _entry(cache: Path) -> Path:
    """The one program entry in ``cache``, checked whole: its digest, then the binary."""
    files = sorted(f.name for f in cache.iterdir())
    assert not [f for f in files if f.endswith(".tmp")], files
    (entry,) = cache.glob("gpu-*")
    data = entry.read_bytes()
    assert entry.suffix == ".bin" and data[:32] == hashlib.sha256(data[32:]).digest()
    return entry


def test_a_new_process_loads_the_stored_program_and_rebuilds_a_corrupt_one(opencl, tmp_path):
    go = tmp_path / "go"
    go.touch()
    first = _finish(_start(tmp_path, go))
    assert first == {"made": ["source"], "kernels": 2}  # both kernels in one program
    entry = _entry(tmp_path / "cache")
    assert _finish(_start(tmp_path, go)) == {"made": ["binary"], "kernels": 2}
    entry.write_bytes(entry.read_bytes()[:-100])  # truncated, as by a full disk
    assert _finish(_start(tmp_path, go)) == {"made": ["source"], "kernels": 2}
    assert _entry(tmp_path / "cache") == entry  # written again, whole


def test_processes_building_at_once_leave_one_whole_entry(opencl, tmp_path):
    go = tmp_path / "go"
    processes = [_start(tmp_path, go) for _ in range(3)]
    go.touch()  # all three start on an empty cache together
    results = [_finish(p) for p in processes]
    assert all(r["kernels"] == 2 and len(r["made"]) == 1 for r in results)
    _entry(tmp_path / "cache")
