"""Where native kernels start to win: the measurements behind two config defaults.

``native_min_size``: per array size, a one-op (``x + 1``) and a fused
(``tanh(x) * 2 + 1``) float32 function on numpy's path and on the native one, one thread.
``openmp_elemwise_minsize``: per size, the fused kernel with 1 thread and with
all cores (each thread count in its own process, as OpenMP fixes it at start).
``native_reduce_min_size``: a row sum and a softmax of (n/10, 10) float32 matrices, the
same way (numpy's paths for these are several numpy calls each).

Usage: python benchmarks/thresholds.py (from the repository root).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import timeit

SIZES = [16, 256, 1024, 2048, 4096, 16384, 65536, 200000, 1000000]


def timings(min_size: int, cxx: str | None) -> dict:
    import numpy as np

    from arignote import config, function, tensor as T
    flags = {"native_min_size": min_size, "native_reduce_min_size": min_size}
    if cxx is not None:
        flags["cxx"] = cxx
    out = {}
    with config.change_flags(**flags):
        x = T.fvector("x")
        fns = {"one op": function([x], x + 1), "fused": function([x], T.tanh(x) * 2 + 1)}
        m = T.fmatrix("m")
        rows = {"row sum": function([m], m.sum(axis=1)), "softmax": function([m], T.nnet.softmax(m))}
    for n in SIZES:
        v = np.linspace(-1, 1, n).astype("float32")
        cases = [(name, f, v) for name, f in fns.items()]
        cases += [(name, f, v[:n - n % 10].reshape(-1, 10)) for name, f in rows.items() if n >= 10]
        for name, f, value in cases:
            number = max(1, 200000 // n)
            runs = timeit.repeat(lambda f=f, value=value: f(value), number=number, repeat=7)
            out[f"{name} {value.size}"] = statistics.median(runs) / number
    return out


def spawn(threads: int, min_size: int, cxx: str | None) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    code = f"import json, sys; sys.path.insert(0, 'benchmarks'); import thresholds; " \
           f"print(json.dumps(thresholds.timings({min_size}, {cxx!r})))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    numpy_1 = spawn(1, 0, "")
    native_1 = spawn(1, 0, None)
    native_all = spawn(os.cpu_count() or 1, 0, None)
    print("| elements | graph | numpy path | native, 1 thread | native, all cores |")
    print("|---|---|---|---|---|")
    for key in numpy_1:
        print(f"| {key.split()[-1]} | {' '.join(key.split()[:-1])} | {numpy_1[key] * 1e6:.2f} µs | "
              f"{native_1[key] * 1e6:.2f} µs | {native_all[key] * 1e6:.2f} µs |")


if __name__ == "__main__":
    main()
