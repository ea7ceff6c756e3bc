"""Tiered native kernels: numpy's kernels run while the compiler works in the background,
then the native ones are swapped in between two calls, all of a function's at once.

The compiler here is a wrapper around the real one that logs each run, holds module builds
while a ``hold`` file exists and fails them while a ``fail`` file exists, so each test
decides when (and whether) a build ends.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from arignote import config, function, tensor
from arignote.backends.cpu import native
from arignote.devices import native_section

pytestmark = pytest.mark.skipif(not native.available(), reason="no working C compiler")
ROOT = Path(__file__).resolve().parents[2]


class Compiler:
    def __init__(self, where: Path):
        self.log, self.hold, self.fail = where / "log", where / "hold", where / "fail"
        self.path = where / "cc"
        real = native.toolchain().path
        self.path.write_text(textwrap.dedent(f"""\
            #!/bin/sh
            case "$*" in *module.c*)
              echo module >> {self.log}
              while [ -e {self.hold} ]; do sleep 0.01; done
              if [ -e {self.fail} ]; then echo "cc: error: refused by the test" >&2; exit 1; fi;;
            esac
            exec {real} "$@"
            """))
        self.path.chmod(0o755)

    def module_runs(self) -> int:
        return len(self.log.read_text().split()) if self.log.exists() else 0


@pytest.fixture(scope="module")
def compiler(tmp_path_factory):
    return Compiler(tmp_path_factory.mktemp("compiler"))


@pytest.fixture
def held(compiler, tmp_path):
    """Background builds with the wrapper, into an empty cache, held until released."""
    compiler.hold.touch()
    with config.change_flags(cxx=str(compiler.path), compiledir=str(tmp_path), native_build="background"):
        try:
            yield compiler
        finally:
            compiler.hold.unlink(missing_ok=True)
            compiler.fail.unlink(missing_ok=True)


def _graph(first, second):
    """Two native nodes (two outputs of x: not fused), ``first(x)`` and ``second(x)``; each
    test uses ops of its own, so its kernels are new to this process (a constant would not
    do: constants are arguments of the kernels)."""
    x = tensor.fvector("x")
    return x, [first(x), second(x)]


def _on_numpy(f) -> list:
    return [t.__globals__["K"] is native.refuse for t in f._thunks]


def _wait_built(f) -> None:
    _wait_for(lambda: f.native_status != native.BUILDING)


V = np.linspace(-3, 3, 50_000).astype("float32")


def test_numpy_runs_during_the_build_then_the_native_kernels(held):
    x, outs = _graph(tensor.tanh, tensor.exp)
    f = function([x], outs)
    assert f.native_status == native.NEW
    before = f(V)
    assert f.native_status == native.BUILDING and all(_on_numpy(f))
    with config.change_flags(cxx=""):
        reference = function([x], outs)(V)  # numpy's path
    for got, want in zip(before, reference):
        np.testing.assert_array_equal(got, want)
    held.hold.unlink()
    _wait_built(f)
    assert f.native_status == native.NATIVE  # swapped in at once: no call was running
    assert not any(_on_numpy(f))
    after = f(V)
    for got, want in zip(after, reference):
        np.testing.assert_array_max_ulp(got, want, maxulp=4)
    assert any((a != b).any() for a, b in zip(after, reference))  # the native path did run


def test_the_swap_waits_for_the_running_call(held):
    x, outs = _graph(tensor.sinh, tensor.cosh)
    f = function([x], outs)
    f(V)
    f._turn.token.pop()  # what a running call holds
    held.hold.unlink()
    _wait_built(f)
    assert f.native_status == native.BUILT and all(_on_numpy(f))  # not during the call
    f._turn.token.append(True)  # the call ends
    f(V)  # the next call swaps them in first
    assert f.native_status == native.NATIVE and not any(_on_numpy(f))


def _wait_for(condition) -> None:
    deadline = time.monotonic() + 300
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)


def test_threads_calling_during_the_swap_never_mix_the_paths(held):
    x, outs = _graph(lambda x: tensor.tanh(x) * x, lambda x: tensor.exp(x) * x)
    f = function([x], outs)
    with config.change_flags(cxx=""):
        numpy_result = function([x], outs)(V)
    results: list = []
    errors: list = []
    stop = threading.Event()

    def calls() -> None:
        try:
            while not stop.is_set():
                results.append(f(V))
        except Exception as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=calls) for _ in range(3)]
    for t in threads:
        t.start()
    _wait_for(lambda: len(results) >= 6 or errors)
    held.hold.unlink()
    _wait_built(f)
    swapped = len(results)
    _wait_for(lambda: len(results) >= swapped + 6 or errors)
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    native_result = f(V)
    assert all((a != b).any() for a, b in zip(native_result, numpy_result))
    on_native = []
    for r in results:
        same = [[np.array_equal(r[k], ref[k]) for k in range(2)] for ref in (numpy_result, native_result)]
        assert same[0] == [True, True] or same[1] == [True, True], same  # one path per call
        on_native.append(same[1][0])
    assert not any(on_native[:6]) and any(on_native)  # numpy's first, the native ones after


def test_a_failing_compiler_leaves_numpy_running_and_says_so(held):
    held.fail.touch()
    x, outs = _graph(tensor.arctan, lambda x: tensor.log1p(x * x))
    f = function([x], outs)
    failed = native.history()["failed"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(V)
        held.hold.unlink()
        status = f.wait_native()
    assert status.startswith("failed:") and "refused by the test" in status
    assert any("refused by the test" in str(w.message) for w in caught)
    assert all(_on_numpy(f))
    with config.change_flags(cxx=""):
        reference = function([x], outs)(V)
    for got, want in zip(f(V), reference):
        np.testing.assert_array_equal(got, want)
    assert native.history()["failed"] == failed + 1
    builds = dict(native_section().rows)["builds"]
    assert f"{failed + 1} failed" in builds and "refused by the test" in builds


def test_copies_and_unpickled_functions_share_the_build(held):
    x, outs = _graph(tensor.arcsinh, tensor.expm1)
    f = function([x], outs)
    runs = held.module_runs()
    f(V)
    g = pickle.loads(pickle.dumps(f))
    h = f.copy()
    g(V)
    h(V)
    assert g.native_status == h.native_status == native.BUILDING
    held.hold.unlink()
    assert [fn.wait_native() for fn in (f, g, h)] == [native.NATIVE] * 3
    assert held.module_runs() == runs + 1  # one compiler run for the three
    for fn in (g, h):
        for got, want in zip(fn(V), f(V)):
            np.testing.assert_array_equal(got, want)
    assert pickle.loads(pickle.dumps(f)).wait_native() == native.NATIVE  # from the memo


def test_the_build_keeps_the_flags_of_the_call_that_needed_it(held, tmp_path):
    x, outs = _graph(tensor.tan, tensor.arccos)
    f = function([x], outs)
    with config.change_flags(compiledir=str(tmp_path / "elsewhere")):
        f(np.linspace(-0.9, 0.9, 10_000).astype("float32"))
    held.hold.unlink()  # the build runs on after the flags changed back
    assert f.wait_native() == native.NATIVE
    assert list((tmp_path / "elsewhere").glob("*.so")) and not list(tmp_path.glob("*.so"))


def test_wait_native_builds_before_any_call(held):
    held.hold.unlink()
    x, outs = _graph(tensor.cos, tensor.sin)
    f = function([x], outs)
    assert f.wait_native() == native.NATIVE and not any(_on_numpy(f))


def test_config_wait_builds_in_the_first_call(held):
    held.hold.unlink()
    x, outs = _graph(tensor.erf, tensor.log2)
    with config.change_flags(native_build="wait"):
        f = function([x], outs)
        f(V)
    assert f.native_status == native.NATIVE and not any(_on_numpy(f))


def test_a_function_without_native_kernels_says_none():
    x = tensor.fvector("x")
    assert function([x], x.shape).native_status == "none"


def test_the_process_ends_after_its_build_with_nothing_left_behind(tmp_path):
    cache, tmp = tmp_path / "cache", tmp_path / "tmp"
    tmp.mkdir()
    script = textwrap.dedent("""
        import numpy as np
        from arignote import function, tensor as T
        x = T.dvector("x")
        f = function([x], T.arcsinh(T.cos(x) * 5 + 3) * 7)
        f(np.linspace(0, 1, 10_000))
        assert f.native_status == "building", f.native_status
    """)
    env = dict(os.environ, TMPDIR=str(tmp), ARIGNOTE_FLAGS=f"compiledir={cache}",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert len(list(cache.glob("*.so"))) == 1 and list(cache.glob("*.idx"))  # the build finished
    assert not list(tmp.iterdir())  # and cleaned up after itself: no compiler was cut off
