"""Synchronous data-parallel training on two local workers: the result equals training
in one process on whole minibatches (float64, to 1e-10), whatever the shard sizes."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

from arignote import shared  # noqa: E402
from arignote.distributed import (DataParallel, TrainingStateLost, adadelta, momentum,  # noqa: E402
                                  sgd)
from arignote.distributed.worker import forget  # noqa: E402
from arignote.tensor.shared_randomstreams import RandomStreams  # noqa: E402
from tests.distributed.models import (data, logistic_regression, minibatch, mlp,  # noqa: E402
                                      train_single_process)

STEPS, BATCH = 20, 30

# With workers in this process their client is the test's own: looking a published object
# up tells the scheduler about every future it holds, including those a recovery has just
# cancelled and not yet released, and the scheduler warns about each.
pytestmark = pytest.mark.filterwarnings("ignore:Client .* desires key .* but key is unknown:UserWarning")


def assert_same_state(trainer, want, costs=None, got_costs=None):
    for var, value in zip(trainer.state, want):
        np.testing.assert_allclose(var.get_value(), value, rtol=0, atol=1e-10, err_msg=var.name)
    if costs is not None:
        np.testing.assert_allclose(got_costs, costs, rtol=0, atol=1e-10)


def assert_replicas_agree(trainer):
    reports = [r for r in trainer.replicas().values() if r is not None]
    assert reports and all(r["step"] == trainer.steps for r in reports)
    assert all(r["digests"] == reports[0]["digests"] for r in reports)


def test_logistic_regression_equals_single_process_training(client):
    X, Y = data(60, 5)
    want, costs = train_single_process(logistic_regression, sgd(0.5), X, Y, STEPS, BATCH)
    params, inputs, cost = logistic_regression()
    trainer = DataParallel(cost, params, inputs, sgd(0.5))
    halfway, _ = train_single_process(logistic_regression, sgd(0.5), X, Y, STEPS // 2, BATCH)
    got_costs = []
    for k in range(STEPS):
        if k == STEPS // 2:  # on request, mid-training: the client's variables at step 10
            trainer.pull()
            assert_same_state(trainer, halfway)
        xb, yb = minibatch(X, Y, k, BATCH)
        got_costs.append(trainer.step([xb[:11], xb[11:]], [yb[:11], yb[11:]]))  # shards of 11 and 19
    assert_replicas_agree(trainer)
    trainer.close()
    assert_same_state(trainer, want, costs, got_costs)
    assert trainer.recoveries == 0


def test_mlp_with_momentum_on_dask_arrays_equals_single_process_training(client):
    X, Y = data(60, 6)
    want, costs = train_single_process(mlp, momentum(0.2, 0.8), X, Y, STEPS, BATCH)
    params, inputs, cost = mlp()
    with DataParallel(cost, params, inputs, momentum(0.2, 0.8)) as trainer:
        assert [v.name for v in trainer.state] == ["W1.velocity", "W1", "b1.velocity", "b1",
                                                   "W2.velocity", "W2", "b2.velocity", "b2"]
        got_costs = []
        for k in range(STEPS):
            xb, yb = minibatch(X, Y, k, BATCH)
            got_costs.append(trainer.step(da.from_array(xb, chunks=((7, 8, 15), (6,))),
                                          da.from_array(yb, chunks=((7, 8, 15),))))
        assert_replicas_agree(trainer)
        assert not np.allclose(params[0].get_value(), want[1])  # the client's copy waits for pull
    assert all(r is None for r in trainer.replicas().values())  # closing dropped the replicas
    assert_same_state(trainer, want, costs, got_costs)


def test_adadelta_with_a_summed_cost_on_arrays_split_per_worker(client):
    def summed():
        params, inputs, cost = mlp(seed=5)
        x, y = inputs
        return params, inputs, cost * x.shape[0]  # the mean times the rows: a sum over rows

    X, Y = data(60, 6)
    want, costs = train_single_process(summed, adadelta(), X, Y, STEPS, BATCH)
    params, inputs, cost = summed()
    trainer = DataParallel(cost, params, inputs, adadelta(), reduction="sum")
    got = [trainer.step(*minibatch(X, Y, k, BATCH)) for k in range(STEPS)]
    trainer.close()
    assert_same_state(trainer, want, costs, got)


def test_a_learning_rate_changed_on_the_client_reaches_every_replica(client):
    X, Y = data(60, 5)

    def lower(k, params):
        if k == 10:
            rate.set_value(np.float64(0.05))

    rate = shared(np.float64(0.5), name="rate")
    want, _ = train_single_process(logistic_regression, sgd(rate), X, Y, STEPS, BATCH, between=lower)
    rate.set_value(np.float64(0.5))
    params, inputs, cost = logistic_regression()
    trainer = DataParallel(cost, params, inputs, sgd(rate))
    for k in range(STEPS):
        lower(k, params)
        trainer.step(*minibatch(X, Y, k, BATCH))
    trainer.close()
    assert_same_state(trainer, want)


def test_a_replica_that_lost_its_state_is_resynchronised_from_another(client):
    X, Y = data(60, 5)
    want, costs = train_single_process(logistic_regression, sgd(0.5), X, Y, STEPS, BATCH)
    params, inputs, cost = logistic_regression()
    trainer = DataParallel(cost, params, inputs, sgd(0.5))
    got = []
    for k in range(STEPS):
        if k in (5, 12):  # a worker forgets its replica, as a restarted worker would
            first = next(iter(trainer.replicas()))
            client.run(forget, trainer._space, workers=[first])
        got.append(trainer.step(*minibatch(X, Y, k, BATCH)))
    assert trainer.recoveries == 2
    assert_replicas_agree(trainer)
    trainer.close()
    assert_same_state(trainer, want, costs, got)


def test_with_every_replica_gone_training_resumes_only_from_a_current_client_copy(client):
    X, Y = data(60, 5)
    params, inputs, cost = logistic_regression()
    trainer = DataParallel(cost, params, inputs, sgd(0.5))
    for k in range(3):
        trainer.step(*minibatch(X, Y, k, BATCH))
    trainer.pull()  # the client's copy is at step 3 now
    client.run(forget, trainer._space)
    trainer.step(*minibatch(X, Y, 3, BATCH))  # resumed from the client's copy
    assert trainer.steps == 4 and trainer.recoveries == 1
    client.run(forget, trainer._space)
    with pytest.raises(TrainingStateLost, match="client's copy is from step 3"):
        trainer.step(*minibatch(X, Y, 4, BATCH))


def test_data_parallel_refuses_what_it_cannot_train(client):
    params, (x, y), cost = logistic_regression()
    with pytest.raises(ValueError, match="reduction must be 'mean' or 'sum'"):
        DataParallel(cost, params, [x, y], sgd(0.1), reduction="median")
    with pytest.raises(TypeError, match="parameter 0 is TensorVariable"):
        DataParallel(cost, [x], [x, y], sgd(0.1))
    noisy = cost + RandomStreams(1).normal(()).sum()
    with pytest.raises(ValueError, match="random draws"):
        DataParallel(noisy, params, [x, y], sgd(0.1))
    trainer = DataParallel(cost, params, [x, y], sgd(0.1))
    X, Y = data(10, 5)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        trainer.step(X)
    with pytest.raises(ValueError, match="argument 1 is shards of"):
        trainer.step([X[:5], X[5:]], [Y[:4], Y[4:]])
    with pytest.raises(ValueError, match="argument 1 has 9 rows"):
        trainer.step(X, Y[:9])
    with pytest.raises(TypeError, match="'y'"):  # the worker's own message names the input
        trainer.step(X, Y.astype("float64"))
    # A user's error is raised as it is, not retried, and leaves every replica as it was.
    assert trainer.steps == 0 and trainer.recoveries == 0
    assert_replicas_agree(trainer)
    trainer.step(X, Y)
    trainer.step([X], [Y])  # one shard: no sum task, the apply takes it as it is
    assert trainer.steps == 2 and trainer.recoveries == 0
    assert_replicas_agree(trainer)
    trainer.close()


def test_the_data_parallel_example_trains_and_evaluates(client):
    path = Path(__file__).resolve().parents[2] / "examples" / "data_parallel_mlp.py"
    spec = importlib.util.spec_from_file_location("data_parallel_mlp", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    lines = []
    accuracy = example.train(client, epochs=2, batch=64, rows=512, n_in=6, n_hidden=12, n_classes=3,
                             log=lines.append)
    assert len(lines) == 2 and "8 steps" in lines[0]
    assert accuracy > 0.9


def test_a_cluster_without_workers_is_refused_clearly():
    from distributed import Client, LocalCluster
    params, inputs, cost = logistic_regression()
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty, \
            Client(empty, set_as_default=False) as bare:
        with pytest.raises(RuntimeError, match="has no workers.*wait_for_workers"):
            DataParallel(cost, params, inputs, sgd(0.1), client=bare)
