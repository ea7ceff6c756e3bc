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
import difflib
import os
import re
import shutil
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Iterator, Mapping


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


_DEVICE = re.compile(r"cpu|cuda\d*|opencl(\d+:\d+)?")


def _device(value: Any) -> str:
    text = str(value).strip()
    if not _DEVICE.fullmatch(text):
        raise ValueError("expected 'cpu', 'cuda' (first CUDA GPU), 'cudaN', 'opencl' (first "
                         "OpenCL device) or 'openclP:D' (platform P, device D; see `arignote info`)")
    return text


def _contexts(value: Any) -> str:
    """``name->device;name->device``: several GPUs, each under a name graphs can target."""
    text = str(value).strip()
    for item in filter(None, (i.strip() for i in text.split(";"))):
        name, sep, device = item.partition("->")
        if not sep or not name.strip():
            raise ValueError(f"entry {item!r} is not of the form name->device "
                             "(for example contexts=dev0->cuda0;dev1->opencl0:0)")
        _device(device)
    return text


def _default_cxx() -> str:
    """The system C compiler, if one is on PATH (the probe decides whether it works)."""
    return next((found for name in ("cc", "gcc", "clang") if (found := shutil.which(name))), "")


def _default_compiledir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "arignote")


def _count(value: Any) -> int:
    number = int(value)
    if number < 0:
        raise ValueError("expected a count of elements, 0 or more")
    return number


_FLAGS = [
    Flag("floatX", "float64", "dtype given to Python floats and to constructors "
         "such as tensor.vector() that take no dtype",
         _choice("float64", "float32", "float16")),
    Flag("warn_float64", "ignore", "what to do when a float64 variable is created",
         _choice("ignore", "warn", "raise", "pdb")),
    Flag("mode", "FAST_RUN", "default compilation mode of function()",
         _choice("FAST_RUN", "FAST_COMPILE", "Mode")),
    Flag("device", "cpu", "where compiled functions run: cpu, cuda, cudaN, opencl or openclP:D",
         _device),
    Flag("contexts", "", "named GPU devices for several-GPU graphs: name->device;...", _contexts),
    Flag("force_device", False, "raise when the requested device cannot be used, instead of "
         "warning and running on the CPU", _boolean),
    Flag("allow_gc", False, "free intermediate buffers after each call "
         "(False keeps them for reuse, which is faster)", _boolean),
    Flag("on_unused_input", "raise", "default for function(on_unused_input=)",
         _choice("raise", "warn", "ignore")),
    Flag("cxx", _default_cxx(), "the C compiler for native CPU kernels; empty: numpy's kernels only",
         str),
    Flag("compiledir", _default_compiledir(), "where compiled kernels are cached", str),
    Flag("openmp", True, "let native kernels run on OMP_NUM_THREADS threads (all cores by default)",
         _boolean),
    Flag("openmp_elemwise_minsize", 200000, "elements an array needs before a native kernel "
         "spreads it over threads", _count),
    Flag("native_min_size", 2048, "elements below which an op runs numpy's kernel instead of "
         "a native one (0: always native)", _count),
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
            raise AttributeError(self._unknown(name, "arignote.config")) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._values[name] = self._validate(name, value)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._flags))

    def _validate(self, name: str, value: Any, source: str = "arignote.config") -> Any:
        flag = self._flags.get(name)
        if flag is None:
            raise AttributeError(self._unknown(name, source))
        try:
            return flag.check(value)
        except ValueError as err:
            raise ValueError(f"{source}: flag {name}={value!r} is invalid: {err}") from None

    def _unknown(self, name: str, source: str) -> str:
        close = difflib.get_close_matches(name, list(self._flags), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return (f"{source}: there is no flag {name!r}; {hint}"
                f"known flags: {', '.join(sorted(self._flags))}")

    def change_flags(self, changes: Mapping[str, Any] | None = None, **more: Any
                     ) -> contextlib.AbstractContextManager[None]:
        """Set flags for the duration of a ``with`` block (or of a decorated
        function), then restore them, also when an exception leaves the block.

        ``config.change_flags(floatX="float32")`` or
        ``config.change_flags({"floatX": "float32"})``. Every value is checked
        before any flag changes.
        """
        return self._changed({**(changes or {}), **more})

    @contextlib.contextmanager
    def _changed(self, changes: dict[str, Any]) -> Iterator[None]:
        new = {name: self._validate(name, value, "change_flags") for name, value in changes.items()}
        old = {name: self._values[name] for name in new}
        self._values.update(new)
        try:
            yield
        finally:
            self._values.update(old)

    def describe(self) -> str:
        return "\n".join(f"{name} = {self._values[name]!r}  # {flag.doc}"
                         for name, flag in self._flags.items())

    def load(self, environ: Mapping[str, str]) -> None:
        """Apply the config file, then ``ARIGNOTE_FLAGS``, from ``environ``.

        ``ARIGNOTERC`` names the config file (several, separated by
        ``os.pathsep``, later ones winning); without it ``~/.arignoterc`` is read
        if it exists. Flags go in its ``[global]`` section. ``ARIGNOTE_FLAGS``
        is ``name=value`` pairs separated by commas. An unknown flag or an invalid
        value raises ValueError naming where it came from.
        """
        explicit = "ARIGNOTERC" in environ
        paths = environ.get("ARIGNOTERC", os.path.expanduser("~/.arignoterc"))
        for path in filter(None, paths.split(os.pathsep)):
            if not os.path.isfile(path):
                if explicit:
                    raise ValueError(f"ARIGNOTERC names {path!r}, which is not a file: "
                                     "fix the path or unset ARIGNOTERC")
                continue
            parser = configparser.ConfigParser(interpolation=None)
            parser.optionxform = str  # keep the case, so errors quote the flag as written
            try:
                parser.read(path)
            except configparser.Error as err:
                reason = "; ".join(str(err).splitlines())
                raise ValueError(f"config file {path}: cannot parse it ({reason})") from None
            if parser.has_section("global"):
                for name, value in parser.items("global"):
                    self._set_from(f"config file {path} [global]", name, value)
        for item in environ.get("ARIGNOTE_FLAGS", "").split(","):
            if item.strip():
                name, sep, value = item.partition("=")
                if not sep:
                    raise ValueError(f"ARIGNOTE_FLAGS entry {item.strip()!r} is not of the form "
                                     "name=value (for example ARIGNOTE_FLAGS=floatX=float32,"
                                     "warn_float64=warn)")
                self._set_from("ARIGNOTE_FLAGS", name.strip(), value.strip())

    def _set_from(self, source: str, name: str, value: str) -> None:
        # Flag names are matched without case: floatx=... sets floatX.
        canonical = next((known for known in self._flags if known.lower() == name.lower()), None)
        if canonical is None:
            raise ValueError(self._unknown(name, source))
        self._values[canonical] = self._validate(canonical, value, source)


config = Config()
config.load(dict(os.environ))
