"""Error of our float32 exp and tanh (backends/kernels/c_math.py) over every float32 input.

Usage: python benchmarks/ulp_sweep.py [--step N]. Builds ``c_math.SOURCE`` with
the native kernels' compiler and flags (and once more without ``-march=native``,
so without FMA, as on a machine that lacks it), runs the function on all 2**32
bit patterns (every N-th with ``--step``) in C, and compares each result with
libm's float64 function of the same input (libmvec's where the compiler
vectorises it), whose error is far below a float32 ulp. Prints the largest
error in float32 ulp (of the reference's binade; 2**-149 below the normals)
with the input where it occurs, and counts results of the wrong kind: NaN where
the reference is not or the converse, an infinity where the reference rounds to
another value, a zero of the other sign. A full sweep takes ~10 minutes of CPU.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from arignote.backends.cpu import native_compiler  # noqa: E402
from arignote.backends.kernels import c_math  # noqa: E402

_SWEEP = r"""
#include <math.h>
#include <stdint.h>
#include <string.h>
%(declarations)s
%(source)s
#define BLOCK 4096
typedef struct { double worst; uint32_t at; uint32_t pad; uint64_t wrong; uint32_t first_wrong; } result_t;

/* A float32 ulp in the binade of the float64 y (2**-149 below the normals). */
static inline double ulp32(double y) {
  uint64_t w; memcpy(&w, &y, 8);
  int64_t e = (int64_t)((w >> 52) & 0x7ff) - 1023 - 23;
  e = e < -149 ? -149 : e;
  w = (uint64_t)(e + 1023) << 52;
  memcpy(&y, &w, 8);
  return y;
}

/* Inputs lo, lo + step, ... below hi (as 64-bit counts: hi may be 2**32). */
void sweep(int which, uint64_t lo, uint64_t hi, uint64_t step, result_t *res) {
  float x[BLOCK], got[BLOCK];
  double want[BLOCK];
  res->worst = 0; res->wrong = 0;
  for (uint64_t start = lo; start < hi; start += (uint64_t)BLOCK * step) {
    int n = 0;
    for (uint64_t b = start; b < hi && n < BLOCK; b += step, n++) { uint32_t u = (uint32_t)b; memcpy(&x[n], &u, 4); }
    if (which) {
      #pragma omp simd
      for (int i = 0; i < n; i++) got[i] = ak_tanhf(x[i]);
      #pragma omp simd
      for (int i = 0; i < n; i++) want[i] = tanh((double)x[i]);
    } else {
      #pragma omp simd
      for (int i = 0; i < n; i++) got[i] = ak_expf(x[i]);
      #pragma omp simd
      for (int i = 0; i < n; i++) {  /* beyond +-200 float32 has only inf and 0, as there */
        const double xd = x[i] > 200.0f ? 200.0 : x[i] < -200.0f ? -200.0 : (double)x[i];
        want[i] = exp(xd);
      }
    }
    double worst = 0, err[BLOCK];
    uint64_t wrong = 0;
    #pragma omp simd reduction(max:worst) reduction(+:wrong)
    for (int i = 0; i < n; i++) {
      const float g = got[i], r = (float)want[i];
      const int gnan = g != g, wnan = want[i] != want[i];
      const int special = gnan | wnan | (fabsf(g) == INFINITY) | (fabsf(r) == INFINITY);
      /* NaN for NaN, the same infinity, and an underflow's sign */
      const int bad = special ? !((gnan & wnan) | (!gnan & !wnan & (g == r)))
                              : ((r == 0) | (g == 0)) & (signbit(g) != signbit(r));
      err[i] = special ? 0 : fabs((double)g - want[i]) / ulp32(want[i]);
      worst = err[i] > worst ? err[i] : worst;
      wrong += bad;
    }
    if (worst > res->worst)
      for (int i = 0; i < n; i++)
        if (err[i] == worst) { res->worst = worst; memcpy(&res->at, &x[i], 4); break; }
    if (wrong && !res->wrong)
      for (int i = 0; i < n; i++) {
        const float g = got[i], r = (float)want[i];
        if ((g != g) != (want[i] != want[i]) || ((fabsf(g) == INFINITY || fabsf(r) == INFINITY) && g != r)
            || ((r == 0 || g == 0) && g == g && signbit(g) != signbit(r))) { memcpy(&res->first_wrong, &x[i], 4); break; }
      }
    res->wrong += wrong;
  }
}
"""


class Result(ctypes.Structure):
    _fields_ = [("worst", ctypes.c_double), ("at", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("wrong", ctypes.c_uint64), ("first_wrong", ctypes.c_uint32)]


def build(chain: native_compiler.Toolchain, flags: list[str], where: Path) -> ctypes.CDLL:
    src = where / "sweep.c"
    src.write_text(_SWEEP % {"declarations": chain.declarations(), "source": c_math.SOURCE})
    out = where / f"sweep{len(list(where.iterdir()))}.so"
    error = native_compiler._run(chain.path, [*flags, "-o", str(out), str(src), *chain.libs])
    if error:
        raise SystemExit(error)
    lib = ctypes.CDLL(str(out))
    lib.sweep.argtypes = [ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                          ctypes.POINTER(Result)]
    return lib


def measure(lib: ctypes.CDLL, which: int, step: int) -> tuple[float, float, int, int]:
    """(worst ulp, its input, wrong-kind count, first wrong input) over the sweep."""
    chunks = 256

    def one(k: int) -> Result:
        res = Result()
        lo = (k << 32) // chunks
        lo += (-lo) % step
        lib.sweep(which, lo, ((k + 1) << 32) // chunks, step, ctypes.byref(res))
        return res
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        results = list(pool.map(one, range(chunks)))
    worst = max(results, key=lambda r: r.worst)
    wrong = [r for r in results if r.wrong]
    as_float = ctypes.c_float.from_buffer(ctypes.c_uint32(worst.at)).value
    first = ctypes.c_float.from_buffer(ctypes.c_uint32(wrong[0].first_wrong)).value if wrong else 0.0
    return worst.worst, as_float, sum(r.wrong for r in results), first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=1, help="sweep every N-th bit pattern")
    step = parser.parse_args().step
    chain = native_compiler.toolchain()
    if not isinstance(chain, native_compiler.Toolchain):
        raise SystemExit(f"no compiler: {chain.reason}")
    native_flags = [f for f in chain.flags if f != "-fopenmp"] + ["-fopenmp-simd"]
    variants = {"native flags": native_flags,
                "no -march (no FMA)": [f for f in native_flags if not f.startswith(("-march", "-mprefer"))]}
    print(f"{chain.identity}; inputs: every {step} of 2**32 float32 bit patterns")
    with tempfile.TemporaryDirectory(prefix="arignote-ulp-") as tmp:
        for label, flags in variants.items():
            lib = build(chain, flags, Path(tmp))
            for which, name in enumerate(("ak_expf", "ak_tanhf")):
                start = time.perf_counter()
                worst, at, wrong, first = measure(lib, which, step)
                print(f"{label:20s} {name:9s} max {worst:.3f} ulp at x={at!r}; wrong kind: {wrong}"
                      + (f" (first at x={first!r})" if wrong else "")
                      + f"  [{time.perf_counter() - start:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
