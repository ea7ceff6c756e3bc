"""The seed loop: exp of a 230,400-element vector, 1000 calls, against numpy.

numpy is timed two ways: ``np.exp(x)`` (a fresh result each call, as the seed's
``f()`` returns) and ``np.exp(x, out=buf)`` (no allocation). Usage:
python benchmarks/seed_loop.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import interleaved  # noqa: E402

from arignote import Out, function, shared, tensor  # noqa: E402

VLEN = 10 * 30 * 768


def main() -> None:
    print("| dtype | what | ms per 1000 calls | ratio to np.exp(x) |\n|---|---|---|---|")
    for dtype in ("float32", "float64"):
        value = np.random.RandomState(22).rand(VLEN).astype(dtype)
        x = shared(value)
        f = function([], tensor.exp(x))
        f_borrow = function([], Out(tensor.exp(x), borrow=True))
        buf = np.empty_like(value)
        np.testing.assert_allclose(f(), np.exp(value), rtol=1e-6)
        np.testing.assert_allclose(f_borrow(), np.exp(value), rtol=1e-6)
        times = interleaved({"np.exp(x)": lambda: np.exp(value),
                             "np.exp(x, out=buf)": lambda: np.exp(value, out=buf),
                             "arignote f()": f,
                             "arignote f() with Out(borrow=True)": f_borrow}, calls=200)
        base = times["np.exp(x)"]
        for name, seconds in times.items():
            print(f"| {dtype} | {name} | {seconds * 1e6:.1f} | {seconds / base:.2f} |")


if __name__ == "__main__":
    main()
