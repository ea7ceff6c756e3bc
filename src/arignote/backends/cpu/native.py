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
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from arignote.backends import linking
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


# A batch's states: "new" (no call has needed a kernel yet), "building" (the compiler
# runs in the background; numpy's kernels run), "built" (in place from the owner's next
# call), "native" (in place), "failed: ..." and "off: ..." (numpy's kernels run).
NEW, BUILDING, BUILT, NATIVE = "not needed yet", "building", "built", "native"


class Batch:
    """The requests of one Function (its ``owner``), resolved together the first time any
    of them is needed, and swapped in together between two of the owner's calls."""

    def __init__(self, owner: Any = None) -> None:
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.owner = None if owner is None else weakref.ref(owner)
        self.state = NEW
        self.build: Build | None = None

    def add(self, req: Request) -> None:
        self.requests.append(req)

        def first_call(*args: object) -> int:
            self.need(in_call=True)
            return req.fn(*args)
        req.ready(first_call)

    def need(self, in_call: bool = False) -> Build | None:
        """Find the entry points, or start their build; ``in_call``: from a thunk of the
        owner's call (which holds its turn), so entry points found now are put in place
        at once. The background build, if one runs, is returned."""
        with self.lock:  # a second thread needing them meanwhile waits for the lookup, once
            if self.state == NEW:
                wait = config.native_build == "wait" or self.owner is None
                self.state = _resolve(self, wait)
            if in_call and self.state != BUILDING:
                self.install()
            return self.build if self.state == BUILDING else None

    def built(self, error: str) -> None:
        """The background build is over: swap the entry points in between two calls."""
        with self.lock:
            for req in self.requests:
                req.fn = _memo.get(req.key, refuse)
            self.state = f"failed: {summary(error)}" if error else BUILT
        owner = self.owner and self.owner()
        if owner is not None and not error:
            owner._between_calls(self.install)

    def install(self) -> None:
        """Put every request's entry point in its thunk (all of them, between two calls)."""
        for req in self.requests:
            req.ready(req.fn)
        if self.state == BUILT:
            self.state = NATIVE


class Build:
    """One compiler run in a background thread; a batch that needs exactly its kernels
    (a copy or an unpickled twin of the function) joins it instead of starting another."""

    def __init__(self, chain: Toolchain, source: str, path: Path, requests: list[Request]):
        self.chain, self.source, self.path, self.requests = chain, source, path, requests
        self.batches: list[Batch] = []
        self.done = threading.Event()
        # Not a daemon: a process that ends during a build waits for it, so no compiler
        # is left running and the next process finds the kernels in the cache.
        self.thread = threading.Thread(target=self.run, name=f"arignote-native-build {path.stem[:12]}")

    def run(self) -> None:
        error = ""
        try:
            _build(self.chain, self.source, self.path, self.requests)
        except Exception as err:  # noqa: BLE001 - no caller to raise to: recorded, warned, numpy runs
            error = str(err) if isinstance(err, native_compiler.CompileError) else f"{type(err).__name__}: {err}"
        _finish(self, error)


def _finish(build: Build, error: str) -> None:
    with _lock:
        if _building.get(build.path) is build:
            del _building[build.path]
        batches = list(build.batches)
        _history["failed" if error else "built"] += 1
        if error:
            _history["last error"] = summary(error)
    if error:
        warnings.warn(f"{error}\nnumpy's kernels run instead", RuntimeWarning, stacklevel=2)
    for batch in batches:
        batch.built(error)
    build.done.set()


def summary(error: str) -> str:
    """A build error in one line: its first and its last (the compiler's own words)."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()] or ["?"]
    return (lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}")[:400]


def refuse(*args: object) -> int:
    """The stand-in entry point of a kernel that is not built (yet): the numpy path runs."""
    return 1


_memo: dict[str, Callable] = {}  # kernel key -> entry point
_modules: dict[str, ctypes.CDLL] = {}  # shared-object path -> loaded library
_building: dict[Path, Build] = {}  # shared-object path -> the background build writing it
_owned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Function -> its Batch
_history = {"built": 0, "failed": 0, "last error": ""}  # background builds of this process
_lock = threading.Lock()
_batches = threading.local()
_layout_checked: list[str] = []


def _forget_builds_in_child() -> None:
    """After ``fork`` the child has no build threads: the builds it inherited fail there."""
    for build in list(_building.values()):
        _finish(build, "the process forked while the kernels were being built")


os.register_at_fork(after_in_child=_forget_builds_in_child)


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
    """Gather the kernel requests of the thunks made inside into one batch, owned by the
    Function linking (``linking.owner()``)."""
    owner = linking.owner()
    batch = Batch(owner)
    stack = _batches.__dict__.setdefault("stack", [])
    stack.append(batch)
    try:
        yield
    finally:
        stack.pop()
    if batch.requests and owner is not None:
        with _lock:
            _owned[owner] = batch


def request(render: Callable[[str], str], n_args: int, ready: Callable[[Callable], None]) -> None:
    """Ask for a kernel, built with the rest of its batch the first time it is needed."""
    stack = _batches.__dict__.get("stack")
    (stack[-1] if stack else Batch()).add(Request(render, n_args, ready))


def status(fn: Any) -> str:
    """Where function ``fn``'s native kernels stand (see ``Function.native_status``)."""
    with _lock:
        batch = _owned.get(fn)
    if batch is None:
        chain = toolchain()
        return "none" if isinstance(chain, Toolchain) else f"off: {chain.reason}"
    return batch.state


def wait(fn: Any, timeout: float | None = None) -> str:
    """Build ``fn``'s native kernels now if no call has needed them yet, wait for the build
    (at most ``timeout`` seconds) and put them in place; then :func:`status`."""
    with _lock:
        batch = _owned.get(fn)
    if batch is not None:
        build = batch.need()
        if build is not None:
            build.done.wait(timeout)
        with fn._turn.held(), batch.lock:  # between two calls
            if batch.state != BUILDING:
                batch.install()
    return status(fn)


def history() -> dict:
    """How many background builds this process finished and failed, and the last error."""
    with _lock:
        return dict(_history)


def _resolve(batch: Batch, wait: bool) -> str:
    """Give every request of ``batch`` its entry point from the memo, the disk cache or a new
    build (in this thread when ``wait``, else in the background); the batch's new state."""
    requests = batch.requests
    chain = toolchain()
    if not isinstance(chain, Toolchain):
        return f"off: {chain.reason}"
    head = preamble(chain)
    base = cache.digest(chain.key(), head)
    missing: dict[str, Request] = {}
    for req in requests:
        req.key = cache.digest(base, req.render("KERNEL"))
        req.symbol = f"ak_{req.key[:24]}"
        fn = _memo.get(req.key) or _from_disk(req)
        if fn is None:
            missing.setdefault(req.key, req)
    state = BUILT
    if missing:
        todo = list(missing.values())
        source = head + "".join(req.render(req.symbol) for req in todo)
        path = cache.directory() / f"{cache.digest(chain.key(), source)[:40]}.so"
        if wait:
            try:
                _build(chain, source, path, todo)
            except native_compiler.CompileError as err:
                warnings.warn(f"{err}\nnumpy's kernels run instead", RuntimeWarning, stacklevel=4)
                state = f"failed: {summary(str(err))}"
        else:
            with _lock:
                build = _building.get(path)
                start = build is None
                if start:
                    build = _building[path] = Build(chain, source, path, todo)
                build.batches.append(batch)
            batch.build = build
            for req in requests:  # numpy's kernels until the swap (the stand-ins did the same)
                req.fn = refuse
                req.ready(refuse)
            if start:
                build.thread.start()
            return BUILDING
    for req in requests:
        req.fn = _memo.get(req.key, refuse)
    return state


def _from_disk(req: Request) -> Callable | None:
    directory = cache.directory()
    try:
        module, sha = (directory / f"{req.key}.idx").read_text().split()
    except (OSError, ValueError):
        return None
    return _load(directory / module, sha, [req])


def _build(chain: Toolchain, source: str, path: Path, requests: list[Request]) -> None:
    """Compile ``requests`` (whose module ``source`` is) into ``path``, load and index them."""
    native_compiler.build(chain, source, path)
    sha = cache.digest_file(path)
    if _load(path, sha, requests) is None:
        raise native_compiler.CompileError(f"the module {path} that was just built does not load")
    for req in requests:
        cache.write_atomic(path.parent / f"{req.key}.idx", f"{path.name} {sha}\n".encode())


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
