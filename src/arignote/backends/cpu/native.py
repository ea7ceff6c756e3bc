"""Native kernels: C from the one renderer, built by the system compiler, called through ctypes.

A thunk asks for a kernel with :func:`request`; while a Function links
(:func:`link_batch`), requests are gathered into one batch, and the first time
any of them is called (an array of ``native_min_size`` elements or more),
every kernel of the batch not already in the memo or on disk is compiled in
one compiler run, into one shared object. A function that only ever sees
small arrays compiles nothing. That run happens in a background thread
(``config.native_build='background'``): numpy's kernels run until it is done,
then the batch's entry points are swapped in together between two of the
function's calls (``Function._between_calls``); see docs/architecture.md.
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


# A batch's states: "not needed yet" (no call has needed a kernel), "building" (the
# probe and compiler run in the background; numpy's kernels run), "built" (in place from
# the owner's next call), "native" (in place), "failed: ..." and "off: ..." (numpy's run).
NEW, BUILDING, BUILT, NATIVE = "not needed yet", "building", "built", "native"


class Batch:
    """The requests of one Function (its ``owner``), resolved together the first time any
    of them is needed, and swapped in together between two of the owner's calls."""

    def __init__(self, owner: Any = None) -> None:
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.owner = None if owner is None else weakref.ref(owner)
        self.state = NEW
        self.resolved = threading.Event()  # set once the state is none of NEW, BUILDING

    def add(self, req: Request) -> None:
        self.requests.append(req)

        def first_call(*args: object) -> int:
            self.need(in_call=True)
            return req.fn(*args)
        req.ready(first_call)

    def need(self, in_call: bool = False) -> None:
        """Find the entry points (memo, disk) or have them built: in this thread under
        ``native_build=wait``, else in a background thread. ``in_call``: from a thunk of
        the owner's call, which holds its turn, so entry points found are put in place now."""
        with self.lock:  # a second thread needing them meanwhile waits for the lookup, once
            if self.state == NEW:
                flags = native_compiler.settings()
                if config.native_build == "wait" or self.owner is None:
                    self.state = _resolve(self.requests, flags)
                else:
                    self.state = _resolve(self.requests, flags, cached_only=True) or BUILDING
                if self.state == BUILDING:
                    for req in self.requests:  # numpy's kernels until the swap, as the stand-ins
                        req.fn = refuse
                        req.ready(refuse)
                    with _lock:
                        _pending.add(self)
                    # Not a daemon: a process that ends during a build waits for it, so no
                    # compiler is cut off and the next process finds the kernels cached.
                    threading.Thread(target=self._build, args=(flags,), name="arignote native build").start()
                else:
                    self.resolved.set()
            if in_call and self.state != BUILDING:
                self.install()

    def _build(self, flags: native_compiler.Settings) -> None:
        try:
            state = _resolve(self.requests, flags)
        except Exception as err:  # noqa: BLE001 - no caller to raise to: said, and numpy runs
            state = f"failed: {type(err).__name__}: {err}"
            warnings.warn(f"building native kernels: {state}; numpy's kernels run instead",
                          RuntimeWarning, stacklevel=1)
        self.built(state)

    def built(self, state: str) -> None:
        """The background build is over: swap the entry points in between two calls."""
        with _lock:
            if self not in _pending:
                return  # a fork marked it failed meanwhile
            _pending.discard(self)
            _history["built" if state == BUILT else "failed"] += 1
            if state != BUILT:
                _history["last error"] = state.split(": ", 1)[-1]
        with self.lock:
            self.state = state
        owner = self.owner and self.owner()
        if owner is not None and state == BUILT:
            owner._between_calls(self.swap)
        self.resolved.set()

    def swap(self) -> None:
        with self.lock:
            self.install()

    def install(self) -> None:
        """Put every request's entry point in its thunk (all of them, between two calls)."""
        for req in self.requests:
            req.ready(req.fn)
        if self.state == BUILT:
            self.state = NATIVE


class Running:
    """A module some thread is compiling: others needing exactly it wait for it (a copy or
    an unpickled twin of a function, another thread's function of the same graph)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error = ""


def summary(error: str) -> str:
    """A build error in one line: its first and its last (the compiler's own words)."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()] or ["?"]
    return (lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}")[:400]


def refuse(*args: object) -> int:
    """The stand-in entry point of a kernel that is not built (yet): the numpy path runs."""
    return 1


_memo: dict[str, Callable] = {}  # kernel key -> entry point
_modules: dict[str, ctypes.CDLL] = {}  # shared-object path -> loaded library
_building: dict[Path, Running] = {}  # shared-object path -> the build writing it
_pending: set[Batch] = set()  # batches whose background build runs
_owned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Function -> its Batch
_history = {"built": 0, "failed": 0, "last error": ""}  # background builds of this process
_lock = threading.Lock()
_batches = threading.local()
_layout_checked: list[str] = []
_preambles: dict[tuple, tuple[str, str]] = {}  # (toolchain, OpenMP threshold) -> head, digest


def _forget_builds_in_child() -> None:
    """After ``fork`` the child has none of the build threads: what they were doing failed
    there (no lock is taken: another thread may have held one at the fork)."""
    for batch in list(_pending):
        batch.state = "failed: the process forked while its kernels were being built"
        batch.resolved.set()
    _pending.clear()
    for running in _building.values():
        running.error = "the process forked during the build"
        running.done.set()
    _building.clear()


os.register_at_fork(after_in_child=_forget_builds_in_child)


def toolchain() -> Toolchain | Unavailable:
    """The compiler native kernels use, or why there is none (numpy's kernels run then);
    runs the probe if neither this process nor the disk cache knows its result."""
    return _checked(native_compiler.toolchain())


def _checked(chain: Toolchain | Unavailable | None) -> Toolchain | Unavailable | None:
    if isinstance(chain, Toolchain):
        problem = _layout_problem()
        if problem:
            return Unavailable(problem, "none needed: numpy's kernels run")
    return chain


def available() -> bool:
    """Whether native kernels run here (runs the compiler's probe if it is not cached)."""
    return isinstance(toolchain(), Toolchain)


def wanted() -> bool:
    """Whether thunks should ask for native kernels, decided without running a compiler: a
    compiler is configured and not known to fail (one not probed yet is tried with the
    first build, in the background)."""
    chain = _checked(native_compiler.known())
    return isinstance(chain, Toolchain) if chain is not None else bool(config.own("cxx").strip())


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


def preamble(chain: Toolchain, parallel_min: int) -> tuple[str, str]:
    """The start of every module (C helpers, vector math declarations, our own exp and
    tanh, numpy's layout; OpenMP from ``parallel_min`` elements) and the digest its
    kernels' keys start from (memoized)."""
    wanted = (chain, parallel_min)
    found = _preambles.get(wanted)
    if found is None:
        head = (C_PREAMBLE + chain.declarations() + "\n#include <tgmath.h>\n" + c_math.SOURCE
                + c_math.mapping() + _GLUE.format(maxd=MAXD, parallel_min=wanted[1], head=HEAD))
        found = _preambles[wanted] = (head, cache.digest(chain.key(), head))
    return found


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
    if batch is not None:
        return batch.state
    chain = _checked(native_compiler.known())
    return f"off: {chain.reason}" if isinstance(chain, Unavailable) else "none"


def wait(fn: Any, timeout: float | None = None) -> str:
    """Build ``fn``'s native kernels now if no call has needed them yet, wait for the build
    (at most ``timeout`` seconds) and put them in place; then :func:`status`."""
    with _lock:
        batch = _owned.get(fn)
    if batch is not None:
        batch.need()
        batch.resolved.wait(timeout)
        with fn._turn.held(), batch.lock:  # between two calls
            if batch.state != BUILDING:
                batch.install()
    return status(fn)


def history() -> dict:
    """How many background builds this process finished and failed, and the last error."""
    with _lock:
        return dict(_history)


def _resolve(requests: list[Request], flags: native_compiler.Settings,
             cached_only: bool = False) -> str | None:
    """Give every request its entry point, from the memo, the disk cache or one compiler
    run, and say how that went (BUILT, "failed: ...", "off: ..."); ``cached_only``: None
    instead of running the probe or the compiler."""
    chain = _checked((native_compiler.known if cached_only else native_compiler.toolchain)(flags))
    if chain is None:
        return None
    if not isinstance(chain, Toolchain):
        return f"off: {chain.reason}"
    head, base = preamble(chain, flags.openmp_elemwise_minsize)
    directory = cache.directory(flags.compiledir)
    missing: dict[str, Request] = {}
    for req in requests:
        req.key = cache.digest(base, req.render("KERNEL"))
        req.symbol = f"ak_{req.key[:24]}"
        fn = _memo.get(req.key) or _from_disk(req, directory)
        if fn is None:
            missing.setdefault(req.key, req)
    if missing and cached_only:
        return None
    error = _build_once(chain, head, list(missing.values()), directory) if missing else ""
    for req in requests:
        req.fn = _memo.get(req.key, refuse)
    return f"failed: {summary(error)}" if error else BUILT


def _build_once(chain: Toolchain, head: str, requests: list[Request], directory: Path) -> str:
    """Build ``requests`` into one module, or wait for the thread already building exactly
    that module; the compiler's error, or ''."""
    source = head + "".join(req.render(req.symbol) for req in requests)
    path = directory / f"{cache.digest(chain.key(), source)[:40]}.so"
    with _lock:
        running = _building.get(path)
        mine = running is None
        if mine:
            running = _building[path] = Running()
    if not mine:
        running.done.wait()
        return running.error
    try:
        _build(chain, source, path, requests)
    except native_compiler.CompileError as err:
        running.error = str(err)
        warnings.warn(f"{err}\nnumpy's kernels run instead", RuntimeWarning, stacklevel=2)
    except BaseException as err:
        running.error = f"{type(err).__name__}: {err}"
        raise
    finally:
        with _lock:
            _building.pop(path, None)
        running.done.set()
    return running.error


def _from_disk(req: Request, directory: Path) -> Callable | None:
    try:  # os.path, not pathlib: a new process's first call reads one index per kernel
        with open(os.path.join(directory, f"{req.key}.idx"), "rb") as index:
            module, sha = index.read().decode().split()
    except (OSError, ValueError):
        return None
    return _load(os.path.join(directory, module), sha, [req])


def _build(chain: Toolchain, source: str, path: Path, requests: list[Request]) -> None:
    """Compile ``requests`` (whose module ``source`` is) into ``path``, load and index them."""
    native_compiler.build(chain, source, path)
    sha = cache.digest_file(path)
    if _load(path, sha, requests) is None:
        raise native_compiler.CompileError(f"the module {path} that was just built does not load")
    for req in requests:
        cache.write_atomic(path.parent / f"{req.key}.idx", f"{path.name} {sha}\n".encode())


def _load(path: Path | str, sha: str, requests: list[Request]) -> Callable | None:
    """Load ``path`` if its bytes match ``sha``; memoize the requests' entry points.
    None when the file is missing, corrupt or lacks a symbol (it is then rebuilt)."""
    key = os.fspath(path)
    lib = _modules.get(key)
    if lib is None:
        if cache.read_verified(Path(key), sha) is None:
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
