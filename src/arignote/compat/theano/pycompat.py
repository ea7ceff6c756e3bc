"""``theano.compat``: the Python 2/3 helpers Theano 1.0 code imports, for Python 3."""
from __future__ import annotations

from collections import OrderedDict
from io import BytesIO, StringIO
from typing import Any

__all__ = ["PY3", "OrderedDict", "izip", "imap", "ifilter", "exc_message", "string_types",
           "integer_types", "decode", "decode_iter", "get_unbound_function", "cmp", "BytesIO",
           "StringIO", "next"]

PY3 = True
izip, imap, ifilter = zip, map, filter
string_types = (str,)
integer_types = (int,)
next = next  # six.next, the builtin on Python 3


def exc_message(e: BaseException) -> Any:
    """The message of an exception (its first argument, as Theano returned it)."""
    return e.args[0] if e.args else ""


def decode(x: bytes | str) -> str:
    return x.decode() if isinstance(x, bytes) else x


def decode_iter(itr: Any) -> Any:
    return (decode(x) for x in itr)


def get_unbound_function(unbound: Any) -> Any:
    return unbound


def cmp(x: Any, y: Any) -> int:
    return (x > y) - (x < y)
