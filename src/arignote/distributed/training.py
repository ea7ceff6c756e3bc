"""Synchronous data-parallel training on a Dask cluster.

Every worker keeps a replica of the training state (the parameters and the update
rule's own shared variables) in its trainer space (worker.py), at a step count.
One step, all through Dask (no scheduler, transport or RPC of our own), is tasks
submitted at once (futures: a delayed graph would optimise every block's graph again
for each task using it) and gathered once:

1. one *gradient* task per shard of the minibatch, wherever Dask places it (near the
   shard's data): it checks its worker's replica is at step ``t`` and returns the
   shard's row count, cost and gradients, scaled to sums (``reduction="mean"``:
   times the shard's rows);
2. a binary tree of *sum* tasks over the shards, in shard order (so the result does
   not depend on where or when tasks ran), down to two partial sums;
3. one *apply* task per worker, run only once those exist: it adds them (the tree's
   root, computed on every worker alike: one hop less than a root task whose result
   then travels to every worker), divides by the minibatch's rows (mean) and runs the
   update program on the replica, moving it from step ``t`` to ``t + 1``. Applying is
   idempotent (a replica already at ``t + 1`` is left alone), so an apply whose
   worker is gone may run on another.

A replica that is behind (its worker restarted, or joined late) makes a task raise
:class:`OutOfStep`; a lost worker makes Dask recompute the tasks it held, or fails
them. Then the client asks every worker where its replica stands (``client.run``),
copies the most advanced state (a replica's, else the client's own copy when it is
at that step) onto the others, and runs the step again. Updates are applied only
from a complete sum, and one update program call commits all of a replica's
variables together, so no replica is ever half-updated.
"""
from __future__ import annotations

import concurrent.futures
import traceback
import uuid
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import dask.array as da
import numpy as np
from dask.delayed import Delayed
from distributed import default_client, get_worker
from distributed.comm import CommClosedError
from distributed.scheduler import KilledWorker

from arignote.compile.function import function
from arignote.compile.sharedvalue import SharedVariable
from arignote.distributed.publish import ProgramRef, SharedRef, describe, host_value, publisher
from arignote.distributed.worker import BlobLost, forget, report, space
from arignote.gradient import grad
from arignote.graph.basic import Variable


class OutOfStep(RuntimeError):
    """A worker's replica is not at the step a task needs (``have`` is None where the
    worker holds no replica): the client re-synchronises it and runs the step again."""

    def __init__(self, worker: str, have: int | None, want: int):
        super().__init__(worker, have, want)
        self.worker, self.have, self.want = worker, have, want

    def __str__(self) -> str:
        held = "no replica" if self.have is None else f"its replica at step {self.have}"
        return f"worker {self.worker} holds {held}, where step {self.want} was needed"


class TrainingStateLost(RuntimeError):
    """Every replica that held the current step is gone and the client's copy is older."""


# Failures a step survives by re-synchronising and running again (a user's error,
# such as an input of the wrong shape, is raised as it is).
RECOVERABLE = (OutOfStep, BlobLost, KilledWorker, CommClosedError, concurrent.futures.CancelledError,
               OSError)


class Definition(NamedTuple):
    """What every task of a trainer carries: its space, programs and state's recipes."""
    space: str
    gradient: ProgramRef
    update: ProgramRef
    state: tuple[SharedRef, ...]
    mean: bool


class DataParallel:
    """Train ``params`` to lower ``cost`` on every worker of a Dask cluster at once.

    ``inputs`` are the symbolic variables of the data (the order of ``step``'s
    arguments); ``update`` is a rule (``rules.sgd``, ``rules.momentum``,
    ``rules.adadelta``, or any callable from (params, gradients) to update pairs).

    ``reduction`` says how ``cost`` depends on the minibatch, which fixes how shard
    gradients combine into the whole minibatch's gradient exactly:

    - ``"mean"``: ``cost = (1/n) sum_i loss_i + r``, ``n`` the rows given and ``r`` any
      term free of the data (weight decay). A shard of ``n_s`` rows has gradient
      ``g_s = (1/n_s) sum_{i in s} dloss_i + dr``; the sum of ``n_s g_s`` over shards,
      divided by the minibatch's ``N`` rows, is ``(1/N) sum_i dloss_i + dr``, the whole
      minibatch's gradient, whatever the shard sizes.
    - ``"sum"``: ``cost = sum_i loss_i`` with no data-free term (one would be counted
      once per shard); the shard gradients add up.

    A cost that is neither (a median, statistics across the batch) does not split
    over shards. The replicas start from the parameters' values now; ``pull()`` (and
    ``close()``, or leaving a ``with`` block) brings the trained values back to the
    client's shared variables. ``retries`` bounds the recoveries of one step.
    """

    def __init__(self, cost: Variable, params: Sequence[SharedVariable], inputs: Sequence[Variable],
                 update: Any, *, client: Any = None, reduction: str = "mean", retries: int = 5,
                 name: str | None = None):
        if reduction not in ("mean", "sum"):
            raise ValueError(f"DataParallel: reduction must be 'mean' or 'sum', got {reduction!r}")
        params = list(params)
        for k, p in enumerate(params):
            if not isinstance(p, SharedVariable):
                raise TypeError(f"DataParallel: parameter {k} is {type(p).__name__}, not a shared variable: "
                                "pass the model's shared variables")
        self.client = client or default_client()
        self.name = name or "trainer"
        self.retries = retries
        self._workers: list[str] = []
        self._live_workers()
        self._n_inputs = len(inputs)
        grads = grad(cost, params)
        gradient_fn = function(list(inputs), [cost] + list(grads), name=f"{self.name} gradients")
        if gradient_fn.maker.updates:
            drawn = ", ".join(t.describe() for t, _ in gradient_fn.maker.updates)
            raise ValueError(f"DataParallel: the cost updates {drawn} (random draws): every shard would "
                             "draw the same numbers; data-parallel training takes a cost without random draws")
        slots = [g.type(name=f"gradient of {p.name or k}") for k, (p, g) in enumerate(zip(params, grads))]
        pairs = update(params, slots)
        pairs = list(pairs.items()) if hasattr(pairs, "items") else list(pairs)
        update_fn = function(slots, [], updates=pairs, name=f"{self.name} update", on_unused_input="ignore")
        self.state = [target for target, _ in update_fn.maker.updates]
        pub = publisher(self.client)
        self._programs = []
        read: dict[int, SharedVariable] = {}
        for fn in (gradient_fn, update_fn):
            ref, variables = pub.program(fn)
            self._programs.append(ref)
            read.update((id(v), v) for v in variables)
        updated = {id(v.origin) for v in self.state}
        self._readonly = [v for v in read.values() if id(v) not in updated]
        self._space = f"{self.name}-{uuid.uuid4().hex[:12]}"
        self._mean = reduction == "mean"
        self._recipes = tuple(describe(v) for v in self.state)
        self.steps = 0
        self.recoveries = 0
        self._client_step = 0
        self._resync(self._client_copy(), self._workers)

    # ------------------------------------------------------------ stepping
    def step(self, *data: Any) -> float:
        """One synchronous step on one minibatch; the minibatch's cost.

        Each argument (one per input) is a dask array, whose chunks along axis 0 are
        the shards; a list of arrays, the shards themselves; or an array, split into
        one shard per worker. All arguments must split into the same row counts.
        """
        shards = self._shards(data)
        failure: BaseException | None = None
        for _ in range(self.retries + 1):
            try:
                return self._attempt(shards)
            except RECOVERABLE as err:
                traceback.clear_frames(err.__traceback__)  # their futures were cancelled: let them go
                failure = err
            try:
                done = self._recover()
            except RECOVERABLE as err:
                failure = err
                continue
            if done is not None:
                return done
        raise RuntimeError(f"{self.name}: step {self.steps} failed {self.retries + 1} times; the last "
                           f"failure: {failure}") from failure

    def _attempt(self, shards: list[list]) -> float:
        """The step as tasks submitted at once (the dask arrays' blocks, gradients, the sum
        tree, one apply per worker, pinned to it or anywhere if it is gone, adding the
        tree's last two partial sums itself) and gathered once. Futures, not a delayed
        graph: building one re-optimises every block's graph for each task using it."""
        t, client = self.steps, self.client
        self._live_workers()
        definition, readonly = self._definition(), self._readonly_refs()
        lazy = [piece for shard in shards for piece in shard if isinstance(piece, Delayed)]
        futures = dict(zip(map(id, lazy), client.compute(lazy))) if lazy else {}
        submitted = list(futures.values())

        def submit(fn: Any, *args: Any, **placement: Any) -> Any:
            submitted.append(client.submit(fn, *args, pure=False, **placement))
            return submitted[-1]

        try:
            level = [submit(trainer_gradient, definition, t, readonly, [futures.get(id(p), p) for p in shard])
                     for shard in shards]
            while len(level) > 2:
                pairs = [submit(trainer_sum, level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
                level = pairs + level[len(pairs) * 2:]
            applied = [submit(trainer_apply, definition, t, readonly, *level, workers=[w], allow_other_workers=True)
                       for w in self._workers]
            results = client.gather(applied)
        except BaseException:
            client.cancel(submitted)
            raise
        self.steps = t + 1
        return results[0][1]

    def _live_workers(self) -> list[str]:
        """The workers replicas are kept on (the cluster's, when none are known)."""
        if not self._workers:
            self._workers = list(self.client.scheduler_info()["workers"])
        if not self._workers:
            raise RuntimeError(f"{self.name}: the cluster has no workers: start some, or wait for them "
                               "(client.wait_for_workers(n)) before training")
        return self._workers

    def _shards(self, data: tuple) -> list[list]:
        """The minibatch as shards: for each, one piece per input (an array, which travels in
        a task, or a dask array's block, computed where Dask places it)."""
        if len(data) != self._n_inputs:
            raise TypeError(f"{self.name}.step takes {self._n_inputs} arguments (one per input), "
                            f"got {len(data)}")
        first = data[0]
        if isinstance(first, da.Array):
            rows = first.chunks[0]
        elif isinstance(first, (list, tuple)):
            rows = tuple(len(piece) for piece in first)
        else:
            rows = tuple(len(piece) for piece in np.array_split(np.asarray(first), len(self._live_workers())))
        bounds = np.cumsum((0,) + rows)
        pieces = []
        for k, arg in enumerate(data):
            if isinstance(arg, da.Array):
                if arg.shape[0] != bounds[-1]:
                    raise ValueError(f"{self.name}.step: argument {k} has {arg.shape[0]} rows, argument 0 "
                                     f"has {bounds[-1]}")
                blocks = arg.rechunk((rows,) + tuple(-1 for _ in arg.shape[1:])).to_delayed().reshape(-1)
                pieces.append(list(blocks))
            elif isinstance(arg, (list, tuple)):
                sizes = tuple(len(piece) for piece in arg)
                if sizes != rows:
                    raise ValueError(f"{self.name}.step: argument {k} is shards of {sizes} rows, argument 0 "
                                     f"of {rows}: give every input the same shards")
                pieces.append([np.asarray(piece) for piece in arg])
            else:
                arg = np.asarray(arg)
                if len(arg) != bounds[-1]:
                    raise ValueError(f"{self.name}.step: argument {k} has {len(arg)} rows, argument 0 "
                                     f"has {bounds[-1]}")
                pieces.append([arg[a:b] for a, b in zip(bounds[:-1], bounds[1:])])
        return [list(shard) for shard, n in zip(zip(*pieces), rows) if n]

    # --------------------------------------------------------------- state
    def _definition(self) -> Definition:
        pub = publisher(self.client)
        gradient, update = (pub.republish(ref) for ref in self._programs)
        return Definition(self._space, gradient, update, self._recipes, self._mean)

    def _readonly_refs(self) -> tuple[SharedRef, ...]:
        pub = publisher(self.client)
        return tuple(pub.value(v) for v in self._readonly)

    def _client_copy(self) -> dict[str, Any]:
        return {"step": self._client_step, "cost": None,
                "values": {r.key: host_value(v) for r, v in zip(self._recipes, self.state)}}

    def _recover(self) -> float | None:
        """Bring every worker's replica to the most advanced step held; the step's cost
        when that is ``steps + 1`` (the step completed, it need not run again)."""
        client, t = self.client, self.steps
        self.recoveries += 1
        found = client.run(report, self._space, False, on_error="return")
        found = {w: r for w, r in found.items() if not isinstance(r, BaseException)}
        self._workers = list(found)
        held = {w: r for w, r in found.items() if isinstance(r, dict) and r["step"] in (t, t + 1)}
        target = max((r["step"] for r in held.values()), default=None)
        if target is None:
            if self._client_step != t:
                raise TrainingStateLost(
                    f"{self.name}: no worker holds step {t} any more and the client's copy is from step "
                    f"{self._client_step}: call pull() more often to keep a recent copy on the client")
            self._resync(self._client_copy(), self._workers)
            return None
        sources = [w for w, r in held.items() if r["step"] == target]
        stale = [w for w in self._workers if w not in sources]
        if stale:
            state = client.submit(trainer_export, self._definition(), target, workers=sources[:1],
                                  allow_other_workers=True, pure=False)
            self._resync(state, stale)
        if target == t + 1:
            self.steps = target
            return held[sources[0]]["cost"]
        return None

    def _resync(self, state: Any, workers: Iterable[str]) -> None:
        """Load ``state`` (a dict, or the future of one) into the replicas of ``workers``."""
        client = self.client
        if isinstance(state, dict):
            state = client.scatter([state], hash=False)[0]
        definition = self._definition()
        client.gather([client.submit(trainer_import, definition, state, workers=[w],
                                     allow_other_workers=True, pure=False) for w in workers])

    # ------------------------------------------------------- the client's side
    def pull(self) -> None:
        """Copy the replicas' state (parameters and the rule's variables) into the
        client's shared variables."""
        for _ in range(self.retries + 1):
            try:
                state = self.client.submit(trainer_export, self._definition(), self.steps,
                                           workers=self._workers[:1], allow_other_workers=True,
                                           pure=False).result()
                break
            except RECOVERABLE:
                self._recover()
        else:
            raise RuntimeError(f"{self.name}: could not read the state of step {self.steps} back")
        for recipe, var in zip(self._recipes, self.state):
            var.set_value(state["values"][recipe.key])
        self._client_step = self.steps

    def replicas(self) -> dict[str, dict[str, Any] | None]:
        """Where each worker's replica stands: ``{address: {"step", "cost", "digests",
        "stats"} or None}``, the digests being those of the state's values (equal
        digests: identical replicas)."""
        return self.client.run(report, self._space)

    def close(self) -> None:
        """Pull the state back, then drop the replicas from the workers."""
        self.pull()
        self.client.run(forget, self._space)

    def __enter__(self) -> DataParallel:
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None:
            self.close()
        else:
            self.client.run(forget, self._space, on_error="ignore")


# ------------------------------------------------------------------ the tasks
def _replica(definition: Definition, step: int | None) -> Any:
    """This worker's space for ``definition`` (raises OutOfStep unless it is at ``step``)."""
    here = space(definition.space, create=False)
    if here is None or (step is not None and here.step != step):
        raise OutOfStep(get_worker().address, None if here is None else here.step, step)
    return here


def trainer_gradient(definition: Definition, step: int, readonly: tuple, shard: Sequence) -> tuple:
    """Rows, cost and gradients of one shard at ``step``, scaled to sums for a mean cost."""
    here = _replica(definition, None)
    with here.hold(readonly):
        _replica(definition, step)
        cost, *grads = here.program(definition.gradient)(*shard)
    rows = len(shard[0])
    scale = rows if definition.mean else 1
    return (rows, np.asarray(cost) * scale, *[np.asarray(g) * scale for g in grads])


def trainer_sum(a: tuple, b: tuple) -> tuple:
    """Two partial sums of (rows, cost, gradients) added."""
    return tuple(x + y for x, y in zip(a, b))


def trainer_apply(definition: Definition, step: int, readonly: tuple, *parts: tuple) -> tuple[int, float]:
    """Move this worker's replica from ``step`` to ``step + 1`` with the gradient summed
    from ``parts`` (the sum tree's last one or two partial sums, in shard order)."""
    here = _replica(definition, None)
    with here.hold(readonly, alone=True):
        if here.step != step + 1:
            _replica(definition, step)
            rows, cost, *grads = parts[0] if len(parts) == 1 else trainer_sum(*parts)
            if definition.mean:
                cost, grads = cost / rows, [g / rows for g in grads]
            here.program(definition.update)(*grads)
            here.step, here.cost = step + 1, float(cost)
        return here.step, here.cost


def trainer_export(definition: Definition, step: int) -> dict[str, Any]:
    """This worker's replica at ``step``: its values (copies), step and last cost."""
    here = _replica(definition, None)
    with here.hold(alone=True):
        _replica(definition, step)
        return {"step": here.step, "cost": here.cost,
                "values": {r.key: here.replicas[r.key].get_value() for r in definition.state}}


def trainer_import(definition: Definition, state: dict[str, Any]) -> int:
    """Make this worker's replica ``state`` (creating the space if it has none)."""
    here = space(definition.space)
    with here.hold(alone=True):
        here.load_state(definition.state, state["values"], state["step"], state["cost"])
    return here.step
