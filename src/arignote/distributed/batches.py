"""Chunked evaluation: a compiled function applied to dask arrays chunk by chunk.

``map_batches(f, x, y)`` is lazy, like any dask array operation: it publishes ``f``
(a program, compiled once per worker) and the values of the shared variables it
reads as they are now (each crosses to a worker once, and again only after its value
changed), and returns dask arrays whose chunks are ``f``'s outputs on the chunks of
the inputs along the batch axis (axis 0).
"""
from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np
from dask import delayed
from distributed import default_client

from arignote.compile.executor import Function
from arignote.distributed.publish import ProgramRef, SharedRef, publisher
from arignote.distributed.worker import DEFAULT, space


def map_batches(fn: Function, *args: Any, client: Any = None) -> Any:
    """``fn`` applied to each chunk (along axis 0) of the dask arrays among ``args``.

    ``fn`` must compute per-example outputs: each output has the batch axis first,
    with as many rows as the chunk. Arguments that are not dask arrays (arrays,
    scalars) go whole to every chunk. The dask arrays are rechunked to the first
    one's chunks along axis 0 and to one chunk along the other axes. Returns a dask
    array, or a list of them where ``fn`` returns a list. The shared variables ``fn``
    reads are taken with their values at this call; ``fn`` may not update any.
    ``client`` defaults to the current ``distributed`` client.
    """
    if not isinstance(fn, Function):
        raise TypeError(f"map_batches: fn must be a compiled arignote function (arignote.function(...)), "
                        f"got {type(fn).__name__}")
    if fn.maker.updates:
        targets = ", ".join(str(t if not hasattr(t, "describe") else t.describe()) for t, _ in fn.maker.updates)
        raise ValueError(f"map_batches: {fn._label()} updates {targets}: chunks run on several workers, "
                         "so updates have no meaning there; compile it without updates "
                         "(fn.copy(delete_updates=True))")
    batched = [k for k, a in enumerate(args) if isinstance(a, da.Array)]
    if not batched:
        raise TypeError("map_batches: no argument is a dask array: pass the batched inputs as dask arrays "
                        "(dask.array.from_array(x, chunks=(rows, ...)))")
    args = list(args)
    first = args[batched[0]]
    for k in batched:
        a = args[k]
        if a.ndim == 0 or a.shape[0] != first.shape[0]:
            raise ValueError(f"map_batches: argument {k} has shape {a.shape} but argument {batched[0]} has "
                             f"{first.shape[0]} rows: every dask array needs the same number of rows (axis 0)")
        args[k] = a.rechunk((first.chunks[0],) + tuple(-1 for _ in a.shape[1:]))
    client = client or default_client()
    pub = publisher(client)
    outputs, single = _probe(fn, args, batched)
    program, variables = pub.program(fn)
    refs = tuple(pub.value(v) for v in variables)

    blocks = {k: args[k].to_delayed().reshape(-1) for k in batched}
    whole = [delayed(a) if isinstance(a, np.ndarray) else a for a in args]
    rows = first.chunks[0]
    parts = []
    for s, n in enumerate(rows):
        chunk_args = [blocks[k][s] if k in blocks else whole[k] for k in range(len(args))]
        shapes = tuple((n,) + trail for trail, _ in outputs)
        parts.append(delayed(run_batch, nout=len(outputs), pure=True)(program, refs, shapes, *chunk_args))
    arrays = [da.concatenate([da.from_delayed(part[j], shape=(n,) + trail, dtype=dtype)
                              for part, n in zip(parts, rows)], axis=0)
              for j, (trail, dtype) in enumerate(outputs)]
    return arrays[0] if single else arrays


def _probe(fn: Function, args: list, batched: list[int]) -> tuple[list[tuple[tuple, np.dtype]], bool]:
    """Output trailing shapes and dtypes, from a call on one row of zeros per dask array."""
    sample = [np.zeros((1,) + a.shape[1:], a.dtype) if k in batched else a for k, a in enumerate(args)]
    with np.errstate(all="ignore"):
        try:
            result = fn(*sample)
        except Exception as err:
            raise ValueError(f"map_batches: {fn._label()} failed on one row of zeros shaped like the "
                             f"chunks ({err}); map_batches needs a function it can call on any rows") from err
    single = not isinstance(result, (list, tuple))
    outputs = []
    for j, out in enumerate([result] if single else result):
        out = np.asarray(out)
        if out.ndim == 0 or out.shape[0] != 1:
            raise ValueError(f"map_batches: output {j} of {fn._label()} has shape {out.shape} for one row of "
                             "input: map_batches maps per-example functions, whose outputs keep the batch "
                             "axis first; reduce the chunks of a per-example output instead "
                             "(map_batches(f, x).sum(axis=0))")
        outputs.append((out.shape[1:], out.dtype))
    return outputs, single


def run_batch(program: ProgramRef, refs: tuple[SharedRef, ...], shapes: tuple, *args: Any) -> tuple:
    """A task: the program on one chunk, in this worker's default space."""
    here = space(DEFAULT)
    with here.hold(refs):
        result = here.program(program)(*args)
    outs = [result] if len(shapes) == 1 and not isinstance(result, list) else result
    for j, (out, shape) in enumerate(zip(outs, shapes)):
        if np.shape(out) != shape:
            raise ValueError(f"map_batches: output {j} has shape {np.shape(out)} on a chunk of {shape[0]} "
                             f"rows, where {shape} was expected (the output's shape for one row, with the "
                             "chunk's rows): the function is not per-example")
    return tuple(outs)
