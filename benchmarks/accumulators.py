"""What float64 accumulation of float32 sums costs on the native kernels: the same
reductions with ``acc_dtype='float32'`` (the kernels before Theano's accumulators) and with
the default (float64), interleaved in one process, one thread, numpy's call as yardstick.

Usage: taskset -c 0 python benchmarks/accumulators.py [rounds] (from the repository root;
report ``uptime`` with the figures: the medians move with the machine's load, the ratios less).
"""
from __future__ import annotations

import functools
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ARIGNOTE_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from arignote import config, function, tensor as T  # noqa: E402


def cases() -> list:
    """(name, inputs, build(acc_dtype), numpy's call, values)."""
    rng = np.random.RandomState(0)
    x, X, Y = T.fvector("x"), T.fmatrix("X"), T.fmatrix("Y")
    long = rng.rand(10 ** 7).astype("float32")
    vec = long[:10 ** 6].copy()
    m, m2 = rng.rand(1000, 1000).astype("float32"), rng.rand(1000, 1000).astype("float32")
    tall, small = rng.rand(10 ** 6, 2).astype("float32"), rng.rand(128, 500).astype("float32")
    return [
        ("sum, 1e7", [x], lambda a: x.sum(acc_dtype=a), lambda v: v.sum(), [long]),
        ("sum, 1e6", [x], lambda a: x.sum(acc_dtype=a), lambda v: v.sum(), [vec]),
        ("sum(exp(x)), 1e6", [x], lambda a: T.exp(x).sum(acc_dtype=a), lambda v: np.exp(v).sum(), [vec]),
        ("sum(x * x) (SumOfSquares), 1e6", [x], lambda a: (x * x).sum(acc_dtype=a),
         lambda v: np.dot(v, v), [vec]),
        ("sum(axis=1), 1000x1000", [X], lambda a: X.sum(axis=1, acc_dtype=a), lambda v: v.sum(axis=1), [m]),
        ("((X - Y) ** 2).sum(axis=1), 1000x1000", [X, Y],
         lambda a: ((X - Y) ** 2).sum(axis=1, acc_dtype=a), lambda p, q: ((p - q) ** 2).sum(axis=1), [m, m2]),
        ("sum(axis=0), 1000x1000", [X], lambda a: X.sum(axis=0, acc_dtype=a), lambda v: v.sum(axis=0), [m]),
        ("sum(axis=0), 1e6x2", [X], lambda a: X.sum(axis=0, acc_dtype=a), lambda v: v.sum(axis=0), [tall]),
        ("sum(axis=0), 128x500", [X], lambda a: X.sum(axis=0, acc_dtype=a), lambda v: v.sum(axis=0), [small]),
        ("mean, 128x500", [X], lambda a: X.mean(acc_dtype=a), lambda v: v.mean(), [small]),
    ]


def timed(run) -> float:
    """Seconds per call, over enough calls to take 10 ms."""
    reps = 1
    while True:
        start = time.perf_counter()
        for _ in range(reps):
            run()
        spent = time.perf_counter() - start
        if spent > 0.01:
            return spent / reps
        reps *= 2


def main(rounds: int) -> None:
    config.native_build = "wait"
    print("| workload | float32 acc (µs) | float64 acc (µs) | f64 / f32 | f32 / numpy | f64 / numpy |")
    print("|---|---|---|---|---|---|")
    for name, inputs, build, reference, values in cases():
        runs = {"f32": functools.partial(function(inputs, build("float32")), *values),
                "f64": functools.partial(function(inputs, build(None)), *values),
                "numpy": functools.partial(reference, *values)}
        samples: dict = {key: [] for key in runs}
        for _ in range(rounds):
            for key, run in runs.items():
                samples[key].append(timed(run))
        med = {key: statistics.median(v) for key, v in samples.items()}
        ratio = statistics.median(a / b for a, b in zip(samples["f64"], samples["f32"]))
        print(f"| {name} | {med['f32'] * 1e6:.0f} | {med['f64'] * 1e6:.0f} | {ratio:.2f} | "
              f"{med['f32'] / med['numpy']:.2f} | {med['f64'] / med['numpy']:.2f} |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
