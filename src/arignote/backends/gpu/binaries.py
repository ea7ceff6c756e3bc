"""Compiled GPU programs on disk, in the kernel cache of ``backends/kernels/cache.py``.

An entry is named by a digest of everything that decides its bytes: the
joined source, the device and driver identity, the runtime's version and the
build options. ``gpu-<key>.bin`` holds the program binary and
``gpu-<key>.idx`` its SHA-256; both are written under a temporary name and
renamed, so a reader sees an old entry, a whole new one, or none, and a
corrupt binary (its digest differs) is rebuilt and written again.
"""
from __future__ import annotations

import hashlib

from arignote.backends.kernels import cache


def key(*parts: str) -> str:
    return cache.digest(*parts)


def load(name: str) -> bytes | None:
    """The binary stored under ``name``, or None when missing or corrupt."""
    try:
        sha = (cache.directory() / f"gpu-{name}.idx").read_text().strip()
    except OSError:
        return None
    return cache.read_verified(cache.directory() / f"gpu-{name}.bin", sha)


def store(name: str, binary: bytes) -> None:
    """Keep ``binary`` under ``name``; a cache that cannot be written is skipped silently
    (the next process builds again)."""
    try:
        directory = cache.directory()
        cache.write_atomic(directory / f"gpu-{name}.bin", binary)
        # Two processes storing one key at once may leave one's binary and the other's
        # digest: that entry then reads as corrupt and is built again, never used wrongly.
        cache.write_atomic(directory / f"gpu-{name}.idx", hashlib.sha256(binary).hexdigest().encode())
    except OSError:
        pass
