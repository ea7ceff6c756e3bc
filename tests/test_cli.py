"""The command line and the seed note's own script."""
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arignote.cli import main, seed_check

ROOT = Path(__file__).resolve().parents[1]


def _env(**flags: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["ARIGNOTE_FLAGS"] = ",".join(f"{k}={v}" for k, v in flags.items())
    return env


@pytest.mark.parametrize("floatX", ["float32", "float64"])
def test_seed_script_runs_unchanged_and_reports_the_cpu(floatX):
    script = ROOT / "examples" / "seed_gpu_test.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=_env(floatX=floatX), timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"[Elemwise{{exp,no_inplace}}(<TensorType({floatX}, vector)>)]"
    assert lines[1].startswith("Looping 1000 times took ")
    assert lines[-1] == "Used the cpu"


def test_seed_check_reports_numpy_ratio_and_device():
    out = io.StringIO()
    used_gpu = seed_check("float32", iters=5, out=out)
    text = out.getvalue()
    assert used_gpu is False
    assert "numpy's np.exp loop" in text and "ratio" in text
    assert "Result matches numpy: yes" in text
    assert text.rstrip().endswith("Used the cpu")


def test_info_names_python_numpy_blas_and_cpu(capsys):
    assert main(["info"]) == 0
    text = capsys.readouterr().out
    for heading in ("Python", "numpy", "BLAS", "cores", "floatX"):
        assert heading in text


def test_console_script_entry_point_is_declared():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'arignote = "arignote.cli:main"' in pyproject


def test_unknown_command_exits_with_usage():
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2


def test_cache_lists_its_entries_by_kind_and_clear_removes_only_ours(tmp_path):
    """``arignote cache`` counts a real cache's entries by kind; ``arignote cache clear``
    removes them, keeps files that are not ours and a lock a running producer may hold,
    and a function compiled afterwards builds what it needs again."""
    import numpy as np

    from arignote import config, function, tensor as T
    from arignote.backends.cpu import native
    from arignote.backends.kernels import cache

    where = tmp_path / "cache"
    with config.change_flags(compiledir=str(where), native_build="wait"):
        x = T.vector("x")
        function([x], T.exp(x) * 2 + 1)(np.ones(4096))  # generated Python, native modules
        (where / "notes.txt").write_text("the user's own file")
        (where / "gpu-ab.bin").write_bytes(b"\0" * 100)
        (where / "gpu-ab.lock").write_text("{}")  # a producer at work
        old = where / "gpu-cd.lock"
        old.write_text("{}")
        os.utime(old, (0, 0))  # its producer was killed long ago
        (where / ".gpu-ab.bin.1.2.3.tmp").write_bytes(b"\0")  # a write under way
        out = io.StringIO()
        from arignote.cli import show_cache
        show_cache("list", out=out)
        listed = out.getvalue()
        kinds = {kind: (files, size) for kind, files, size in cache.contents()}
        assert kinds["GPU program binaries"] == (1, 100)
        assert kinds["GPU binary producers' locks"][0] == 2
        assert kinds["generated Python"][0] >= 1
        if native.available():
            assert kinds["native kernel modules"][0] >= 1 and kinds["native kernel indices"][0] >= 1
        assert f"kernel cache {where}" in listed and "GPU program binaries" in listed
        assert "notes.txt" not in listed
        total = sum(files for files, _ in kinds.values())
        out = io.StringIO()
        show_cache("clear", out=out)
        assert out.getvalue().startswith(f"removed {total - 2} files (")
        left = sorted(p.name for p in where.rglob("*") if p.is_file())
        assert left == [".gpu-ab.bin.1.2.3.tmp", "gpu-ab.lock", "notes.txt"]
        assert main(["cache"]) == 0
        f = function([x], T.exp(x) * 3)
        np.testing.assert_allclose(f(np.ones(4096)), np.exp(np.ones(4096)) * 3)
        assert list((where / "py").glob("*.code"))
