"""Global configuration, read once from ``ARIGNOTE_FLAGS`` and a config file.

Flags are typed and validated when set, so a typo in ``ARIGNOTE_FLAGS`` fails at
import with a message that lists the allowed values instead of being ignored.
Precedence, lowest first: defaults, the config file (``ARIGNOTERC`` or
``~/.arignoterc``, section ``[global]``), ``ARIGNOTE_FLAGS``, then assignments
and :meth:`Config.change_flags` at run time.
"""
from __future__ import annotations

import configparser
import contextlib
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator


@dataclass(frozen=True)
class Flag:
    name: str
    default: Any
    doc: str
    check: Callable[[Any], Any]


def _choice(*allowed: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(map(repr, allowed))}")
        return value
    return check


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected True or False")


def _device(value: Any) -> str:
    text = str(value).strip()
    if text != "cpu":
        raise ValueError("expected 'cpu' (GPU devices are not available in this build)")
    return text


_FLAGS = [
    Flag("floatX", "float64", "dtype given to Python floats and to constructors "
         "such as tensor.vector() that take no dtype",
         _choice("float64", "float32", "float16")),
    Flag("warn_float64", "ignore", "what to do when a float64 variable is created",
         _choice("ignore", "warn", "raise", "pdb")),
    Flag("mode", "FAST_RUN", "default compilation mode of function()",
         _choice("FAST_RUN", "FAST_COMPILE", "Mode")),
    Flag("device", "cpu", "where compiled functions run", _device),
    Flag("allow_gc", False, "free intermediate buffers after each call "
         "(False keeps them for reuse, which is faster)", _boolean),
    Flag("on_unused_input", "raise", "default for function(on_unused_input=)",
         _choice("raise", "warn", "ignore")),
]


class Config:
    """Attribute access to the flags; assignment validates."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {f.name: f for f in _FLAGS})
        object.__setattr__(self, "_values", {f.name: f.default for f in _FLAGS})

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"arignote.config has no flag {name!r}; "
                                 f"known flags: {', '.join(sorted(self._flags))}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._values[name] = self._validate(name, value)

    def _validate(self, name: str, value: Any) -> Any:
        flag = self._flags.get(name)
        if flag is None:
            raise AttributeError(f"arignote.config has no flag {name!r}; "
                                 f"known flags: {', '.join(sorted(self._flags))}")
        try:
            return flag.check(value)
        except ValueError as err:
            raise ValueError(f"config flag {name}={value!r} is invalid: {err}") from None

    @contextlib.contextmanager
    def change_flags(self, **changes: Any) -> Iterator[None]:
        """Set flags for the duration of a ``with`` block, then restore them."""
        new = {name: self._validate(name, value) for name, value in changes.items()}
        old = {name: self._values[name] for name in new}
        self._values.update(new)
        try:
            yield
        finally:
            self._values.update(old)

    def describe(self) -> str:
        return "\n".join(f"{name} = {self._values[name]!r}  # {flag.doc}"
                         for name, flag in self._flags.items())

    def load(self, environ: dict[str, str]) -> None:
        """Apply the config file, then ``ARIGNOTE_FLAGS``, from ``environ``."""
        path = environ.get("ARIGNOTERC", os.path.expanduser("~/.arignoterc"))
        for item in path.split(os.pathsep):
            if item and os.path.isfile(item):
                parser = configparser.ConfigParser()
                parser.read(item)
                if parser.has_section("global"):
                    for name, value in parser.items("global"):
                        setattr(self, self._canonical(name, item), value)
        for item in environ.get("ARIGNOTE_FLAGS", "").split(","):
            if item.strip():
                name, sep, value = item.partition("=")
                if not sep:
                    raise ValueError(f"ARIGNOTE_FLAGS entry {item!r} is not of the form name=value")
                setattr(self, self._canonical(name.strip(), "ARIGNOTE_FLAGS"), value.strip())

    def _canonical(self, name: str, source: str) -> str:
        # configparser lower-cases keys; map them back to flag names such as floatX.
        for known in self._flags:
            if known.lower() == name.lower():
                return known
        raise AttributeError(f"{source}: unknown flag {name!r}; "
                             f"known flags: {', '.join(sorted(self._flags))}")


config = Config()
config.load(dict(os.environ))
