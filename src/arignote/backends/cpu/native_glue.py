"""C entry points around rendered kernels: what a GPU op's ``perform`` does in Python
(find the layout, pick the contiguous or strided form, pass offsets and strides)
is done here in C, on numpy's array objects, so a call costs one ctypes call."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arignote.backends.kernels import render


def array_table(dtypes: Sequence[str], merged: bool = True) -> list[str]:
    """Statements naming the arrays ``a0..`` as ``a[]`` with their dtype numbers and sizes,
    then checking them and, when ``merged``, finding the layout (``n``, ``st``, ``nd``,
    ``size``: see ``layout`` in native.py); return 1 when they do not fit."""
    count = len(dtypes)
    nums = ", ".join(str(np.dtype(d).num) for d in dtypes)
    sizes = ", ".join(str(np.dtype(d).itemsize) for d in dtypes)
    lines = [f"ndarray_t *const a[{count}] = {{{', '.join(f'a{k}' for k in range(count))}}};",
             f"static const int tnum[{count}] = {{{nums}}}, isz[{count}] = {{{sizes}}};",
             f"index_t n[MAXD], st[{count} * MAXD];"]
    if merged:
        return lines + ["index_t size; int nd;",
                        f"if (layout(a, {count}, tnum, isz, n, st, &nd, &size)) return 1;"]
    return lines + [f"if (check(a, {count}, tnum, isz)) return 1;"]


def entry(symbol: str, dtypes: Sequence[str], body: Sequence[str], merged: bool = True) -> str:
    params = ", ".join(f"ndarray_t *a{k}" for k in range(len(dtypes)))
    lines = array_table(dtypes, merged) + list(body) + ["return 0;"]
    return f"int {symbol}({params}) {{\n" + "".join(f"  {line}\n" for line in lines) + "}\n"


def pointer(k: int, dtype: str, const: bool = False) -> str:
    return f"({'const ' if const else ''}{render.C.ctype(dtype)} *)a{k}->data"
