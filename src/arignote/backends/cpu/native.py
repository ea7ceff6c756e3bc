"""Native kernels: C from the one renderer, built by the system compiler, called through ctypes.

A thunk asks for a kernel with :func:`request`; while a Function links
(:func:`link_batch`), requests are gathered into one batch, and the first time
any of them is called (an array of ``native_min_size`` elements or more),
every kernel of the batch not already in the memo or on disk is compiled in
one compiler run, into one shared object. A function that only ever sees
small arrays compiles nothing.
Each kernel's entry point takes numpy's array objects themselves
(``ctypes.py_object``: no pointer is extracted in Python, measured faster than
passing data pointers or using cffi) and reads data, shape, strides and dtype
from numpy's documented ``PyArrayObject_fields`` layout, which the loader
checks against a real array first. An entry returns 1 when an array is not
what it was compiled for (another dtype or rank, a subclass, misaligned or
not broadcastable), and the thunk then runs numpy's kernel instead.

Disk layout under ``config.compiledir``: ``<module key>.so`` (the shared
object of one compiler run) and ``<kernel key>.idx`` (the module holding that
kernel, with the module's SHA-256), both written atomically; see
``backends/kernels/cache.py``.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from arignote.backends.cpu import native_compiler
from arignote.backends.cpu.native_compiler import Toolchain, Unavailable
from arignote.backends.kernels import c_math, cache
from arignote.backends.kernels.render import C_PREAMBLE
from arignote.config import config

HEAD = object.__basicsize__  # bytes of the object header before numpy's fields
MAXD = 64  # numpy's maximum rank

# What every module starts with: the math and OpenMP setup, numpy's object
# layout, and the layout helper the entry points share.
_GLUE = """
#define MAXD {maxd}
#define PARALLEL_MIN {parallel_min}
typedef struct {{ char head[{head}]; void *typeobj; char kind, type, byteorder, flags0; int type_num; }} descr_t;
typedef struct {{ char head[{head}]; char *data; int nd; index_t *dims; index_t *strides; void *base;
                 const descr_t *descr; int flags; }} ndarray_t;
static void *ndarray_type;
void arignote_init(void *type) {{ ndarray_type = type; }}

/* 1 unless every array is a plain ndarray of the dtype, aligned, and the output writeable. */
static int check(ndarray_t *const *a, const int count, const int *tnum, const int *isz) {{
  if (!(a[0]->flags & 0x0400)) return 1;
  for (int k = 0; k < count; k++) {{
    const char order = a[k]->descr->byteorder;
    if (*(void **)(a[k]->head + {head} - sizeof(void *)) != ndarray_type || a[k]->nd > MAXD
        || a[k]->descr->type_num != tnum[k] || (order != '=' && order != '|')
        || ((uintptr_t)a[k]->data) % isz[k]) return 1;
  }}
  return 0;
}}

/* Element strides of every array over the output's (array 0's) shape, 0 where an
   input broadcasts, with dimensions merged where every array allows: n[0..nd),
   st[k * MAXD + dim]. 1 when an array is not what the kernel was built for. */
static int layout(ndarray_t *const *a, const int count, const int *tnum, const int *isz,
                  index_t *n, index_t *st, int *ndp, index_t *sizep) {{
  const int nd = a[0]->nd;
  index_t size = 1;
  if (check(a, count, tnum, isz)) return 1;
  for (int d = 0; d < nd; d++) size *= a[0]->dims[d];
  *sizep = size;
  for (int k = 0; k < count; k++) {{
    if (a[k]->nd != nd) return 1;
    for (int d = 0; d < nd; d++) {{
      const index_t len = a[k]->dims[d], s = a[k]->strides[d];
      if ((len != a[0]->dims[d] && len != 1) || s % isz[k]) return 1;
      st[k * MAXD + d] = len == 1 ? 0 : s / isz[k];
    }}
  }}
  int m = 0;
  for (int d = 0; d < nd; d++) {{
    const index_t len = a[0]->dims[d];
    if (len == 1) continue;
    int merge = m > 0;
    for (int k = 0; k < count && merge; k++) merge = st[k * MAXD + m - 1] == st[k * MAXD + d] * len;
    if (merge) {{
      n[m - 1] *= len;
      for (int k = 0; k < count; k++) st[k * MAXD + m - 1] = st[k * MAXD + d];
      continue;
    }}
    n[m] = len;
    for (int k = 0; k < count; k++) st[k * MAXD + m] = st[k * MAXD + d];
    m++;
  }}
  if (!m) {{ n[0] = 1; for (int k = 0; k < count; k++) st[k * MAXD] = 0; m = 1; }}
  *ndp = m;
  return 0;
}}
"""


class Request:
    """One kernel a thunk needs: ``render(symbol)`` gives its C source; ``ready(fn)``
    is called with the loaded entry point (or a stand-in returning 1 if none)."""

    def __init__(self, render: Callable[[str], str], n_args: int, ready: Callable[[Callable], None]):
        self.render = render
        self.n_args = n_args
        self.ready = ready
        self.key = ""
        self.symbol = ""
        self.fn: Callable = refuse


class Batch:
    """The requests of one Function, resolved together on the first call of any of them."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.done = False

    def add(self, req: Request) -> None:
        self.requests.append(req)

        def first_call(*args: object) -> int:
            self.resolve()
            return req.fn(*args)
        req.ready(first_call)

    def resolve(self) -> None:
        with self.lock:  # a second thread calling meanwhile waits for this build, once
            if not self.done:
                resolve(self.requests)
                self.done = True


def refuse(*args: object) -> int:
    """The stand-in entry point of a kernel that is not built (yet): the numpy path runs."""
    return 1


_memo: dict[str, Callable] = {}  # kernel key -> entry point
_modules: dict[str, ctypes.CDLL] = {}  # shared-object path -> loaded library
_lock = threading.Lock()
_batches = threading.local()
_layout_checked: list[str] = []


def toolchain() -> Toolchain | Unavailable:
    """The compiler native kernels use, or why there is none (numpy's kernels run then)."""
    chain = native_compiler.toolchain()
    if isinstance(chain, Toolchain):
        problem = _layout_problem()
        if problem:
            return Unavailable(problem, "none needed: numpy's kernels run")
    return chain


def available() -> bool:
    return isinstance(toolchain(), Toolchain)


def _layout_problem() -> str:
    """'' when numpy's arrays have the field layout the entry points read."""
    if not _layout_checked:
        a = np.zeros((3, 2), dtype="float32")
        at = id(a) + HEAD
        fields = (ctypes.c_void_p.from_address(at).value, ctypes.c_int.from_address(at + 8).value)
        descr = ctypes.c_void_p.from_address(at + 40).value
        type_num = ctypes.c_int.from_address(descr + HEAD + 12).value if descr else -1
        ok = fields == (a.ctypes.data, 2) and type_num == a.dtype.num and sys.byteorder == "little"
        _layout_checked.append("" if ok else "numpy's array objects do not have the layout "
                               "the native kernels read (a numpy or Python build they do not know)")
    return _layout_checked[0]


def preamble(chain: Toolchain) -> str:
    """The start of every module: C helpers, vector math declarations, our own exp and tanh,
    numpy's layout."""
    return (C_PREAMBLE + chain.declarations() + "\n#include <tgmath.h>\n" + c_math.SOURCE
            + c_math.mapping() + _GLUE.format(maxd=MAXD, parallel_min=config.openmp_elemwise_minsize, head=HEAD))


@contextlib.contextmanager
def link_batch() -> Iterator[None]:
    """Gather the kernel requests of the thunks made inside into one batch."""
    stack = _batches.__dict__.setdefault("stack", [])
    stack.append(Batch())
    try:
        yield
    finally:
        stack.pop()


def request(render: Callable[[str], str], n_args: int, ready: Callable[[Callable], None]) -> None:
    """Ask for a kernel, built with the rest of its batch the first time it is called."""
    stack = _batches.__dict__.get("stack")
    (stack[-1] if stack else Batch()).add(Request(render, n_args, ready))


def resolve(requests: list[Request]) -> None:
    """Hand every request its entry point: from the memo, the disk cache, or one new build."""
    if not requests:
        return
    chain = toolchain()
    if not isinstance(chain, Toolchain):
        for req in requests:
            req.ready(refuse)
        return
    head = preamble(chain)
    base = cache.digest(chain.key(), head)
    missing: dict[str, Request] = {}
    for req in requests:
        req.key = cache.digest(base, req.render("KERNEL"))
        req.symbol = f"ak_{req.key[:24]}"
        fn = _memo.get(req.key) or _from_disk(req)
        if fn is None:
            missing.setdefault(req.key, req)
    if missing:
        try:
            _build(chain, head, list(missing.values()))
        except native_compiler.CompileError as err:
            warnings.warn(f"{err}\nnumpy's kernels run instead", RuntimeWarning, stacklevel=2)
    for req in requests:
        req.fn = _memo.get(req.key, refuse)
        req.ready(req.fn)


def _from_disk(req: Request) -> Callable | None:
    directory = cache.directory()
    try:
        module, sha = (directory / f"{req.key}.idx").read_text().split()
    except (OSError, ValueError):
        return None
    return _load(directory / module, sha, [req])


def _build(chain: Toolchain, head: str, requests: list[Request]) -> None:
    source = head + "".join(req.render(req.symbol) for req in requests)
    directory = cache.directory()
    path = directory / f"{cache.digest(chain.key(), source)[:40]}.so"
    native_compiler.build(chain, source, path)
    sha = cache.digest_file(path)
    if _load(path, sha, requests) is None:
        raise native_compiler.CompileError(f"the module {path} that was just built does not load")
    for req in requests:
        cache.write_atomic(directory / f"{req.key}.idx", f"{path.name} {sha}\n".encode())


def _load(path: Path, sha: str, requests: list[Request]) -> Callable | None:
    """Load ``path`` if its bytes match ``sha``; memoize the requests' entry points.
    None when the file is missing, corrupt or lacks a symbol (it is then rebuilt)."""
    key = str(path)
    lib = _modules.get(key)
    if lib is None:
        if cache.read_verified(path, sha) is None:
            return None
        if "GOMP_SPINCOUNT" not in os.environ:
            # Read by libgomp when it loads: its idle threads sleep instead of spinning
            # beside the BLAS's threads, which run the next node.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            lib = ctypes.CDLL(key)
            lib.arignote_init(ctypes.c_void_p(id(np.ndarray)))
        except (OSError, AttributeError):
            return None
        with _lock:
            lib = _modules.setdefault(key, lib)
    fn = None
    for req in requests:
        try:
            fn = getattr(lib, req.symbol)
        except AttributeError:
            return None
        fn.argtypes = [ctypes.py_object] * req.n_args
        fn.restype = ctypes.c_int
        with _lock:
            fn = _memo.setdefault(req.key, fn)
    return fn
