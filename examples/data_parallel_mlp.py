"""Train a 2-layer perceptron data-parallel on a Dask cluster, then evaluate it chunk by chunk.

    python examples/data_parallel_mlp.py                      # a LocalCluster of 2 worker processes
    python examples/data_parallel_mlp.py --scheduler tcp://host:8786   # any running cluster

Needs the ``distributed`` extra (pip install 'arignote[distributed]'). The data (points
around a few centres, one class per centre) is made here and stored on the workers as a
dask array; every minibatch is a slice of it whose chunks are the shards.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from arignote import function, shared, tensor as T


def make_data(rows: int, n_in: int, n_classes: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_classes, n_in)) * 3
    labels = rng.integers(0, n_classes, rows).astype("int32")
    return centres[labels] + rng.normal(size=(rows, n_in)), labels


def build_mlp(n_in: int, n_hidden: int, n_classes: int, seed: int = 1):
    """The model: parameters, inputs, the mean negative log-likelihood, and the predictions."""
    rng = np.random.default_rng(seed)
    W1 = shared(rng.normal(size=(n_in, n_hidden)) / np.sqrt(n_in), name="W1")
    b1 = shared(np.zeros(n_hidden), name="b1")
    W2 = shared(rng.normal(size=(n_hidden, n_classes)) / np.sqrt(n_hidden), name="W2")
    b2 = shared(np.zeros(n_classes), name="b2")
    x, y = T.matrix("x"), T.ivector("y")
    p = T.nnet.softmax(T.dot(T.tanh(T.dot(x, W1) + b1), W2) + b2)
    cost = -T.mean(T.log(p)[T.arange(y.shape[0]), y]) + 1e-4 * ((W1 ** 2).sum() + (W2 ** 2).sum())
    return [W1, b1, W2, b2], [x, y], cost, T.argmax(p, axis=1)


def train(client, epochs: int = 3, batch: int = 256, rows: int = 4096, n_in: int = 20, n_hidden: int = 64,
          n_classes: int = 5, shards: int = 2, log=print) -> float:
    """Train on ``client``'s workers; the accuracy on held-out data, computed with map_batches."""
    import dask.array as da

    from arignote.distributed import DataParallel, map_batches, momentum

    X, Y = make_data(rows + rows // 4, n_in, n_classes)
    # Chunks of batch / shards rows: each minibatch slice is `shards` whole chunks.
    dx = client.persist(da.from_array(X[:rows], chunks=(batch // shards, n_in)))
    dy = client.persist(da.from_array(Y[:rows], chunks=batch // shards))
    params, inputs, cost, predict = build_mlp(n_in, n_hidden, n_classes)
    with DataParallel(cost, params, inputs, momentum(0.1, 0.9), client=client) as trainer:
        for epoch in range(epochs):
            start, costs = time.perf_counter(), []
            for first in range(0, rows - batch + 1, batch):
                costs.append(trainer.step(dx[first:first + batch], dy[first:first + batch]))
            log(f"epoch {epoch}: mean cost {np.mean(costs):.4f} ({time.perf_counter() - start:.2f} s, "
                f"{len(costs)} steps)")
    # Leaving the block pulled the trained parameters into W1, b1, W2, b2 here.
    classify = function([inputs[0]], predict)
    test_x = da.from_array(X[rows:], chunks=(batch, n_in))
    guessed = map_batches(classify, test_x, client=client).compute()
    return float(np.mean(guessed == Y[rows:]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", help="address of a running Dask scheduler (default: a LocalCluster)")
    parser.add_argument("--workers", type=int, default=2, help="workers of the LocalCluster")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    from arignote.distributed import release
    cluster = None if args.scheduler else LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                                       dashboard_address=None)
    client = Client(args.scheduler or cluster)
    try:
        print(f"accuracy on held-out data: {train(client, args.epochs, args.batch, shards=args.workers):.3f}")
    finally:
        release(client)
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
