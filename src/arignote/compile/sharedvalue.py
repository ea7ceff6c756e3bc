"""Shared variables: values that live between calls, owned by the library.

Each shared variable keeps its value in a ``Storage`` cell (a one-element list
its clones share) that compiled functions read and their updates write. The
cell's lock serialises the functions that update the variable (see "Threads"
in docs/architecture.md). The aliasing promises of docs/architecture.md
("Memory") are kept here: a copy is made unless ``borrow=True``, and two
shared variables never share memory, on the host or on a device.
"""
from __future__ import annotations

import copy
import importlib
import inspect
import io
import itertools
import pickle
import threading
import weakref
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from arignote.graph.basic import Type, Variable
from arignote.graph.types import generic
from arignote.tensor.type import TensorType
from arignote.tensor.variable import _TensorOperators


_ranks = itertools.count()


class Storage(list):
    """A shared variable's value cell: ``[value]``, shared by the variable's clones.

    ``lock`` is held by every call of a function that updates the variable, from
    before it reads the value until its update is written, and by ``set_value``;
    ``rank`` is the fixed order in which a function takes several such locks.
    """

    __slots__ = ("lock", "rank", "__weakref__")
    __eq__ = object.__eq__  # a cell is itself, whatever it holds
    __hash__ = object.__hash__

    def __init__(self, value: Any):
        super().__init__((value,))
        self.lock = threading.RLock()
        self.rank = next(_ranks)
        with _CLAIMS:
            _LIVE.add(self)


def load_shared(value: Any, name: str | None, strict: bool, allow_downcast: bool | None,
                options: dict) -> SharedVariable:
    """A pickled shared variable, made again by ``shared()`` (on this process's device)."""
    return shared(value, name=name, strict=strict, allow_downcast=allow_downcast, borrow=True,
                  **options)


def _clone_of(origin: SharedVariable) -> SharedVariable:
    return origin.clone()


class SharedVariable(Variable):
    """A graph input whose value persists in ``storage`` across calls."""

    default_update: Variable | None = None  # deleting an instance's leaves None (Theano's hasattr)

    def __init__(self, type: Type, value: Any, name: str | None = None, strict: bool = False,
                 allow_downcast: bool | None = None, storage: Storage | None = None,
                 borrowed: bool = False):
        """``value`` becomes the storage (``storage``: share a clone's); a ``borrowed``
        value is copied if another shared variable holds its memory."""
        super().__init__(type, name=name)
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.default_update: Variable | None = None
        self.origin = self
        if storage is None:
            value = self._filter(value)
            storage = claim(value) if borrowed else Storage(value)
        self.storage = storage

    def _filter(self, value: Any) -> Any:
        return self.type.filter(value, strict=self.strict, allow_downcast=self.allow_downcast,
                                name=f"shared variable {self.describe()}",
                                relax="make the shared variable with allow_downcast=True")

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> Any:
        """A copy of the value, or with ``borrow=True`` possibly the internal buffer itself.

        ``return_internal_type`` matters where the internal value is not a host
        array (a GPU shared variable returns its device buffer); here the two agree.
        """
        value = self.storage[0]
        return value if borrow else copy.deepcopy(value) if self.type is generic else value.copy()

    def get_test_value(self) -> Any:
        """The current value, internal buffer as it is: what test values are computed from."""
        return self.storage[0]

    def set_value(self, value: Any, borrow: bool = False) -> None:
        """Replace the value; refused (old value kept) when it does not fit the type."""
        new = self._filter(value)
        if self.type is generic:
            self._assign(value if borrow else copy.deepcopy(value))
            return
        fresh = new is not value and not shares_memory(new, value)
        self._assign(new if borrow or fresh else new.copy(), borrowed=borrow and not fresh)

    def _assign(self, new: Any, borrowed: bool = False) -> None:
        """Make ``new`` the value; a ``borrowed`` one is copied first if another shared
        variable holds its memory.

        Waits for any call updating this variable to finish, so a value set here
        is never overwritten by an update computed from the value before it.
        """
        with self.storage.lock, _CLAIMS:
            if borrowed and _claimed_by_other(new, self.storage):
                new = new.copy()
            self.storage[0] = new

    @property
    def container(self) -> Container:
        """Theano's view of the storage: ``container.storage`` is the one-element cell
        compiled functions read and write, ``container.value`` its value."""
        return Container(self.storage, self.type, self.name, self.strict, self.allow_downcast, self)

    def zero(self, borrow: bool = False) -> None:
        """Set the value to zeros of its shape and dtype (Theano's API; ``borrow`` is moot,
        as the zeros are a fresh array)."""
        self._assign(np.zeros_like(self.storage[0]))

    def clone(self) -> SharedVariable:
        """Another Variable for the same storage (graph copies must see the same value)."""
        cp = type(self)(self.type, None, self.name, self.strict, self.allow_downcast, self.storage)
        cp.default_update = self.default_update
        cp.tag = self.tag
        cp.origin = self.origin
        return cp

    __copy__ = clone  # a shallow copy shares the value, as Theano's did

    # -------------------------------------------------------------- pickling
    # A pickle holds the value as host data (a numpy array, a RandomState), the
    # name and flags: loading calls shared() again, so the value lands on the
    # device the loading process is configured for. A clone loads as a clone
    # of its (loaded) origin.
    _loader = staticmethod(load_shared)

    def __reduce_ex__(self, protocol: int) -> tuple:
        if self.origin is not self:
            return _clone_of, (self.origin,)
        return (self._loader, (self.get_value(borrow=True), self.name, self.strict, self.allow_downcast,
                               self._shared_options()),
                {"default_update": self.default_update, "tag": self.tag})

    def _shared_options(self) -> dict:
        """The keywords of ``shared()`` that give a loaded variable this one's type."""
        return {}

    def __deepcopy__(self, memo: dict) -> SharedVariable:
        """An independent variable of the same type and device holding a copy of the value
        (a clone of the copy of the origin, for a clone)."""
        if self.origin is not self:
            return copy.deepcopy(self.origin, memo).clone()
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        state = {k: v for k, v in self.__dict__.items() if k not in ("storage", "default_update")}
        new.__dict__.update(copy.deepcopy(state, memo))
        new.storage = Storage(self.get_value(return_internal_type=True))
        # Last: the update's graph reads this variable, which must be whole by then.
        new.default_update = copy.deepcopy(self.default_update, memo)
        return new

    def __str__(self) -> str:
        return self.name if self.name is not None else f"<{self.type}>"


class Container:
    """A value cell under Theano's names: ``storage`` is the one-element list compiled
    functions read and write, ``value`` (or ``data``) its value; setting it checks the
    value against ``type`` (a shared variable's: through ``set_value``)."""

    def __init__(self, storage: list, type: Type, name: str | None = None, strict: bool = False,
                 allow_downcast: bool | None = None, owner: SharedVariable | None = None):
        self.storage, self.type, self.name = storage, type, name
        self.strict, self.allow_downcast = strict, allow_downcast
        self._owner = owner

    @property
    def value(self) -> Any:
        return self.storage[0]

    @value.setter
    def value(self, value: Any) -> None:
        if self._owner is not None:
            self._owner.set_value(value, borrow=True)
        else:
            self.storage[0] = self._filtered(value)

    data = value

    def _filtered(self, value: Any) -> Any:
        """``value`` through the type's filter, passing only the options asked for: a user's
        Type may take ``filter(data)`` alone."""
        options: dict[str, Any] = {}
        if self.strict:
            options["strict"] = True
        if self.allow_downcast is not None:
            options["allow_downcast"] = self.allow_downcast
        return self.type.filter(value, **options)

    def __repr__(self) -> str:
        return f"<Container of {self._owner if self._owner is not None else self.name}>"


class TensorSharedVariable(_TensorOperators, SharedVariable):
    """A shared array with the tensor operators."""

    def _shared_options(self) -> dict:
        return {"broadcastable": self.type.broadcastable}


class _Discard(io.RawIOBase):
    def write(self, data: Any) -> int:
        return len(data)


class _Probe(pickle.Pickler):
    """Pickles into nothing, with shared variables and arrays left out (their pickling
    needs no check, and a device value would be downloaded for nothing)."""

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, SharedVariable) or (isinstance(obj, np.ndarray) and obj.dtype != object):
            return id(obj)
        return None


def check_picklable(state: Any, protocol: int) -> None:
    """Raise now, before a pickler writes anything of ``state``, if part of it cannot be
    pickled (a lambda given as a mode's optimizer, an op holding a closure, ...)."""
    try:
        _Probe(_Discard(), protocol).dump(state)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        raise pickle.PicklingError(
            f"this compiled function cannot be pickled ({err}): its mode, ops and In values must "
            "be picklable, so pass module-level functions, not lambdas or closures") from err


def generic_constructor(value: Any, name: str | None = None, strict: bool = False,
                        allow_downcast: bool | None = None, borrow: bool = False) -> SharedVariable:
    """Any other value (a list, a string, an object) is held as it is, with type ``generic``
    (Theano's rule): it can be an update target or a function's output, not an array operand."""
    return SharedVariable(generic, value if borrow else copy.deepcopy(value), name=name,
                          strict=strict, allow_downcast=allow_downcast)


_CONSTRUCTORS: list[Callable[..., SharedVariable | None]] = [generic_constructor]


def shared_constructor(fn: Callable[..., SharedVariable | None]) -> Callable[..., SharedVariable | None]:
    """Register a constructor; ``shared()`` tries them newest first (GPU backends add theirs)."""
    _CONSTRUCTORS.insert(0, fn)
    return fn


# Kinds of values whose constructor lives in a package ``import arignote`` does not load
# (importing scipy.sparse costs ~0.5 s): the value's module -> the package registering it.
_LAZY_CONSTRUCTORS = {"scipy.sparse": "arignote.sparse"}


def shared(value: Any, name: str | None = None, strict: bool = False,
           allow_downcast: bool | None = None, borrow: bool = False, **kwargs: Any) -> SharedVariable:
    """A shared variable holding ``value``; copied unless ``borrow=True``."""
    if isinstance(value, Variable):
        raise TypeError(f"shared() needs a value (a number or an array), got the symbolic variable "
                        f"{value.describe()}: compute it first (e.g. with .eval()), or use the "
                        "expression itself")
    module = type(value).__module__ or ""
    for prefix, package in _LAZY_CONSTRUCTORS.items():
        if module == prefix or module.startswith(prefix + "."):
            importlib.import_module(package)  # registers its constructor, once
    for ctor in _CONSTRUCTORS:
        if not _takes(ctor, kwargs):
            continue
        var = ctor(value, name=name, strict=strict, allow_downcast=allow_downcast,
                   borrow=borrow, **kwargs)
        if var is not None:
            return var
    raise TypeError(f"shared(): no constructor accepts {type(value).__name__} with arguments "
                    f"{sorted(kwargs)}: drop the arguments the value's kind does not take")


def _takes(ctor: Callable, kwargs: dict) -> bool:
    params = inspect.signature(ctor).parameters
    return any(p.kind is p.VAR_KEYWORD for p in params.values()) or set(kwargs) <= set(params)


@shared_constructor
def tensor_constructor(value: Any, name: str | None = None, strict: bool = False,
                       allow_downcast: bool | None = None, borrow: bool = False,
                       broadcastable: Sequence[bool] | None = None,
                       shape: Sequence[int | None] | None = None) -> SharedVariable | None:
    fresh = isinstance(value, (bool, int, float, complex, np.generic))
    if fresh:
        value = np.asarray(value)
    if not isinstance(value, np.ndarray) or value.dtype == object:
        return None
    if shape is not None:
        broadcastable = tuple(s == 1 for s in shape)
    if broadcastable is None:
        broadcastable = (False,) * value.ndim
    ttype = TensorType(value.dtype.name, broadcastable)
    return TensorSharedVariable(ttype, value if borrow or fresh else value.copy(), name=name,
                                strict=strict, allow_downcast=allow_downcast, borrowed=borrow and not fresh)


# ------------------------------------------------------------------ aliasing
# Every live storage cell, so that borrowing memory another one holds can be
# caught (it forces a copy). Only borrow=True pays for the scan. ``_CLAIMS``
# makes "is it claimed? then adopt it" one step, so two threads borrowing one
# array cannot both adopt it.
_LIVE: weakref.WeakSet[Storage] = weakref.WeakSet()
_CLAIMS = threading.RLock()
# Held while a call reads several shared values or writes several updates, so that
# no call sees another's updates half written (one cell alone is written atomically).
COMMIT_LOCK = threading.Lock()


def claim(value: Any) -> Storage:
    """A new storage cell holding ``value``, or a copy of it if another cell holds its memory."""
    with _CLAIMS:
        return Storage(value.copy() if _claimed_by_other(value, None) else value)


def shares_memory(a: Any, b: Any) -> bool:
    """Whether two values may share memory: host arrays by numpy's test (a csr/csc sparse
    matrix through any of its three arrays), device arrays (values with a ``buffer``) by
    their buffer."""
    host_a, host_b = _host_arrays(a), _host_arrays(b)
    if host_a and host_b:
        return any(np.may_share_memory(x, y) for x in host_a for y in host_b)
    buffer = getattr(a, "buffer", None)
    return buffer is not None and buffer is getattr(b, "buffer", None)


def _host_arrays(value: Any) -> tuple:
    if isinstance(value, np.ndarray):
        return (value,)
    if getattr(value, "indptr", None) is None:
        return ()
    parts = (value.data, value.indices, value.indptr)  # a scipy.sparse csr/csc matrix
    return parts if all(isinstance(p, np.ndarray) for p in parts) else ()


def _claimed_by_other(value: Any, mine: Storage | None) -> bool:
    return any(other is not mine and other[0] is not None and shares_memory(other[0], value)
               for other in list(_LIVE))
