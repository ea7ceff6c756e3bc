"""Timing helpers shared by the benchmark scripts: interleaved repeats, medians."""
from __future__ import annotations

import statistics
import time
from typing import Callable


def per_call(fn: Callable[[], object], calls: int, repeats: int = 7) -> float:
    """Median over ``repeats`` of the mean seconds per call over ``calls`` calls."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def interleaved(candidates: dict[str, Callable[[], object]], calls: int, rounds: int = 7
                ) -> dict[str, float]:
    """Median seconds per call of each candidate, timed round-robin so drift hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for fn in candidates.values():
        fn()  # warm up: first-call allocations and caches
    for _ in range(rounds):
        for name, fn in candidates.items():
            samples[name].append(per_call(fn, calls, repeats=1))
    return {name: statistics.median(values) for name, values in samples.items()}
