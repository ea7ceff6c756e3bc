"""``theano.configdefaults``: the helpers code imports from it, and the names it had from
``theano.configparser`` (``DeviceParam`` and ``ContextsParam`` were its own)."""
from __future__ import annotations

import platform
import struct
from itertools import dropwhile

from arignote.compat.theano.configparser import (THEANO_FLAGS_DICT, AddConfigVar, BoolParam,
                                                 ConfigParam, ContextsParam, DeviceParam, EnumStr,
                                                 FloatParam, IntParam, StrParam, TheanoConfigParser,
                                                 change_flags, config)

__all__ = ["config", "change_flags", "python_int_bitwidth", "local_bitwidth", "short_platform",
           "AddConfigVar",
           "BoolParam", "ConfigParam", "ContextsParam", "DeviceParam", "EnumStr", "FloatParam",
           "IntParam", "StrParam", "TheanoConfigParser", "THEANO_FLAGS_DICT"]


def python_int_bitwidth() -> int:
    """The width of a C long (Python ints as numpy reads them): 64 on 64-bit Unix."""
    return struct.calcsize("l") * 8


def local_bitwidth() -> int:
    """The width of a pointer: 64 on a 64-bit Python."""
    return struct.calcsize("P") * 8


def short_platform(r: str | None = None, p: str | None = None) -> str:
    """Theano's ``short_platform``: ``platform.platform()`` (or ``p``) with its kernel release
    ``r`` (default ``platform.release()``) made less precise, so that a name built from it
    (Theano's compiledir) survives kernel updates: ``3.2.0-70.1-generic`` becomes
    ``3.2--generic`` (major.minor, then the build number's leading digit fields dropped).
    A release not of the form ``X.Y.Z...-...`` leaves the platform string unchanged."""
    release = platform.release() if r is None else r
    full = platform.platform() if p is None else p
    version, sep, build = release.partition("-")
    numbers = version.split(".")
    if not sep or len(numbers) < 3:
        return full
    first, more, rest = build.partition("-")
    first = ".".join(dropwhile(str.isdigit, first.split(".")))
    short = "-".join([".".join(numbers[:2]), first] + ([rest] if more else []))
    return full.replace(release, short)
