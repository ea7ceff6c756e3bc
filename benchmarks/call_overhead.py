"""Per-call overhead of a compiled function: f(x) = x + 1 on a 10-element vector.

Compares the checked call, the ``trust_input`` fast path and numpy's own
``x + 1`` in the same run. Usage: python benchmarks/call_overhead.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import interleaved  # noqa: E402

from arignote import function, tensor  # noqa: E402


def main() -> None:
    x = tensor.dvector("x")
    f = function([x], x + 1)
    fast = function([x], x + 1, trust_input=True)
    value = np.arange(10.0)
    assert np.array_equal(f(value), value + 1) and np.array_equal(fast(value), value + 1)
    times = interleaved({"numpy x + 1": lambda: value + 1,
                         "arignote f(x)": lambda: f(value),
                         "arignote f(x), trust_input": lambda: fast(value)}, calls=20000)
    base = times["numpy x + 1"]
    print("| what | µs per call | ratio to numpy |\n|---|---|---|")
    for name, seconds in times.items():
        print(f"| {name} | {seconds * 1e6:.2f} | {seconds / base:.1f} |")


if __name__ == "__main__":
    main()
