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
"""
from __future__ import annotations

import hashlib
import marshal
import os
import sys
import threading
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
