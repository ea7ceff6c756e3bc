"""``map``, ``reduce``, ``foldl``, ``foldr``: the common loops, written with ``scan``."""
from __future__ import annotations

from typing import Any
from collections.abc import Callable

from arignote.scan_module.basic import scan


def map(fn: Callable[..., Any], sequences: Any, non_sequences: Any = None, truncate_gradient: int = -1,
        go_backwards: bool = False, mode: Any = None, name: str | None = None) -> tuple[Any, dict]:
    """``fn`` applied to each step of the sequences; returns ``(outputs, updates)``."""
    return scan(fn, sequences=sequences, outputs_info=None, non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode, name=name)


def reduce(fn: Callable[..., Any], sequences: Any, outputs_info: Any, non_sequences: Any = None,
           go_backwards: bool = False, mode: Any = None, name: str | None = None) -> tuple[Any, dict]:
    """Like ``scan``, but each output is only its value after the last step."""
    outputs, updates = scan(fn, sequences=sequences, outputs_info=outputs_info,
                            non_sequences=non_sequences, go_backwards=go_backwards, mode=mode,
                            name=name, return_list=True)
    last = [out[-1] for out in outputs]
    return (last[0] if len(last) == 1 else last), updates


def foldl(fn: Callable[..., Any], sequences: Any, outputs_info: Any, non_sequences: Any = None,
          mode: Any = None, name: str | None = None) -> tuple[Any, dict]:
    """``reduce`` from the first element to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=False, mode=mode, name=name)


def foldr(fn: Callable[..., Any], sequences: Any, outputs_info: Any, non_sequences: Any = None,
          mode: Any = None, name: str | None = None) -> tuple[Any, dict]:
    """``reduce`` from the last element to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True, mode=mode, name=name)
