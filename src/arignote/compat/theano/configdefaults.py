"""``theano.configdefaults`` / ``theano.configparser``: the helpers code imports from them."""
from __future__ import annotations

import struct

from arignote.config import config

__all__ = ["config", "change_flags", "python_int_bitwidth", "local_bitwidth"]

change_flags = config.change_flags


def python_int_bitwidth() -> int:
    """The width of a C long (Python ints as numpy reads them): 64 on 64-bit Unix."""
    return struct.calcsize("l") * 8


def local_bitwidth() -> int:
    """The width of a pointer: 64 on a 64-bit Python."""
    return struct.calcsize("P") * 8
