"""``scan_checkpoints``: a loop whose gradient keeps one state in ``save_every_N``.

The steps are cut into chunks of ``save_every_N``: an outer loop runs one chunk
per step, each an inner ``scan`` whose last values it keeps. The gradient of
the outer loop stores the states at the chunk boundaries only, and the
gradient of each chunk runs that chunk forward again: memory falls by about
``save_every_N`` for one more forward pass. The result is the states at the
chunk ends (the last one is the loop's last step), which is all a caller may
use; the sequences are zero-padded to whole chunks (``padding``), the last
chunk running only the steps that remain.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arignote.graph.basic import Variable
from arignote.scan_module.basic import scan
from arignote.tensor import math as tm
from arignote.tensor.alloc import zeros
from arignote.tensor.join import join
from arignote.tensor.subtensor.write import set_subtensor
from arignote.tensor.variable import as_tensor_variable

__all__ = ["scan_checkpoints"]


def scan_checkpoints(fn: Callable[..., Any], sequences: Any = None, outputs_info: Any = None,
                     non_sequences: Any = None, name: str = "checkpointscan_fn", n_steps: Any = None,
                     save_every_N: int = 10, padding: bool = True) -> tuple[Any, dict]:
    """``scan`` of ``fn`` returning the states every ``save_every_N`` steps only, whose
    gradient recomputes the steps in between instead of storing them.

    As Theano's: every sequence has the same length (``n_steps``, when given, is
    it), outputs are fed back from the previous step only (no taps), and only the
    last returned step is meant to be used.
    """
    sequences, non_sequences = _as_list(sequences), _as_list(non_sequences)
    for what, items, key in (("outputs_info", _as_list(outputs_info), "taps"),
                             ("sequences", sequences, "taps")):
        for item in items:
            if isinstance(item, dict) and key in item:
                raise RuntimeError(f"scan_checkpoints does not take taps ({what} entry {item!r}): "
                                   "each step sees the previous step's values only; use scan")
    if not isinstance(save_every_N, int) or save_every_N < 1:
        raise ValueError(f"scan_checkpoints: save_every_N must be a positive int, got {save_every_N!r}")
    sequences = [as_tensor_variable(s) for s in sequences]
    if n_steps is None:
        if not sequences:
            raise ValueError("scan_checkpoints needs sequences or n_steps to know how many steps to run")
        n_steps = sequences[0].shape[0]
    n_steps = tm.cast(as_tensor_variable(n_steps), "int64")
    n_chunks = (n_steps + (save_every_N - 1)) // save_every_N
    chunk_steps = set_subtensor((zeros((n_chunks,), dtype="int64") + save_every_N)[-1],
                                n_steps - save_every_N * (n_chunks - 1))
    chunked = [_chunks(s, n_steps, n_chunks, save_every_N, padding) for s in sequences]

    if outputs_info is None:
        outer_infos, recurrent = None, 0
    else:
        outer_infos = _as_list(outputs_info)
        recurrent = sum(info is not None for info in outer_infos)

    def chunk(*args: Any) -> tuple[Any, dict]:
        pieces, steps = args[:len(chunked)], args[len(chunked)]
        states = list(args[len(chunked) + 1:len(chunked) + 1 + recurrent])
        fixed = list(args[len(chunked) + 1 + recurrent:])
        inner_infos = None if outer_infos is None else [
            None if info is None else states.pop(0) for info in outer_infos]
        results, updates = scan(fn, sequences=list(pieces), outputs_info=inner_infos,
                                non_sequences=fixed, n_steps=steps, name=f"{name}_inner",
                                return_list=True)
        return [r[-1] for r in results], updates

    return scan(chunk, sequences=chunked + [chunk_steps], outputs_info=outer_infos,
                non_sequences=non_sequences, n_steps=n_chunks, name=f"{name}_outer")


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _chunks(seq: Variable, n_steps: Variable, n_chunks: Variable, size: int, padding: bool) -> Variable:
    """The first ``n_steps`` rows of ``seq`` as ``(n_chunks, size, ...)``, zero-padded to
    whole chunks when ``padding``."""
    if padding:
        missing = n_chunks * size - n_steps
        seq = join(0, seq[:n_steps],
                   zeros([missing] + [seq.shape[i] for i in range(1, seq.ndim)], dtype=seq.dtype))
    return seq.reshape([n_chunks, size] + [seq.shape[i] for i in range(1, seq.ndim)], ndim=seq.ndim + 1)
