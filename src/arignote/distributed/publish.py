"""The client's side of shipping: programs and values, each published once per content.

A compiled function travels as a *program*: its pickle (the request it was compiled
from, docs/architecture.md "Copies and pickles") in which every shared variable is
replaced by a key. A worker compiles a program once, keyed by the SHA-256 of those
bytes, and binds each key to its own replica of the variable. A shared variable's
value travels separately, under the digest of its content, so it crosses to a worker
once and again only when the value has changed.

Published objects are scattered Dask data, published as Dask datasets (the scheduler
keeps a dataset until it is unpublished, and a worker looks one up by name). A task
never takes them as arguments (Dask would fetch every argument before every task,
and its Active Memory Manager drops idle copies): it carries a :class:`Pin`, the
name alone, and a worker fetches the object only when its cache lacks that digest.
A value superseded by a newer one is unpublished once no graph holds its pin;
:func:`release` unpublishes everything a client published.
"""
from __future__ import annotations

import hashlib
import io
import pickle
import threading
import uuid
import weakref
from typing import Any, NamedTuple

import numpy as np

from arignote.compile.sharedvalue import SharedVariable

PROTOCOL = 5

_KEYS: weakref.WeakKeyDictionary[SharedVariable, str] = weakref.WeakKeyDictionary()
_KEYS_LOCK = threading.Lock()


def shared_key(var: SharedVariable) -> str:
    """This process's name for a shared variable (its origin), the same on every call."""
    origin = var.origin
    with _KEYS_LOCK:
        key = _KEYS.get(origin)
        if key is None:
            key = _KEYS[origin] = f"{origin.name or 'shared'}-{uuid.uuid4().hex[:12]}"
        return key


class Pin:
    """The key of a published object; on the client it also holds the Dask future that
    keeps the object in the cluster's memory, so a graph whose tasks carry the pin keeps
    what they will fetch. It pickles as the key alone: no task depends on the object."""

    __slots__ = ("key", "future", "__weakref__")

    def __init__(self, key: str, future: Any = None):
        self.key = key
        self.future = future

    def alive(self) -> bool:
        return self.future is not None and self.future.status == "finished"

    def __reduce__(self) -> tuple:
        return Pin, (self.key,)

    def __dask_tokenize__(self) -> str:
        return self.key

    def __repr__(self) -> str:
        return f"Pin({self.key!r})"


class ProgramRef(NamedTuple):
    """A published program: the digest workers cache its compiled function under."""
    digest: str
    pin: Pin


class SharedRef(NamedTuple):
    """What a worker needs to hold a replica of a shared variable: its key, how to make
    it (``shared()``'s loader and arguments from the variable's pickle) and, for a value
    the client owns, the digest of the value and where to fetch it."""
    key: str
    loader: Any
    args: tuple
    digest: str | None = None
    pin: Pin | None = None


def describe(var: SharedVariable) -> SharedRef:
    """A replica's recipe without its value (the value travels on its own)."""
    loader, args, _state = var.origin.__reduce_ex__(PROTOCOL)
    return SharedRef(shared_key(var), loader, tuple(args[1:]))


def host_value(var: SharedVariable, copy: bool = True) -> Any:
    """The value as the variable's pickle holds it: host data (a copy the caller owns,
    unless ``copy=False``: then possibly the variable's own buffer, to read only)."""
    _loader, args, _state = var.origin.__reduce_ex__(PROTOCOL)
    value = args[0]
    return value.copy() if copy and isinstance(value, np.ndarray) else value


def value_digest(value: Any) -> str:
    """A digest of a value's content: dtype, shape and bytes of an array, else its pickle."""
    h = hashlib.blake2b(digest_size=20)
    if isinstance(value, np.ndarray) and value.dtype != object:
        h.update(f"{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).view(np.uint8).reshape(-1).data)
    else:
        h.update(pickle.dumps(value, PROTOCOL))
    return h.hexdigest()


class _ProgramPickler(pickle.Pickler):
    """Pickles a function with its shared variables left out, as ("shared", key, clone?)."""

    def __init__(self, file: io.BytesIO):
        super().__init__(file, PROTOCOL)
        self.shared: dict[str, SharedVariable] = {}

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, SharedVariable):
            key = shared_key(obj)
            self.shared.setdefault(key, obj.origin)
            return ("shared", key, obj.origin is not obj)
        return None


def program_bytes(fn: Any) -> tuple[bytes, list[SharedVariable]]:
    """The pickle of ``fn`` without shared variables, and the variables it refers to."""
    stream = io.BytesIO()
    pickler = _ProgramPickler(stream)
    pickler.dump(fn)
    return stream.getvalue(), list(pickler.shared.values())


def load_program(data: bytes, replicas: dict[str, SharedVariable]) -> Any:
    """A program compiled here, each of its shared variables bound to ``replicas[key]``."""
    unpickler = pickle.Unpickler(io.BytesIO(data))

    def persistent_load(pid: Any) -> SharedVariable:
        kind, key, clone = pid
        if kind != "shared":
            raise pickle.UnpicklingError(f"unknown reference {pid!r} in an arignote program")
        replica = replicas[key]
        return replica.clone() if clone else replica

    unpickler.persistent_load = persistent_load
    return unpickler.load()


class Publisher:
    """What one client has published: every program, and the latest value of each
    shared variable (older values stay only as long as a graph's pins hold them)."""

    def __init__(self, client: Any):
        self._client = weakref.ref(client)
        self._lock = threading.Lock()
        self._programs: dict[str, tuple[bytes, Pin]] = {}
        self._values: dict[str, tuple[str, Pin]] = {}
        self._published: dict[str, weakref.ref[Pin]] = {}

    def _scatter(self, kind: str, digest: str, obj: Any) -> Pin:
        client = self._client()
        for key, ref in list(self._published.items()):
            if ref() is None:  # superseded, and no graph holds it any more
                client.unpublish_dataset(key)
                del self._published[key]
        key = f"arignote-{kind}-{digest[:16]}-{uuid.uuid4().hex[:8]}"
        future = client.scatter({key: obj}, hash=False)[key]
        client.publish_dataset(future, name=key)
        pin = Pin(key, future)
        self._published[key] = weakref.ref(pin)
        return pin

    def release(self) -> None:
        """Unpublish everything this client published."""
        client = self._client()
        with self._lock:
            for key in self._published:
                client.unpublish_dataset(key)
            self._published.clear()
            self._programs.clear()
            self._values.clear()

    def program(self, fn: Any) -> tuple[ProgramRef, list[SharedVariable]]:
        """Publish ``fn`` (once per content); its ref and the shared variables it reads."""
        data, variables = program_bytes(fn)
        digest = hashlib.sha256(data).hexdigest()
        with self._lock:
            if digest not in self._programs:
                self._programs[digest] = (data, self._scatter("program", digest, data))
        return self.republish(ProgramRef(digest, self._programs[digest][1])), variables

    def republish(self, ref: ProgramRef) -> ProgramRef:
        """``ref``, published again if the cluster lost it (the worker holding it died)."""
        with self._lock:
            data, pin = self._programs[ref.digest]
            if not pin.alive():
                pin = self._scatter("program", ref.digest, data)
                self._programs[ref.digest] = (data, pin)
        return ProgramRef(ref.digest, pin)

    def value(self, var: SharedVariable) -> SharedRef:
        """Publish ``var``'s current value unless the same content already is; its ref."""
        digest = value_digest(host_value(var, copy=False))
        recipe = describe(var)
        with self._lock:
            known = self._values.get(recipe.key)
            if known is None or known[0] != digest or not known[1].alive():
                value = host_value(var)  # a copy: the client may change its own afterwards
                digest = value_digest(value)  # of what is sent, should it have changed meanwhile
                known = self._values[recipe.key] = (digest, self._scatter("value", digest, value))
        return recipe._replace(digest=digest, pin=known[1])


def release(client: Any) -> None:
    """Unpublish every program and value ``client`` published for arignote (a cluster
    outliving the client keeps them otherwise, as it keeps any Dask dataset)."""
    with _PUBLISHERS_LOCK:
        pub = _PUBLISHERS.pop(client, None)
    if pub is not None:
        pub.release()


_PUBLISHERS: weakref.WeakKeyDictionary[Any, Publisher] = weakref.WeakKeyDictionary()
_PUBLISHERS_LOCK = threading.Lock()


def publisher(client: Any) -> Publisher:
    """The client's publisher; the first call also installs the worker plugin."""
    from arignote.distributed.worker import WorkerState
    with _PUBLISHERS_LOCK:
        pub = _PUBLISHERS.get(client)
        if pub is None:
            client.register_plugin(WorkerState(), name=WorkerState.name)
            pub = _PUBLISHERS[client] = Publisher(client)
        return pub
