"""``theano.configparser``: Theano 1.0's way for a library to add flags of its own.

``AddConfigVar(name, doc, SomeParam(default, ...))`` registers a flag on
arignote's one config (:meth:`arignote.config.Config.register`): it reads its
default, or the value ``THEANO_FLAGS``, ``ARIGNOTE_FLAGS`` or a config file gave
its name, is checked on every assignment and by ``change_flags``, and prints
with ``print(theano.config)``. A param's check raises ValueError naming what it
allows; the config adds the flag's name, the value and where it came from.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from arignote.config import Config, Flag, _boolean, _contexts, _device, config

__all__ = ["AddConfigVar", "ConfigParam", "EnumStr", "TypedParam", "StrParam", "IntParam",
           "FloatParam", "BoolParam", "DeviceParam", "ContextsParam", "TheanoConfigParser",
           "THEANO_FLAGS_DICT", "change_flags", "config"]

change_flags = config.change_flags


class ConfigParam:
    """A flag's default and check, before ``AddConfigVar`` names it. ``filter`` turns a given
    value (often text from ``THEANO_FLAGS``) into the flag's value, raising ValueError to refuse
    it; ``default`` may be a callable, called when the flag is first read."""

    def __init__(self, default: Any, filter: Callable[[Any], Any] | None = None,
                 allow_override: bool = True):
        self.default = default
        self.filter = filter
        self.allow_override = allow_override
        self.fullname: str | None = None  # set by AddConfigVar, with doc and in_c_key
        self.doc = ""
        self.in_c_key = True

    def check(self, value: Any) -> Any:
        if self.filter is None:
            return value
        try:
            return self.filter(value)
        except (ValueError, TypeError) as err:
            name = getattr(self.filter, "__name__", "filter")
            raise ValueError(str(err) or f"{self.allowed()} (its {name} refused it)") from None

    def allowed(self) -> str:
        return "expected a value this flag's filter accepts"

    def __str__(self) -> str:
        return f"{self.fullname} ({type(self).__name__})"


class EnumStr(ConfigParam):
    """One of the given strings; ``convert`` is applied to a value before the comparison."""

    def __init__(self, default: str, *options: str, convert: Callable[[Any], Any] | None = None,
                 allow_override: bool = True):
        self.all = (default, *options)
        bad = [value for value in self.all if not isinstance(value, str)]
        if bad:
            raise ValueError(f"EnumStr: every option must be a string, got {bad[0]!r} "
                             f"({type(bad[0]).__name__})")
        self.convert = convert
        super().__init__(default, self._pick, allow_override)

    def _pick(self, value: Any) -> str:
        value = self.convert(value) if self.convert else value
        if value not in self.all:
            raise ValueError(self.allowed())
        return value

    def allowed(self) -> str:
        return f"expected one of {', '.join(map(repr, self.all))}"

    def __str__(self) -> str:
        return f"{self.fullname} {self.all}"


class TypedParam(ConfigParam):
    """A value ``mytype(value)`` makes, which ``is_valid`` (if given) accepts."""

    def __init__(self, default: Any, mytype: Callable[[Any], Any],
                 is_valid: Callable[[Any], bool] | None = None, allow_override: bool = True):
        self.mytype, self.is_valid = mytype, is_valid
        super().__init__(default, self._cast, allow_override)

    def _cast(self, value: Any) -> Any:
        try:
            made = self.mytype(value)
        except (ValueError, TypeError):
            raise ValueError(self.allowed()) from None
        if self.is_valid is not None and not self.is_valid(made):
            raise ValueError(f"{self.allowed()}, which its is_valid accepts (got {made!r})")
        return made

    def allowed(self) -> str:
        return f"expected a value {getattr(self.mytype, '__name__', self.mytype)}() takes"

    def __str__(self) -> str:
        return f"{self.fullname} ({getattr(self.mytype, '__name__', self.mytype)})"


def StrParam(default: str, is_valid: Callable[[Any], bool] | None = None,
             allow_override: bool = True) -> TypedParam:
    return TypedParam(default, str, is_valid, allow_override)


def IntParam(default: int, is_valid: Callable[[Any], bool] | None = None,
             allow_override: bool = True) -> TypedParam:
    return TypedParam(default, int, is_valid, allow_override)


def FloatParam(default: float, is_valid: Callable[[Any], bool] | None = None,
               allow_override: bool = True) -> TypedParam:
    return TypedParam(default, float, is_valid, allow_override)


class _BoolParam(TypedParam):
    """True or False, from a bool or the spellings arignote's boolean flags take."""

    def allowed(self) -> str:
        return "expected True or False (or 'true', 'false', '1', '0', 'yes', 'no', 'on', 'off')"

    def __str__(self) -> str:
        return f"{self.fullname} (bool)"


def BoolParam(default: bool | str, is_valid: Callable[[Any], bool] | None = None,
              allow_override: bool = True) -> TypedParam:
    return _BoolParam(default, _boolean, is_valid, allow_override)


class DeviceParam(ConfigParam):
    """A device name as ``device`` takes (cpu, cuda, cudaN, opencl, openclP:D), or the default."""

    def __init__(self, default: str, *options: str, allow_override: bool = True):
        super().__init__(default, self._device, allow_override)

    def _device(self, value: Any) -> str:
        if value == self.default:
            return value
        if str(value).startswith("gpu"):
            raise ValueError("'gpu*' names Theano's old CUDA back end, which arignote does not have: "
                             "use cuda (or cudaN) or opencl (or openclP:D)")
        return _device(value)

    def __str__(self) -> str:
        return f"{self.fullname} ({self.default}, opencl*, cuda*)"


class ContextsParam(ConfigParam):
    """``name->device;...``, where no name is itself a device name (cpu, cuda*, opencl*); fixed
    once set, as Theano's was."""

    def __init__(self) -> None:
        super().__init__("", self._contexts, allow_override=False)

    @staticmethod
    def _contexts(value: Any) -> str:
        text = _contexts(value)
        for item in filter(None, (i.strip() for i in text.split(";"))):
            name = item.partition("->")[0].strip()
            if name == "cpu" or name.startswith(("cuda", "opencl")):
                raise ValueError(f"context name {name!r} is a device's name: pick another "
                                 "(for example dev0->cuda0)")
        return text


def AddConfigVar(name: str, doc: str, configparam: ConfigParam, root: Any = None,
                 in_c_key: bool = True) -> None:
    """Register flag ``name`` (``section.option`` for ``config.section.option``) on the one
    config. Its value is read now (a callable default: when first read), so a bad value from
    the environment, or a bad default, raises here; a name already taken raises AttributeError.
    ``in_c_key`` is recorded on the param (there is no C code whose cache key it would enter)."""
    if root is not None and root is not config:
        raise TypeError(f"AddConfigVar: root must be theano.config (or left out), got {root!r}")
    if not isinstance(configparam, ConfigParam):
        raise TypeError(f"AddConfigVar({name!r}): configparam must be a ConfigParam (BoolParam(...), "
                        f"EnumStr(...), ...), got {type(configparam).__name__}")
    configparam.fullname, configparam.doc, configparam.in_c_key = name, doc, in_c_key
    config.register(Flag(name, configparam.default, doc, configparam.check,
                         fixed=not configparam.allow_override), "AddConfigVar")


class TheanoConfigParser:
    """Theano's config class: every instance is the one config (``theano.config``), as all of
    Theano's instances shared their properties."""

    def __new__(cls) -> Config:  # type: ignore[misc]
        return config


class _HeldTheanoFlags(MutableMapping):
    """``THEANO_FLAGS_DICT``: the ``THEANO_FLAGS`` entries no flag has taken yet (as Theano's held
    after its own flags took theirs). An entry put here is what ``AddConfigVar`` of that name
    reads, taking it out as Theano's did."""

    _RANK = 3  # THEANO_FLAGS's rank among the sources (arignote.config)

    def __getitem__(self, name: str) -> str:
        try:
            return config._held[name][self._RANK][1]
        except KeyError:
            raise KeyError(name) from None

    def __setitem__(self, name: str, value: str) -> None:
        config._hold("THEANO_FLAGS", name, value, self._RANK)

    def __delitem__(self, name: str) -> None:
        ranks = config._held.get(name, {})
        if self._RANK not in ranks:
            raise KeyError(name)
        del ranks[self._RANK]

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, ranks in config._held.items() if self._RANK in ranks])

    def __len__(self) -> int:
        return sum(self._RANK in ranks for ranks in config._held.values())


THEANO_FLAGS_DICT = _HeldTheanoFlags()
