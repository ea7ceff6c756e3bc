"""``arignote run``: a legacy program runs unchanged, as ``python`` would run it."""
import sys
from pathlib import Path

import pytest

from arignote import cli
from tests.compat.conftest import run

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "legacy_script.py"


@pytest.mark.parametrize("floatX", ["float64", "float32"])
def test_a_legacy_script_runs_unchanged(floatX):
    done = run([str(SCRIPT), "20"], THEANO_FLAGS=f"floatX={floatX}")
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["argv"] == "['20']" and lines["name"] == "__main__"
    assert lines["floatX"] == f"{floatX} {floatX} (5, 3)"
    assert lines["costs"].startswith("True") and lines["noise"] == "(2,)"
    assert "DEPRECATION: If x is a vector" in done.stderr


def test_exit_codes_and_exceptions_propagate(tmp_path):
    assert run([str(SCRIPT), "1", "3"]).returncode == 3
    failing = tmp_path / "fails.py"
    failing.write_text("import theano\nraise KeyError('boom')\n")
    done = run([str(failing)])
    assert done.returncode == 1 and "KeyError: 'boom'" in done.stderr
    assert run([str(tmp_path / "absent.py")]).returncode == 2


def test_run_dash_m_runs_a_module_with_its_arguments(tmp_path):
    (tmp_path / "legacy_mod.py").write_text(
        "import sys, theano\nprint(__name__, sys.argv[1:], theano.tensor.dscalar('x').dtype)\n"
        "sys.exit(len(sys.argv) - 1)\n")
    done = run(["-m", "legacy_mod", "-q", "a b"], cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout.strip() == "__main__ ['-q', 'a b'] float64"


def test_run_dash_m_pytest_collects_legacy_tests(tmp_path):
    (tmp_path / "test_legacy.py").write_text(
        "import numpy, theano, theano.tensor as T\n"
        "def test_add():\n"
        "    x = T.dscalar()\n"
        "    assert theano.function([x], x + 1)(2.0) == 3.0\n")
    done = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_usage(capsys):
    assert cli.main(["run"]) == 2
    assert "arignote run -m module" in capsys.readouterr().err
    assert cli.main(["run", "--help"]) == 0
    assert "THEANO_FLAGS" in capsys.readouterr().out
    assert sys.meta_path == [f for f in sys.meta_path if type(f).__name__ != "_Finder"]


def test_run_dash_c_runs_a_command_with_its_arguments(tmp_path):
    done = run(["-c", "import sys, theano; print(__name__, sys.argv, theano.tensor.fscalar().dtype); "
                "sys.exit(4)", "a"], cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert done.stdout.strip() == "__main__ ['-c', 'a'] float32"
    failing = run(["-c", "import theano; theano.function([], 1 / 0)"], cwd=tmp_path)
    assert failing.returncode == 1 and "ZeroDivisionError" in failing.stderr
