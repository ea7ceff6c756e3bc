"""The worker's side: replicas of shared variables and compiled programs, per *space*.

A worker plugin (:class:`WorkerState`, installed by the client on every worker,
present and future) keeps one :class:`Space` per user of the worker: ``"default"``
for :func:`map_batches`, one per data-parallel trainer. A space holds replicas of
shared variables (keyed as on the client), the digest of each replica's value, and
the programs compiled there (keyed by digest). Programs run while the space is held
shared; a replica's value changes only while it is held alone, so a task never sees
a half-changed set of values, and tasks needing another version wait for the current
readers to finish.
"""
from __future__ import annotations

import contextlib
import copy
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import CancelledError
from typing import Any

from distributed import WorkerPlugin, get_client, get_worker

from arignote.distributed.publish import Pin, ProgramRef, SharedRef, load_program

DEFAULT = "default"


class BlobLost(RuntimeError):
    """A published object is no longer in the cluster (the worker holding it was lost,
    or the client released it); the client publishes it again and retries."""


class WorkerState(WorkerPlugin):
    """arignote's state on one worker: its spaces. Kept in ``worker.extensions`` so
    that registering the plugin again (another client) keeps what is there."""

    name = "arignote"

    def setup(self, worker: Any) -> None:
        worker.extensions.setdefault(self.name, {})

    def teardown(self, worker: Any) -> None:
        worker.extensions.pop(self.name, None)


def spaces() -> dict[str, Space]:
    """This worker's spaces (the worker running the current task)."""
    worker = get_worker()
    found = worker.extensions.get(WorkerState.name)
    if found is None:
        raise RuntimeError(f"worker {worker.address} has no arignote state: run arignote.distributed "
                           "tasks through a client that published them (map_batches, DataParallel)")
    return found


def space(name: str, create: bool = True) -> Space | None:
    found = spaces()
    with _CREATE:
        if name not in found and create:
            found[name] = Space(name)
        return found.get(name)


_CREATE = threading.Lock()


def fetch(pin: Pin) -> Any:
    """The published object under ``pin``, fetched through Dask from a worker holding it.

    The task keeps its thread while it waits: the transfer needs none, and a seceded
    task would let this worker start others that fetch the same object again."""
    client = get_client()
    try:
        return client.get_dataset(pin.key).result()
    except (KeyError, CancelledError) as err:
        raise BlobLost(f"the published object {pin.key} is no longer in the cluster ({err}): the "
                       "worker holding it was lost, or its client released it") from None


class Space:
    """Replicas and compiled programs of one user of this worker (see the module doc)."""

    def __init__(self, name: str):
        self.name = name
        self.replicas: dict[str, Any] = {}
        self.digests: dict[str, str | None] = {}
        self.programs: dict[str, Any] = {}
        self.stats: Counter = Counter()
        self.step: int | None = None  # updates applied, for a trainer's space
        self.cost: float | None = None  # the cost of the last step applied
        self._cond = threading.Condition()
        self._readers = 0
        self._fetching = threading.Lock()
        self._arrived: dict[tuple[str, str | None], Any] = {}

    # ----------------------------------------------------------- holding
    @contextlib.contextmanager
    def hold(self, refs: Sequence[SharedRef] = (), alone: bool = False) -> Iterator[Space]:
        """Hold the space (shared, or ``alone``) with each replica in ``refs`` at its digest.

        Values are fetched before the lock is taken; a replica changes only when no
        program is running here."""
        fetched: dict[tuple[str, str | None], Any] = {}
        while True:
            for r in refs:
                if self.digests.get(r.key) != r.digest and (r.key, r.digest) not in fetched:
                    fetched[r.key, r.digest] = self._arrival(r)
            with self._cond:
                while (alone or self._stale(refs)) and self._readers:
                    self._cond.wait()
                stale = self._stale(refs)
                if any((r.key, r.digest) not in fetched for r in stale):
                    continue  # changed again while fetching: fetch what is needed now
                for r in stale:
                    self._set(r, fetched[r.key, r.digest])
                if alone:
                    yield self
                    return
                self._readers += 1
                break
        try:
            yield self
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    def _arrival(self, ref: SharedRef) -> Any:
        """The value of ``ref``, fetched once however many tasks here want it at once."""
        with self._fetching:
            if (ref.key, ref.digest) not in self._arrived:
                self._arrived[ref.key, ref.digest] = fetch(ref.pin)
                self.stats["fetched " + ref.key] += 1
            return self._arrived[ref.key, ref.digest]

    def _stale(self, refs: Sequence[SharedRef]) -> list[SharedRef]:
        return [r for r in refs if self.digests.get(r.key) != r.digest]

    def _set(self, ref: SharedRef, value: Any) -> None:
        replica = self.replicas.get(ref.key)
        if replica is None:  # shared(borrow=True) adopts the value: give it its own copy
            self.replicas[ref.key] = ref.loader(copy.deepcopy(value), *ref.args)
        else:
            replica.set_value(value)
        self.digests[ref.key] = ref.digest
        self._arrived.pop((ref.key, ref.digest), None)

    def load_state(self, refs: Sequence[SharedRef], values: dict[str, Any], step: int,
                   cost: float | None) -> None:
        """Set the trainer state (call while holding the space alone)."""
        for ref in refs:
            self._set(ref._replace(digest=None), values[ref.key])
        self.step, self.cost = step, cost

    # ---------------------------------------------------------- programs
    def program(self, ref: ProgramRef) -> Any:
        """The function compiled here from ``ref`` (once per digest); call while holding
        the space, with every shared variable it reads replicated."""
        fn = self.programs.get(ref.digest)
        if fn is None:
            with self._fetching:
                fn = self.programs.get(ref.digest)
                if fn is None:
                    fn = self.programs[ref.digest] = load_program(fetch(ref.pin), self.replicas)
                    self.stats["compiled"] += 1
        return fn


def report(name: str, digests: bool = True, dask_worker: Any = None) -> dict[str, Any] | None:
    """For ``client.run``: one space's step, cost, counters and (``digests``) the digests
    of its replicas' values."""
    from arignote.distributed.publish import value_digest
    found = dask_worker.extensions.get(WorkerState.name, {}).get(name)
    if found is None:
        return None
    # No lock: client.run calls this on the worker's event loop, which a task holding
    # the space may be waiting on. Each value is replaced whole, never written in place.
    values = ({key: value_digest(var.get_value(borrow=True)) for key, var in list(found.replicas.items())}
              if digests else {})
    return {"step": found.step, "cost": found.cost, "digests": values, "stats": dict(found.stats)}


def forget(name: str, dask_worker: Any = None) -> None:
    """For ``client.run``: drop one space (a closed trainer's replicas)."""
    dask_worker.extensions.get(WorkerState.name, {}).pop(name, None)
