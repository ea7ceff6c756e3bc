"""Compiled GPU programs on disk, in the kernel cache of ``backends/kernels/cache.py``.

An entry is named by a digest of everything that decides its bytes: the
joined source, the device and driver identity, the runtime's version and the
build options. ``gpu-<key>.bin`` holds the SHA-256 of the program binary, then
the binary, written under a temporary name and renamed: one file, so a reader
sees an old entry, a whole new one or none, even when processes store the same
key at once (a driver need not give the same bytes twice: PoCL does not). A
corrupt entry (its digest differs) is rebuilt and written again. A GPU's
binaries are stored as they are built; PoCL's by a background process
(``binary_producer.py``), since PoCL takes seconds to give one.
"""
from __future__ import annotations

import hashlib

from arignote.backends.kernels import cache

_DIGEST = hashlib.sha256().digest_size


def key(*parts: str) -> str:
    return cache.digest(*parts)


def load(name: str) -> bytes | None:
    """The binary stored under ``name``, or None when missing or corrupt."""
    try:
        data = (cache.directory() / f"gpu-{name}.bin").read_bytes()
    except OSError:
        return None
    binary = data[_DIGEST:]
    return binary if hashlib.sha256(binary).digest() == data[:_DIGEST] else None


def store(name: str, binary: bytes) -> None:
    """Keep ``binary`` under ``name``; a cache that cannot be written is skipped silently
    (the next process builds again)."""
    try:
        cache.write_atomic(cache.directory() / f"gpu-{name}.bin", hashlib.sha256(binary).digest() + binary)
    except OSError:
        pass
