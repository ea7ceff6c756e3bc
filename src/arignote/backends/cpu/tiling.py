"""Tile-by-tile evaluation of fused elementwise chains, on a small thread pool.

Each tile is a slice of the output small enough that a chain's intermediates
stay in cache; numpy releases the GIL inside ufunc loops, so tiles run in
parallel on ``OMP_NUM_THREADS`` threads (all cores by default), as Theano's
OpenMP elementwise loops did.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

TILE = 32768  # elements per tile: few Python calls per element, intermediates still cache-sized
PARALLEL_MIN = 4 * TILE  # below this, handing tiles to threads costs more than it saves


def thread_count() -> int:
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        return os.cpu_count() or 1


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_local = threading.local()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor  # not at import: ~10 ms
            _pool = ThreadPoolExecutor(thread_count(), thread_name_prefix="arignote-tile")
        return _pool


def _scratch(dtypes: tuple[str, ...]) -> list[np.ndarray]:
    """Per-thread scratch buffers, kept between calls."""
    cache = _local.__dict__.setdefault("scratch", {})
    buffers = cache.get(dtypes)
    if buffers is None:
        buffers = cache[dtypes] = [np.empty(TILE, dtype=d) for d in dtypes]
    return buffers


def run_tiled(kernel: Callable[..., None], inputs: Sequence[np.ndarray], out: np.ndarray,
              step_dtypes: tuple[str, ...]) -> None:
    """``kernel(*inputs, out, *scratch)`` over tiles of ``out`` (already the broadcast shape)."""
    shape = out.shape
    # Operands of one element broadcast against any tile: pass them as 0-d.
    inputs = [i.reshape(()) if np.size(i) == 1 else i for i in inputs]
    if all(np.ndim(i) == 0 or (np.shape(i) == shape and i.flags.c_contiguous) for i in inputs):
        flat_in = [i if np.ndim(i) == 0 else i.reshape(-1) for i in inputs]
        flat_out = out.reshape(-1)
        bounds = [(start, min(start + TILE, flat_out.size)) for start in range(0, flat_out.size, TILE)]

        def tile(bound: tuple[int, int]) -> None:
            start, stop = bound
            scratch = _scratch(step_dtypes)
            kernel(*[i if np.ndim(i) == 0 else i[start:stop] for i in flat_in],
                   flat_out[start:stop], *[t[:stop - start] for t in scratch])
    else:
        # Broadcasting inputs: tile along the first axis, where slices stay views.
        rows = max(1, TILE // max(1, out[0].size))
        bounds = [(start, min(start + rows, shape[0])) for start in range(0, shape[0], rows)]

        def tile(bound: tuple[int, int]) -> None:
            start, stop = bound
            part = out[start:stop]
            scratch = _scratch(step_dtypes) if part.size <= TILE else None
            kernel(*[i[start:stop] if np.ndim(i) and np.shape(i)[0] != 1 else i for i in inputs],
                   part, *[t[:part.size].reshape(part.shape) if scratch else None
                           for t in (scratch or step_dtypes)])
    if out.size >= PARALLEL_MIN and len(bounds) > 1 and thread_count() > 1:
        list(_executor().map(tile, bounds))
    else:
        for bound in bounds:
            tile(bound)
