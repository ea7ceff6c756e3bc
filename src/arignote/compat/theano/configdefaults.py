"""``theano.configdefaults``: the helpers code imports from it, and the names it had from
``theano.configparser`` (``DeviceParam`` and ``ContextsParam`` were its own)."""
from __future__ import annotations

import struct

from arignote.compat.theano.configparser import (THEANO_FLAGS_DICT, AddConfigVar, BoolParam,
                                                 ConfigParam, ContextsParam, DeviceParam, EnumStr,
                                                 FloatParam, IntParam, StrParam, TheanoConfigParser,
                                                 change_flags, config)

__all__ = ["config", "change_flags", "python_int_bitwidth", "local_bitwidth", "AddConfigVar",
           "BoolParam", "ConfigParam", "ContextsParam", "DeviceParam", "EnumStr", "FloatParam",
           "IntParam", "StrParam", "TheanoConfigParser", "THEANO_FLAGS_DICT"]


def python_int_bitwidth() -> int:
    """The width of a C long (Python ints as numpy reads them): 64 on 64-bit Unix."""
    return struct.calcsize("l") * 8


def local_bitwidth() -> int:
    """The width of a pointer: 64 on a 64-bit Python."""
    return struct.calcsize("P") * 8
