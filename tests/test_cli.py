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
