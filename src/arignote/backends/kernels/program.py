"""Several rendered kernels as one program, and each kernel's argument types.

A Function's kernels are compiled together (one OpenCL program, one CUDA
module): one compiler run instead of one per kernel. Every kernel source is
its dialect's prelude, maybe some ``#define`` lines, and one entry point, so
joining them needs only one prelude, an entry name of its own per kernel (a
digest of its source) and an ``#undef`` after each kernel's defines.

The scalar argument types a runtime declares once per kernel (so a launch
converts nothing by guessing) are read from the kernel's own parameter list,
the one place they are written.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from arignote.backends.kernels.render import Dialect, Kernel

_DEFINE = re.compile(r"^#define (\w+)", re.MULTILINE)


def entry_name(k: Kernel) -> str:
    """The kernel's entry point inside a joined program: unique per source."""
    return f"{k.name}_{hashlib.sha256(k.source.encode()).hexdigest()[:12]}"


def join(d: Dialect, kernels: Sequence[Kernel]) -> str:
    """One source holding every kernel (each once), each under :func:`entry_name`."""
    kernels = list({entry_name(k): k for k in kernels}.values())
    dtypes = sorted({t for k in kernels for t in k.dtypes})
    prelude = d.prelude(dtypes)
    parts = [prelude]
    for k in kernels:
        body = _strip_prelude(d, k)
        head = f"{d.kernel} {k.name}("
        if body.count(head) != 1:
            raise ValueError(f"kernel {k.name}: expected one entry point {head!r} in its source")
        parts.append(body.replace(head, f"{d.kernel} {entry_name(k)}("))
        parts += [f"#undef {name}" for name in _DEFINE.findall(body)]
    return "\n".join(parts) + "\n"


def _strip_prelude(d: Dialect, k: Kernel) -> str:
    prelude = d.prelude(k.dtypes)
    if not k.source.startswith(prelude):
        raise ValueError(f"kernel {k.name}: its source does not start with the {d.name} prelude")
    return k.source[len(prelude):]


def arg_dtypes(d: Dialect, k: Kernel) -> tuple[str | None, ...]:
    """Per parameter of ``k``'s entry point: None for a buffer, else the numpy dtype name."""
    head = f"{d.kernel} {k.name}("
    start = k.source.index(head) + len(head)
    params = k.source[start:k.source.index(")", start)].split(",")
    by_ctype = {c: t for t, c in d.types.items()}  # the last wins: uchar is uint8 (not bool)
    by_ctype["index_t"] = "int64"
    found: list[str | None] = []
    for param in params:
        if "*" in param:
            found.append(None)
            continue
        words = param.replace("const ", " ").split()
        ctype = " ".join(words[:-1])
        if ctype not in by_ctype:
            raise ValueError(f"kernel {k.name}: parameter {param.strip()!r} has no known type")
        found.append(by_ctype[ctype])
    return tuple(found)
