"""The content-addressed disk cache that compiled kernels live in.

An entry's name is a hash of everything that decides its bytes (the source,
the compiler's identity and version, the flags, the CPU's features), never a
hand-bumped version number. Entries are written under a temporary name and
renamed into place, so processes compiling the same kernel at the same moment
never wait for each other and never read a half-written file; whichever
rename lands last wins, with the same bytes. A reader checks an entry against
the digest its index records, so a corrupt entry is found and rebuilt.

The Python that thunks and call paths are generated as is cached here too
(:func:`python_code`, under ``py/``): compiling it costs about 0.3-2 ms a
function, loading it back 20-40 us, which is most of a warm ``function()``'s
linking time otherwise.

Nothing is ever evicted (entries are small, and a hash names them, so a stale
one is only unused): ``arignote cache`` shows what the directory holds by
kind, ``arignote cache clear`` (:func:`clear`) empties it, as ``theano-cache``
did; kernels are then compiled again when next needed.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import sys
import threading
import time
from pathlib import Path
from types import CodeType

from arignote.config import config


def directory(compiledir: str | None = None) -> Path:
    """``compiledir`` (default ``config.compiledir``), created on first use."""
    path = Path(config.compiledir if compiledir is None else compiledir).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def digest(*parts: str | bytes) -> str:
    """A SHA-256 over ``parts``, each length-prefixed so no two splits collide."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def temporary(path: Path) -> Path:
    """A name beside ``path`` that no other process or thread uses."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{os.urandom(4).hex()}.tmp")


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file, or all of the new one."""
    tmp = temporary(path)
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_verified(path: Path, sha: str) -> bytes | None:
    """The bytes at ``path`` if their SHA-256 is ``sha``; None when missing or corrupt."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == sha else None


def digest_file(path: Path) -> str:
    """The SHA-256 of a file's bytes (what :func:`read_verified` checks)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


_code_dir: list[tuple[str, Path]] = []  # (compiledir, its py/ folder), made once


def python_code(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, through the disk cache: keyed by both and the
    interpreter (marshal's format is its own); a corrupt entry is compiled again."""
    if not _code_dir or _code_dir[0][0] != config.compiledir:
        try:
            folder = directory() / "py"
            folder.mkdir(exist_ok=True)
        except OSError:  # no usable cache directory: compiled each time
            return compile(source, filename, "exec")
        _code_dir[:] = [(config.compiledir, folder)]
    # os.path and open(), not pathlib: a new process's function() reads a dozen of these.
    path = os.path.join(_code_dir[0][1], f"{digest(source, filename, sys.version)[:40]}.code")
    try:
        with open(path, "rb") as entry:
            code = marshal.loads(entry.read())
        if isinstance(code, CodeType):
            return code
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, filename, "exec")
    try:
        write_atomic(Path(path), marshal.dumps(code))
    except OSError:
        pass  # a read-only cache: compiled each time
    return code


# What the cache directory holds: (kind, sub-folder, file pattern). Files no pattern
# matches are not ours and are left alone.
KINDS = (
    ("native kernel modules", "", "*.so"),
    ("native kernel indices", "", "[0-9a-f]*.idx"),
    ("compiler probes", "", "probe-*.json"),
    ("GPU program binaries", "", "gpu-*.bin"),
    ("GPU program indices (older format)", "", "gpu-*.idx"),
    ("GPU programs built from source once", "", "gpu-*.src"),
    ("GPU binary producers' locks", "", "gpu-*.lock"),
    ("generated Python", "py", "*.code"),
    ("unfinished writes", "", ".*.tmp"),
    ("unfinished writes", "py", ".*.tmp"),
)
# Files a running process may be writing or holding: kept by clear() while this young.
_IN_USE = (".lock", ".tmp")
IN_USE_SECONDS = 600.0


def contents(compiledir: str | None = None) -> list[tuple[str, int, int]]:
    """(kind, files, bytes) for each kind of entry in ``compiledir`` (default
    ``config.compiledir``), in ``KINDS``' order, a kind that two rows share summed."""
    totals: dict[str, list[int]] = {}
    for kind, path in _entries(compiledir):
        row = totals.setdefault(kind, [0, 0])
        row[0] += 1
        row[1] += _size(path)
    return [(kind, files, size) for kind, (files, size) in totals.items()]


def clear(compiledir: str | None = None) -> tuple[int, int]:
    """Remove every entry of ours from ``compiledir``; (files, bytes) removed. A lock or an
    unfinished write younger than ``IN_USE_SECONDS`` stays: another process may hold it.
    Safe while other processes use the cache: a module they loaded stays mapped, and an
    entry they look for next is compiled again."""
    files = size = 0
    now = time.time()
    for _, path in _entries(compiledir):
        try:
            stat = path.stat()
            if path.suffix in _IN_USE and now - stat.st_mtime < IN_USE_SECONDS:
                continue
            path.unlink()
        except FileNotFoundError:
            continue  # another process removed or replaced it meanwhile
        files += 1
        size += stat.st_size
    return files, size


def _entries(compiledir: str | None):
    root = Path(config.compiledir if compiledir is None else compiledir).expanduser()
    for kind, folder, pattern in KINDS:
        for path in sorted((root / folder).glob(pattern)):
            if path.is_file():
                yield kind, path


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
