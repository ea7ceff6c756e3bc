"""The ``theano`` alias: ``import theano`` and ``theano.X.Y`` resolve to arignote.

``install()`` puts a finder first on ``sys.meta_path`` for this process only
(``arignote run`` calls it before running a program; a notebook calls it
itself) and reads ``THEANO_FLAGS`` and ``.theanorc`` (``Config.load_theano``).
Nothing is written anywhere, so an environment with the real Theano keeps it
for every process that does not install the alias. ``modules.py`` holds the
map; the alias has no behaviour of its own beyond the few 1.0-compatible
entry points that map names (``OVERRIDES`` modules beside this one).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading
from types import ModuleType
from typing import Any

from arignote.compat.theano.modules import MODULES, VIEWS

__all__ = ["install", "uninstall", "installed", "resolve"]

_lock = threading.Lock()


def installed() -> bool:
    return any(isinstance(f, _Finder) for f in sys.meta_path)


def install(environ: dict[str, str] | None = None) -> None:
    """Make ``import theano`` resolve to arignote in this process (idempotent).

    Refused when a module named ``theano`` (the real one) is already imported.
    ``environ`` (default ``os.environ``) supplies ``THEANO_FLAGS``/``THEANORC``.
    """
    with _lock:
        if installed():
            return
        existing = sys.modules.get("theano")
        if existing is not None:
            raise RuntimeError(f"a module named theano is already imported ({getattr(existing, '__file__', existing)}):"
                               " install the arignote alias before anything imports theano")
        from arignote.config import config
        config.load_theano(dict(os.environ if environ is None else environ))
        sys.meta_path.insert(0, _Finder())


def uninstall() -> None:
    """Remove the finder and forget the ``theano`` modules it made."""
    from arignote.config import config
    with _lock:
        config.unload_theano()
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]
        for name in [n for n in sys.modules if n == "theano" or n.startswith("theano.")]:
            del sys.modules[name]
        _resolved.clear()


def resolve(name: str) -> tuple[str, str | None, str | None] | None:
    """How Theano module ``name`` is provided: ``("view", target, overrides)`` or
    ``("module", target, None)``; None when it is not (Theano's name unknown here, or
    its target missing from this build)."""
    if name not in _resolved:
        _resolved[name] = _resolve(name)
    return _resolved[name]


_resolved: dict[str, Any] = {}
_ABSENT = object()


def _resolve(name: str) -> tuple[str, str | None, str | None] | None:
    if name in VIEWS:
        target, overrides = VIEWS[name]
        return "view", target if target and _exists(target) else None, overrides
    if name in MODULES:
        target = MODULES[name]
        return ("module", target, None) if target.startswith("theano") or _exists(target) else None
    parent, _, child = name.rpartition(".")
    if not parent:
        return None
    above = resolve(parent)
    if above is None or above[0] != "view" or above[1] is None:
        return None
    target = f"{above[1]}.{child}"
    spec = _find(target)
    if spec is None:
        return None
    return ("view", target, None) if spec.submodule_search_locations is not None else ("module", target, None)


def _find(name: str) -> importlib.machinery.ModuleSpec | None:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def _exists(name: str) -> bool:
    return name in sys.modules or _find(name) is not None


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "theano" and not fullname.startswith("theano."):
            return None
        how = resolve(fullname)
        if how is None:
            return None
        kind, module, overrides = how
        return importlib.util.spec_from_loader(fullname, _Loader(kind, module, overrides),
                                               is_package=kind == "view")


class _Loader(importlib.abc.Loader):
    def __init__(self, kind: str, target: str | None, overrides: str | None):
        self.kind, self.target, self.overrides = kind, target, overrides

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        if self.kind == "view":
            return _View(spec.name)  # filled by exec_module
        module = importlib.import_module(self.target)
        self._spec = module.__spec__  # the import system overwrites it; exec_module restores it
        return module

    def exec_module(self, module: ModuleType) -> None:
        if self.kind == "module":
            module.__spec__ = self._spec
            return
        target = importlib.import_module(self.target) if self.target else None
        module._fill(target, importlib.import_module(self.overrides) if self.overrides else None)


class _View(ModuleType):
    """A Theano package: its attributes are its target's, Theano's submodules resolve by name."""

    def _fill(self, target: ModuleType | None, overrides: ModuleType | None) -> None:
        vars(self)["_target"] = target
        vars(self)["_overrides"] = overrides
        self.__doc__ = (f"Theano's {self.__name__}, provided by "
                        + (f"{target.__name__} (the arignote alias)" if target else "the arignote alias"))
        for key in getattr(overrides, "__all__", ()):
            vars(self)[key] = getattr(overrides, key)

    def __getattr__(self, attr: str) -> Any:
        # The target's attribute, unless it is a module or absent: then Theano's submodule.
        target = vars(self).get("_target")
        if attr == "__all__":
            return _public_names(target, vars(self).get("_overrides"))
        value = getattr(target, attr, _ABSENT) if target is not None else _ABSENT
        if value is not _ABSENT and not isinstance(value, ModuleType):
            return value
        child = f"{self.__name__}.{attr}"
        if not attr.startswith("__") and resolve(child) is not None:
            return importlib.import_module(child)
        if value is not _ABSENT:
            return value
        where = f" (arignote's {target.__name__} under the theano alias)" if target else ""
        raise AttributeError(f"module {self.__name__!r}{where} has no attribute {attr!r}: arignote "
                             f"does not provide {child}; docs/theano-differences.md lists what is absent")

    def __setattr__(self, name: str, value: Any) -> None:
        # The import system sets each imported submodule on its parent: a Theano submodule
        # named like one of the target's functions (tensor.var) must not hide the function.
        target = vars(self).get("_target")
        if isinstance(value, ModuleType) and not isinstance(getattr(target, name, value), ModuleType):
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        target = vars(self).get("_target")
        return sorted(set(vars(self)) | set(dir(target) if target else ()))


def _public_names(target: ModuleType | None, overrides: ModuleType | None) -> list[str]:
    names = list(getattr(overrides, "__all__", ()))
    if target is not None:
        names += getattr(target, "__all__", None) or [
            n for n, v in vars(target).items() if not n.startswith("_") and not isinstance(v, ModuleType)]
    return list(dict.fromkeys(names))
