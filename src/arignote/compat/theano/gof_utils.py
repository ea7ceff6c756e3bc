"""``theano.gof.utils``: the helpers of Theano's graph package that user code imports."""
from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from arignote.graph.scheduling import _toposort

__all__ = ["MethodNotDefined", "give_variables_names", "remove", "unique", "uniq", "difference", "flatten",
           "hashtype", "hash_from_code", "hash_from_file", "get_variable_trace_string", "scratchpad", "D",
           "memoize", "toposort", "object2", "undef"]

# Theano raised MethodNotDefined for an interface method an op lacks (``grad``, ``perform``);
# arignote raises NotImplementedError there, which this name catches.
MethodNotDefined = NotImplementedError
object2 = object
undef = object()  # a default meaning "not given" where None means something


def give_variables_names(variables: Sequence[Any]) -> Sequence[Any]:
    """Name each variable that has no name, or a name another of ``variables`` has too, so
    that all names differ (``name_k``, or ``_k`` for an unnamed one, with the smallest
    ``k`` free); distinct names are kept, so a second call changes nothing."""
    counts = Counter(v.name for v in variables)
    taken = {v.name for v in variables if v.name}
    for var in variables:
        if var.name and counts[var.name] == 1:
            continue
        base, k = var.name or "", 0
        while f"{base}_{k}" in taken:
            k += 1
        var.name = f"{base}_{k}"
        taken.add(var.name)
    return variables


def remove(predicate: Callable[[Any], bool], coll: Iterable) -> list:
    """The items of ``coll`` for which ``predicate`` is false (``filter``'s complement)."""
    return [x for x in coll if not predicate(x)]


def unique(x: Sequence[Hashable]) -> bool:
    """Whether no item of ``x`` appears twice."""
    return len(set(x)) == len(x)


def uniq(seq: Iterable[Hashable]) -> list:
    """``seq`` without repeats, each item where it first appeared."""
    return list(dict.fromkeys(seq))


def difference(seq1: Iterable, seq2: Iterable) -> list:
    """The items of ``seq1`` not in ``seq2``, in ``seq1``'s order."""
    try:
        excluded = set(seq2)
    except TypeError:  # unhashable items: compare one by one
        excluded = list(seq2)
    return [x for x in seq1 if x not in excluded]


def flatten(a: Any) -> list:
    """The leaves of nested lists and tuples, in order; anything else is a one-item list."""
    if not isinstance(a, (list, tuple)):
        return [a]
    return [leaf for item in a for leaf in flatten(item)]


def hashtype(self: Any) -> int:
    """A hash of an object's class (its name and module): Theano's hash for singleton types."""
    t = type(self)
    return hash(t.__name__) ^ hash(t.__module__)


def hash_from_code(msg: str | bytes | memoryview) -> str:
    """A key for source code or bytes: ``'m'`` and their SHA-256 (a valid module name)."""
    data = msg.encode() if isinstance(msg, str) else bytes(msg)
    return "m" + hashlib.sha256(data).hexdigest()


def hash_from_file(file_path: str) -> str:
    with open(file_path, "rb") as f:
        return hash_from_code(f.read())


def get_variable_trace_string(v: Any) -> str:
    """Where ``v`` was made, for an error message ("" when unknown): arignote keeps the
    user's line (``file:line``) in ``v.tag.trace``."""
    trace = getattr(v.tag, "trace", None)
    if not trace:
        return ""
    lines = trace if isinstance(trace, (list, tuple)) else [trace]
    return " \nBacktrace when that variable is created:\n" + "\n".join(f"  {line}" for line in lines) + "\n"


class scratchpad:
    """Attributes as a namespace (Theano's ``tag`` class before arignote's Tag)."""

    def clear(self) -> None:
        self.__dict__.clear()

    def __update__(self, other: scratchpad) -> scratchpad:
        self.__dict__.update(other.__dict__)
        return self

    def __repr__(self) -> str:
        return f"scratchpad{self.__dict__}"

    __str__ = __repr__

    def info(self) -> None:
        print(f"<theano.gof.utils.scratchpad instance at {id(self)}>")
        for key, value in self.__dict__.items():
            print(f"  {key}: {value}")


class D:
    """An object whose attributes are the keyword arguments it was made with."""

    def __init__(self, **d: Any):
        self.__dict__.update(d)


def memoize(f: Callable) -> Callable:
    """``f`` with each result kept per (hashable) arguments."""
    cache: dict = {}

    def memoized(*args: Any, **kwargs: Any) -> Any:
        key = (args, tuple(kwargs.items()))
        if key not in cache:
            cache[key] = f(*args, **kwargs)
        return cache[key]
    return memoized


def toposort(prereqs_d: Mapping[Hashable, Iterable[Hashable]]) -> list:
    """The keys and prerequisites of ``{item: its prerequisites}``, each after its
    prerequisites; ValueError on a cycle."""
    after: dict[Hashable, set] = {}
    for item, prereqs in prereqs_d.items():
        after.setdefault(item, set())
        for p in prereqs:
            after.setdefault(p, set()).add(item)
    return _toposort(after)
