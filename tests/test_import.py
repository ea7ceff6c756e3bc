"""``import arignote`` stays light: what only some uses need is imported when used."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LATER = ("scipy", "scipy.linalg", "scipy.special", "pyopencl", "cupy", "dask", "distributed",
         "zipfile", "uuid", "concurrent.futures", "subprocess", "tempfile")


def test_import_arignote_leaves_the_optional_and_heavy_modules_for_later():
    code = ("import json, sys, arignote\n"
            f"print(json.dumps([m for m in {LATER!r} if m in sys.modules]))")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_what_is_imported_later_still_works(tmp_path):
    import numpy as np

    import arignote
    from arignote import tensor
    from arignote.tensor import slinalg

    a = tensor.dmatrix("a")
    f = arignote.function([a], slinalg.cholesky(a))
    m = np.array([[4.0, 2.0], [2.0, 3.0]])
    np.testing.assert_allclose(f(m), np.linalg.cholesky(m))
    w = arignote.shared(np.arange(3.0), name="w")
    arignote.save(tmp_path / "p.npz", [w])
    w.set_value(np.zeros(3))
    arignote.load(tmp_path / "p.npz", [w])
    np.testing.assert_array_equal(w.get_value(), np.arange(3.0))
