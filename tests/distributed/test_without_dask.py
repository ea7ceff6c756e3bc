"""Where dask is absent: arignote imports, arignote.distributed says which extra to
install, and the distributed tests skip (run in a child interpreter that cannot
import dask or distributed)."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BLOCK = """
import sys
class NoDask:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("dask", "distributed"):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
sys.meta_path.insert(0, NoDask())
"""


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK + code], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_without_dask_arignote_works_and_the_distributed_module_names_the_extra():
    done = run("""
import arignote
from arignote import function, tensor as T
x = T.vector("x")
assert function([x], x * 2)([1.0])[0] == 2.0
try:
    import arignote.distributed
except ImportError as err:
    print(err)
else:
    raise SystemExit("arignote.distributed imported without dask")
assert not any(m.split(".")[0] in ("dask", "distributed") for m in sys.modules)
""")
    assert done.returncode == 0, done.stderr
    assert "pip install 'arignote[distributed]'" in done.stdout


def test_without_dask_the_distributed_tests_skip():
    done = run(f"""
import pytest
sys.exit(pytest.main(["tests/distributed", "-q", "-rs", "-p", "no:cacheprovider",
                      "--ignore", {str(Path(__file__).resolve())!r}]))
""")
    assert done.returncode in (0, pytest.ExitCode.NO_TESTS_COLLECTED), done.stdout + done.stderr
    assert not any(w in done.stdout.lower() for w in ("passed", "error", "failed")), done.stdout
    modules = {p.name for p in Path(__file__).parent.glob("test_*.py")} - {Path(__file__).name}
    skipped = {line.split("tests/distributed/")[1].split(":")[0] for line in done.stdout.splitlines()
               if line.startswith("SKIPPED")}
    assert skipped == modules
