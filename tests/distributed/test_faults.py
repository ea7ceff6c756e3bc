"""A worker process killed in the middle of a step: the step runs again on the workers
left, no replica is half-updated, training goes on, and the result is still that of
single-process training. The kill is real: SIGKILL from inside the worker, as a task of
the step starts (tests/distributed/killer.py); the nanny then starts a fresh worker,
which joins with no replica and is re-synchronised from a survivor. The same worker
processes also run what travels to other processes: programs, and a second client's."""
import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

from distributed import Client  # noqa: E402

from arignote import function, shared, tensor as T  # noqa: E402
from arignote.distributed import DataParallel, map_batches, momentum, release  # noqa: E402
from tests.distributed.killer import KillOnce  # noqa: E402
from tests.distributed.models import data, minibatch, mlp, train_single_process  # noqa: E402

STEPS, BATCH = 20, 40


@pytest.mark.parametrize("task", ["trainer_gradient", "trainer_apply"])
def test_training_survives_a_worker_process_killed_mid_step(process_client, tmp_path, task):
    client = process_client
    client.wait_for_workers(2, timeout=120)
    X, Y = data(80, 6)
    want, costs = train_single_process(mlp, momentum(0.3), X, Y, STEPS, BATCH)
    params, inputs, cost = mlp()
    trainer = DataParallel(cost, params, inputs, momentum(0.3))
    pids = set(client.run(os.getpid).values())
    marker = tmp_path / "killed"
    client.register_plugin(KillOnce(task, 5, str(marker)), name=f"kill-{task}")  # during step 2
    got = []
    try:
        for k in range(STEPS):
            if k == 10:  # the nanny's new worker joins; the next steps bring it in
                client.wait_for_workers(2, timeout=120)
            xb, yb = minibatch(X, Y, k, BATCH)
            got.append(trainer.step([xb[:15], xb[15:]], [yb[:15], yb[15:]]))
    finally:
        client.unregister_worker_plugin(f"kill-{task}")
    assert marker.exists(), "no worker was killed"
    assert set(client.run(os.getpid).values()) != pids  # a process was lost and replaced
    assert trainer.recoveries >= 1
    reports = trainer.replicas()
    assert all(r is not None and r["step"] == STEPS for r in reports.values()), reports
    assert all(r["digests"] == next(iter(reports.values()))["digests"] for r in reports.values())
    trainer.close()
    for var, value in zip(trainer.state, want):
        np.testing.assert_allclose(var.get_value(), value, rtol=0, atol=1e-10, err_msg=var.name)
    np.testing.assert_allclose(got, costs, rtol=0, atol=1e-10)


def test_map_batches_ships_the_function_to_other_processes(process_client, rng):
    W = shared(rng.normal(size=(3, 2)), name="W")
    x = T.matrix("x")
    f = function([x], T.nnet.sigmoid(T.dot(x, W)))
    X = rng.normal(size=(12, 3))
    np.testing.assert_allclose(map_batches(f, da.from_array(X, chunks=4)).compute(), f(X), rtol=1e-14)


def test_any_client_of_the_cluster_by_its_scheduler_address(process_client, rng):
    """A second client, connected by address as in real use (worker processes, each
    with its own client): the workers already hold arignote's state for the first;
    both keep working."""
    W = shared(rng.normal(size=(3, 2)), name="W_address")
    x = T.matrix("x")
    f = function([x], T.dot(x, W))
    X = rng.normal(size=(9, 3))
    other = Client(process_client.scheduler.address, set_as_default=False)
    try:
        got = other.compute(map_batches(f, da.from_array(X, chunks=4), client=other)).result()
        np.testing.assert_allclose(got, X @ W.get_value())
    finally:
        release(other)
        other.close()
    np.testing.assert_allclose(map_batches(f, da.from_array(X, chunks=5)).compute(), X @ W.get_value())
