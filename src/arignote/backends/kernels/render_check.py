"""The kernel NanGuardMode runs on a device array: NaN, inf and huge values found, as flags.

Kept apart from ``render.py``'s op kernels; it uses the same dialect tables.
"""
from __future__ import annotations

from arignote.backends.kernels.render import LOCAL_SIZE, Dialect, Kernel, _ptr

NAN, INF, BIG = 1, 2, 4  # the flag bits


def finite_check(d: Dialect, dtype: str) -> Kernel:
    """``flags[group] = OR`` over the group's share of ``x[off : off + size]`` of NAN
    (isnan), INF (isinf) and BIG (``|x| > big``): threads stride over the array, then a
    tree in local memory combines their bits. Integers can only be big; unsigned ones
    are compared one way."""
    t = d.ctype(dtype)
    if dtype.startswith("float"):
        test = f"(isnan(v) ? {NAN} : 0) | (isinf(v) ? {INF} : 0) | (fabs(v) > big ? {BIG} : 0)"
    elif dtype.startswith("uint"):
        test = f"(v > big ? {BIG} : 0)"
    else:
        test = f"((v > big || v < -big) ? {BIG} : 0)"
    params = [_ptr(d, "int32", "flags"), _ptr(d, dtype, "x", const=True), "const index_t off",
              "const index_t size", f"const {t} big"]
    source = (
        f"{d.prelude((dtype,))}{d.kernel} finite_check({', '.join(params)}) {{\n"
        f"  {d.local}int parts[{LOCAL_SIZE}];\n  const index_t lid = {d.local_id};\n  int f = 0;\n"
        f"  for (index_t i = {d.global_id}; i < size; i += {d.global_size}) {{\n"
        f"    const {t} v = x[off + i];\n    f |= {test};\n  }}\n"
        f"  parts[lid] = f;\n  {d.barrier}\n"
        f"  for (index_t s = {LOCAL_SIZE // 2}; s > 0; s >>= 1) {{\n"
        f"    if (lid < s) parts[lid] |= parts[lid + s];\n    {d.barrier}\n  }}\n"
        f"  if (lid == 0) flags[{d.group_id}] = parts[0];\n}}\n")
    return Kernel("finite_check", source, (dtype,))
