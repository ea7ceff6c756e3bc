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


def test_a_training_step_with_numpy_scalars_leaves_scipy_special_for_later():
    # ``ndarray * variable`` goes through TensorVariable.__array_ufunc__: finding its graph must
    # not import scipy.special (half a second of a cold start) for a graph that never uses it.
    code = ("import json, sys, numpy as np, arignote\n"
            "from arignote import tensor as T\n"
            "w = arignote.shared(np.ones(3), name='w')\n"
            "x = T.dvector('x')\n"
            "cost = T.tanh(T.dot(x, w))\n"
            "step = arignote.function([x], cost, updates=[(w, w - np.asarray(0.1) * arignote.grad(cost, w))])\n"
            "step(np.ones(3))\n"
            "print(json.dumps('scipy.special' in sys.modules))")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) is False


def test_scipy_special_ufuncs_build_graphs_once_scipy_special_is_imported():
    import numpy as np
    import scipy.special

    import arignote
    from arignote import tensor

    x = tensor.dvector("x")
    f = arignote.function([x], scipy.special.erf(x))
    v = np.array([-1.0, 0.0, 0.5])
    np.testing.assert_allclose(f(v), scipy.special.erf(v))
