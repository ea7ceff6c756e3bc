"""The compiled-kernel cache: shared by processes and threads without locks, self-repairing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from arignote import config, function, tensor
from arignote.backends.cpu import native, native_compiler

pytestmark = pytest.mark.skipif(not native.available(), reason="no working C compiler")
ROOT = Path(__file__).resolve().parents[2]

# A graph no other test builds, of several native kernels (one module).
PROGRAM = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import numpy as np
    from arignote import function, tensor as T
    from arignote.backends.cpu import native
    go = Path(sys.argv[1])
    while not go.exists():
        time.sleep(0.001)
    x = T.dvector("x")
    y = T.arctan(T.cosh(x) * 3 - 1) / 7
    z = T.sum(T.sqrt(T.abs(x) + 2) * T.log1p(T.abs(x)), axis=0)
    f = function([x], [y, T.exp(T.sin(x) * 2) - x * 5, z])
    v = np.linspace(-3, 3, 5000)
    f(v)  # numpy's kernels, while the native ones build in the background
    assert f.wait_native() == "native", f.native_status
    r = f(v)
    np.testing.assert_allclose(r[0], np.arctan(np.cosh(v) * 3 - 1) / 7, rtol=1e-13)
    np.testing.assert_allclose(r[1], np.exp(np.sin(v) * 2) - v * 5, rtol=1e-13, atol=1e-12)
    print(json.dumps({"native": sum(t.__globals__.get("K", native.refuse) is not native.refuse
                                    for t in f._thunks if hasattr(t, "__globals__"))}))
""")


def _env(compiledir: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["ARIGNOTE_FLAGS"] = f"compiledir={compiledir},native_min_size=0"
    return env


def test_four_processes_compile_the_same_graph_at_once(tmp_path):
    cache_dir, go = tmp_path / "cache", tmp_path / "go"
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    procs = [subprocess.Popen([sys.executable, str(script), str(go)], env=_env(cache_dir),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    go.touch()  # all four start compiling together, on an empty cache
    outputs = [p.communicate(timeout=600) for p in procs]
    counts = set()
    for p, (out, err) in zip(procs, outputs):
        assert p.returncode == 0, err
        counts.add(json.loads(out)["native"])
    (kernels,) = counts
    assert kernels >= 3
    files = sorted(f.name for f in cache_dir.iterdir())
    assert not [f for f in files if f.endswith(".tmp")], files  # no half-written entry left
    modules = [f for f in files if f.endswith(".so")]
    indexes = [f for f in files if f.endswith(".idx")]
    assert len(modules) == 1 and len(indexes) == kernels, files  # each kernel in the cache once
    for idx in indexes:
        assert (cache_dir / idx).read_text().split()[0] == modules[0]


def test_a_corrupt_entry_is_detected_and_rebuilt(tmp_path):
    cache_dir, go = tmp_path / "cache", tmp_path / "go"
    go.touch()
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)

    def run() -> None:
        done = subprocess.run([sys.executable, str(script), str(go)], env=_env(cache_dir),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["native"] >= 3

    run()
    (module,) = cache_dir.glob("*.so")
    module.write_bytes(module.read_bytes()[: 100])  # truncated, as by a full disk
    run()
    assert native.cache.read_verified(module, (cache_dir / next(
        f for f in os.listdir(cache_dir) if f.endswith(".idx"))).read_text().split()[1]) is not None


def test_two_threads_compile_at_once(tmp_path):
    results: list = []
    errors: list = []
    start = threading.Barrier(2)

    def compile_and_run() -> None:
        try:
            start.wait()
            x = tensor.fvector("x")
            f = function([x], tensor.tanh(tensor.cos(x) * 4 + 1) * 3)
            v = np.linspace(-2, 2, 3000).astype("float32")
            results.append(np.allclose(f(v), np.tanh(np.cos(v) * 4 + 1) * 3, rtol=1e-5, atol=1e-6))
        except Exception as err:  # reported below, with the thread's traceback lost
            errors.append(err)

    with config.change_flags(compiledir=str(tmp_path), native_min_size=0):
        threads = [threading.Thread(target=compile_and_run) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and results == [True, True]
    assert len(list(tmp_path.glob("*.so"))) >= 1


def test_without_a_compiler_numpy_runs(tmp_path):
    with config.change_flags(cxx="no-such-compiler", compiledir=str(tmp_path), native_min_size=0):
        chain = native.toolchain()
        assert isinstance(chain, native_compiler.Unavailable) and "apt install gcc" in chain.fix
        x = tensor.dvector("x")
        f = function([x], tensor.exp(x) * 2)
        v = np.linspace(0, 1, 10)
        np.testing.assert_array_equal(f(v), np.exp(v) * 2)
    assert not list(tmp_path.glob("*.so"))


def test_generated_python_is_cached_compiled(tmp_path):
    source = "def thunk():\n    return 6 * 7\n"
    with config.change_flags(compiledir=str(tmp_path)):
        code = native.cache.python_code(source, "<thunk test>")
        (entry,) = (tmp_path / "py").iterdir()
        again = native.cache.python_code(source, "<thunk test>")  # loaded from the entry
        entry.write_bytes(b"\x00garbage")  # a corrupt entry is compiled again and rewritten
        repaired = native.cache.python_code(source, "<thunk test>")
        assert native.cache.python_code(source + "\n", "<thunk test>") is not None
    for c in (code, again, repaired):
        ns: dict = {}
        exec(c, ns)
        assert ns["thunk"]() == 42 and c.co_filename == "<thunk test>"
    assert again is not code and entry.read_bytes() != b"\x00garbage"
    assert len(list((tmp_path / "py").iterdir())) == 2


def test_a_compiledir_that_cannot_be_made_only_costs_compiling(tmp_path):
    """A file where the cache directory should be: functions still compile and run (the
    generated Python is compiled each time, nothing is written)."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    with config.change_flags(compiledir=str(blocker / "cache")):
        ns: dict = {}
        exec(native.cache.python_code("def thunk():\n    return 42\n", "<thunk test>"), ns)
        assert ns["thunk"]() == 42
        x = tensor.dvector("x")
        np.testing.assert_array_equal(function([x], x * 7)(np.ones(3)), np.full(3, 7.0))
    assert blocker.read_text() == ""
