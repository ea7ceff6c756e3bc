"""Enumeration types (Theano's ``EnumType``, ``EnumList``, ``CEnumType``): named constants
an op takes as its params (``params_type``), so ``perform`` compares against names,
not magic numbers, and an op's choice can be given by a readable alias (``'+'``)."""
from __future__ import annotations

import re
from typing import Any

from arignote.graph.basic import Type

_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")

__all__ = ["EnumType", "EnumList", "CEnumType"]


class EnumType(Type):
    """Constants given as ``NAME=value`` (a bool, int or float) or ``NAME=(alias, value)``.

    Names are upper-case identifiers; an alias (a string) must not be another constant's
    name. ``enum.NAME`` is the value; ``fromalias`` and ``filter`` take a name or an alias
    (``filter`` also a value of the enum). Two enums are equal when their constants (by
    value: ``True == 1``), aliases and ``ctype`` are. ``ctype`` (default ``'double'``) and
    ``cname`` are kept for code written for Theano's C back end; arignote generates no C.
    """

    def __init__(self, **kwargs: Any):
        self.ctype = kwargs.pop("ctype", "double")
        self.cname = kwargs.pop("cname", None)
        constants: dict[str, int | float] = {}
        aliases: dict[str, str] = {}
        for name, given in kwargs.items():
            if not _NAME.match(name):
                raise AttributeError(f"{type(self).__name__}: constant name {name!r} must be an upper-case "
                                     "identifier (A-Z, then A-Z, 0-9 or _)")
            value = given
            if isinstance(given, tuple):
                if len(given) != 2 or not isinstance(given[0], str):
                    raise TypeError(f"{type(self).__name__}: {name} must be a value or (alias, value), got {given!r}")
                aliases[given[0]], value = name, given[1]
            if isinstance(value, str) or not isinstance(value, (bool, int, float)):
                raise TypeError(f"{type(self).__name__}: the value of {name} must be a bool, int or float, "
                                f"got {type(value).__name__} {value!r}")
            constants[name] = value
        clashing = sorted(set(aliases) & set(constants))
        if clashing:
            raise TypeError(f"{type(self).__name__}: alias {clashing[0]!r} is also a constant's name")
        self.constants, self.aliases = constants, aliases

    def __getattr__(self, name: str) -> Any:
        constants = vars(self).get("constants", {})
        if name in constants:
            return constants[name]
        raise AttributeError(f"{type(self).__name__} has no constant {name!r}")

    def _key(self) -> tuple:
        return (type(self), self.ctype, tuple(sorted((k, float(v)) for k, v in self.constants.items())),
                tuple(sorted(self.aliases.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EnumType) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        items = ", ".join(f"{k}={v}" for k, v in sorted(self.constants.items()))
        return f"{type(self).__name__}<{self.ctype}>({items})"

    def items(self) -> list[tuple[str, int | float]]:
        return sorted(self.constants.items())

    def keys(self) -> list[str]:
        return sorted(self.constants)

    def values(self) -> list[int | float]:
        return [v for _, v in self.items()]

    def __len__(self) -> int:
        return len(self.constants)

    def __contains__(self, name: object) -> bool:
        return name in self.constants

    def get_aliases(self) -> tuple[str, ...]:
        return tuple(sorted(self.aliases))

    def has_alias(self, alias: str) -> bool:
        """Whether ``alias`` names a constant (an alias or, as Theano accepted, its own name)."""
        return alias in self.aliases or alias in self.constants

    def fromalias(self, alias: str) -> int | float:
        if alias in self.aliases:
            return self.constants[self.aliases[alias]]
        if alias in self.constants:
            return self.constants[alias]
        raise KeyError(f"{self} has no constant or alias {alias!r} (aliases: {', '.join(self.aliases) or 'none'})")

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> int | float:
        if isinstance(data, str):
            if not self.has_alias(data):
                raise TypeError(f"{data!r} is no constant or alias of {self}")
            return self.fromalias(data)
        if isinstance(data, (bool, int, float)) or hasattr(data, "dtype"):
            for value in self.constants.values():
                if data == value:
                    return value
        raise TypeError(f"{data!r} is not a value of {self} (its values: {self.values()})")

    def values_eq(self, a: Any, b: Any) -> bool:
        return a == b


class EnumList(EnumType):
    """Constants numbered 0, 1, 2... in the order given: each a ``NAME`` or ``(NAME, alias)``;
    ``ctype`` defaults to ``'int'``."""

    def __init__(self, *args: str | tuple[str, str], **kwargs: Any):
        unknown = set(kwargs) - {"ctype", "cname"}
        if unknown:
            raise TypeError(f"EnumList takes only ctype and cname as keywords, got {sorted(unknown)}")
        constants: dict[str, Any] = {}
        for position, arg in enumerate(args):
            if isinstance(arg, tuple):
                if len(arg) != 2 or not all(isinstance(a, str) for a in arg):
                    raise TypeError(f"EnumList: {arg!r} must be a name or (name, alias)")
                name, alias = arg
                constants[name] = (alias, position)
            else:
                constants[arg] = position
        if len(constants) != len(args):
            raise TypeError("EnumList: a constant is given twice")
        super().__init__(ctype=kwargs.get("ctype", "int"), cname=kwargs.get("cname"), **constants)


class CEnumType(EnumList):
    """Theano's enum of C-defined constants: in Python its values are 0, 1, 2... as an
    ``EnumList``'s, to choose with (Theano's C code read the C values; arignote has none)."""
