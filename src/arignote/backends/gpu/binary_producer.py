"""Program binaries for an OpenCL device that is the CPU (PoCL), made off the critical path.

There a new process rebuilds a program from source through PoCL's own cache
(benchmark G4's 11 kernels: 40-90 ms), where building it from its binary
takes 4-15 ms; but PoCL gives a binary only after compiling a generic
work-group function for every kernel (2.5-14 s for G4). So once a program is
built from source a second time (a marker in our cache records the first: a
program built once, as most tests' are, never costs a binary), a detached
process at the lowest priority runs :func:`main`: it builds the same source on
the same device and stores its binary through ``binaries.store``, for later
processes to load. The process that asked waits neither for it nor for its
exit: it is started through ``sh``, which puts it in the background and exits
at once, so no child of ours is left to reap.

One producer per program: its request is the lock file ``gpu-<key>.lock``,
created with O_EXCL, holding what the producer needs (device, source, options,
cache directory); the producer removes it when it ends. A lock older than
``STALE`` seconds (its producer was killed) is taken over; two processes
taking over one stale lock at once may start two producers, which store the
same whole entry.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from arignote.backends.gpu import binaries
from arignote.backends.kernels import cache
from arignote.config import config

STALE = 600.0  # seconds; G4's binary takes 2.5-14 s on this machine's PoCL
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])  # where ``arignote`` is imported from


def built_from_source(name: str, job: dict) -> bool:
    """Program ``name`` was just built from source: the first time, leave a marker; after
    that, start its producer unless one runs. ``job``: platform, device, source, options.
    True when a producer was started."""
    try:
        directory = cache.directory()
        marker = directory / f"gpu-{name}.src"
        if not marker.exists():
            marker.touch()
            return False
        return start(directory / f"gpu-{name}.lock", dict(job, name=name, compiledir=str(directory)))
    except OSError:  # a cache that cannot be written: every process builds from source
        return False


def start(lock: Path, job: dict) -> bool:
    """Take ``lock`` with ``job`` in it and start the producer; False when another holds it."""
    try:
        fd = _claim(lock)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(job, f)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [_PACKAGE_ROOT,
                                                                       os.environ.get("PYTHONPATH")])))
        subprocess.run(["sh", "-c", '"$@" </dev/null >/dev/null 2>&1 &', "sh", *_command(lock)],
                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, start_new_session=True, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        lock.unlink(missing_ok=True)
        return False
    return True


def _command(lock: Path) -> list[str]:
    """The producer's command line (tests put a slow one in its place): the lowest priority
    (``nice`` 19) before it imports anything, so its start does not slow the process that
    asked either."""
    return [sys.executable, "-c", f"import os, sys; os.nice(19); from {__name__} import main; "
            "main(sys.argv[1])", str(lock)]


def _claim(lock: Path) -> int:
    """``lock`` created by this process (its descriptor), taking over a stale one;
    FileExistsError while another process holds it."""
    try:
        return os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        try:
            if time.time() - lock.stat().st_mtime < STALE:
                raise
            stale = cache.temporary(lock)
            os.rename(lock, stale)  # one process wins the rename; the others find no lock
            stale.unlink()
        except FileNotFoundError:
            raise FileExistsError(lock) from None
        return os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)


def produce(job: dict) -> None:
    """Build ``job``'s source on its device and store the binary under its name, unless
    the device that answers to its numbers now is another (the name would not match)."""
    import pyopencl as cl

    from arignote.backends.gpu import opencl
    platform = cl.get_platforms()[job["platform"]]
    device = platform.get_devices()[job["device"]]
    if binaries.key(job["source"], opencl.identity(platform, device), *job["options"]) != job["name"]:
        return
    built = cl.Program(cl.Context([device]), job["source"]).build(options=job["options"])
    with config.change_flags(compiledir=job["compiledir"]):
        binaries.store(job["name"], built.get_info(cl.program_info.BINARIES)[0])


def main(lock: str) -> None:
    """The producer: do the request in ``lock``, then remove it, whatever happened."""
    try:
        produce(json.loads(Path(lock).read_text()))
    finally:
        Path(lock).unlink(missing_ok=True)
