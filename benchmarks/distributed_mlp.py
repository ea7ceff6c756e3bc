"""Data-parallel training on Dask: one MLP epoch in one process, on 1 worker and on 2.

Usage: python benchmarks/distributed_mlp.py [--quick]   (needs arignote[distributed])

Every configuration trains the same 784-256-10 float64 perceptron (203,530 parameters,
1.63 MB) on the same 20 minibatches of 600 rows, with one BLAS thread per process: in
this process (a compiled function with updates), and with ``DataParallel`` on a
``LocalCluster`` of 1 and of 2 worker processes (one shard per worker, the data a
dask array already on the workers). Epochs are timed round-robin across the three, so
drift on a shared machine hits all alike; the median and the range are reported. From
Dask's task stream of a 2-worker epoch come the compute time on the critical path
(gradient tasks in parallel, then the sums, then the applies), the time spent in
transfers, and so the share left to communication and coordination. A tiny model
(9 parameters) measures the fixed latency of a step, an empty task the client's round trip. Writes
benchmarks/results/distributed.md.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"  # before numpy loads its BLAS; Dask's workers get one thread too

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from arignote import function, grad, shared, tensor as T  # noqa: E402

ROWS, N_IN, N_HIDDEN, N_OUT, BATCH = 12000, 784, 256, 10, 600


def model(n_in: int, n_hidden: int, n_out: int):
    rng = np.random.default_rng(1)
    W1 = shared(rng.normal(size=(n_in, n_hidden)) / np.sqrt(n_in), name="W1")
    b1 = shared(np.zeros(n_hidden), name="b1")
    W2 = shared(rng.normal(size=(n_hidden, n_out)) / np.sqrt(n_hidden), name="W2")
    b2 = shared(np.zeros(n_out), name="b2")
    x, y = T.matrix("x"), T.ivector("y")
    p = T.nnet.softmax(T.dot(T.tanh(T.dot(x, W1) + b1), W2) + b2)
    cost = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
    return [W1, b1, W2, b2], [x, y], cost


def data(rows: int, n_in: int, n_out: int):
    rng = np.random.default_rng(0)
    return rng.normal(size=(rows, n_in)), rng.integers(0, n_out, rows).astype("int32")


class SingleProcess:
    def __init__(self, X, Y, shape):
        from arignote.distributed import sgd
        params, inputs, cost = model(*shape)
        self.step = function(inputs, cost, updates=sgd(0.1)(params, grad(cost, params)))
        self.X, self.Y = X, Y

    def epoch(self) -> None:
        for first in range(0, len(self.X), BATCH):
            self.step(self.X[first:first + BATCH], self.Y[first:first + BATCH])


class OnCluster:
    def __init__(self, workers: int, X, Y, shape):
        import dask.array as da
        from distributed import Client, LocalCluster

        from arignote.distributed import DataParallel, sgd
        self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None)
        self.client = Client(self.cluster)
        chunk = BATCH // workers
        with warnings.catch_warnings():  # the data goes to the workers once, in the graph: untimed
            warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
            self.X = self.client.persist(da.from_array(X, chunks=(chunk, X.shape[1])))
        self.Y = self.client.persist(da.from_array(Y, chunks=chunk))
        params, inputs, cost = model(*shape)
        self.trainer = DataParallel(cost, params, inputs, sgd(0.1), client=self.client)
        self.rows = len(X)

    def epoch(self) -> None:
        for first in range(0, self.rows, BATCH):
            self.trainer.step(self.X[first:first + BATCH], self.Y[first:first + BATCH])

    def close(self) -> None:
        from arignote.distributed import release
        release(self.client)
        self.client.close()
        self.cluster.close()


def stream_shares(stream: list[dict], workers: int, shards: int) -> dict[str, float]:
    """Critical-path compute and transfer seconds of one epoch, from Dask's task stream."""
    from distributed.utils import key_split
    compute: dict[str, float] = {}
    transfer, transfers = 0.0, 0
    for record in stream:
        for span in record.get("startstops", ()):
            if span["action"] == "compute":
                prefix = key_split(record["key"])
                compute[prefix] = compute.get(prefix, 0.0) + span["stop"] - span["start"]
            elif span["action"] == "transfer":
                transfer += span["stop"] - span["start"]
                transfers += 1
    critical = (compute.get("trainer_gradient", 0.0) / shards + compute.get("trainer_sum", 0.0)
                + compute.get("trainer_apply", 0.0) / workers)
    return {"compute": critical, "transfer": transfer, "transfers": transfers, "tasks": compute}


def main() -> None:
    parser = argparse.ArgumentParser(description="MLP epoch: one process vs 1 and 2 Dask workers")
    parser.add_argument("--quick", action="store_true", help="2 rounds instead of 5")
    rounds = 2 if parser.parse_args().quick else 5
    shape = (N_IN, N_HIDDEN, N_OUT)
    X, Y = data(ROWS, N_IN, N_OUT)
    load_before = os.getloadavg()
    runs = {"single process": SingleProcess(X, Y, shape), "1 worker": OnCluster(1, X, Y, shape),
            "2 workers": OnCluster(2, X, Y, shape)}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for run in runs.values():
        run.epoch()  # warm: compile, ship the programs, first transfers
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run.epoch()
            times[name].append(time.perf_counter() - start)
    two = runs["2 workers"]
    from distributed import get_task_stream
    with get_task_stream(client=two.client) as ts:
        start = time.perf_counter()
        two.epoch()
        traced = time.perf_counter() - start
    shares = stream_shares(ts.data, workers=2, shards=2)
    # The same shard's gradient in this process: against the gradient tasks' mean, how much
    # the workers were slowed by sharing the cores (with each other and with the machine).
    params, inputs, cost = model(*shape)
    shard_grad = function(inputs, grad(cost, params))
    local = []
    for _ in range(5):
        start = time.perf_counter()
        shard_grad(X[:BATCH // 2], Y[:BATCH // 2])
        local.append(time.perf_counter() - start)

    # The fixed cost of a step: a model of 10 parameters on the same 2 workers.
    import dask.array as da

    from arignote.distributed import DataParallel, sgd
    params, inputs, cost = model(4, 1, 2)
    tiny = DataParallel(cost, params, inputs, sgd(0.1), client=two.client)
    tx = two.client.persist(da.from_array(X[:2000, :4], chunks=50))
    ty = two.client.persist(da.from_array(Y[:2000] % 2, chunks=50))
    tiny.step(tx[:100], ty[:100])
    start = time.perf_counter()
    for first in range(0, 2000, 100):
        tiny.step(tx[first:first + 100], ty[first:first + 100])
    latency = (time.perf_counter() - start) / 20
    trips = []
    for _ in range(20):  # r: one empty task submitted and its result gathered
        start = time.perf_counter()
        two.client.submit(int, 0, pure=False).result()
        trips.append(time.perf_counter() - start)
    load_after = os.getloadavg()
    for run in runs.values():
        if isinstance(run, OnCluster):
            run.close()

    steps = ROWS // BATCH
    param_bytes = 8 * (N_IN * N_HIDDEN + N_HIDDEN + N_HIDDEN * N_OUT + N_OUT)
    base = statistics.median(times["single process"])
    lines = [f"# Data-parallel MLP epoch ({datetime.datetime.now():%Y-%m-%d %H:%M})", "",
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average "
             f"{load_before[0]:.1f} before and {load_after[0]:.1f} after (a shared machine: read the ranges).",
             f"MLP {N_IN}-{N_HIDDEN}-{N_OUT} float64 ({param_bytes // 8} parameters, "
             f"{param_bytes / 1e6:.2f} MB), {steps} steps of {BATCH} rows per epoch, {rounds} epochs each, round-robin.", "",
             "| configuration | epoch s (median) | range | step ms | speed-up vs one process "
             "| speed-up, best epochs |",
             "|---|---|---|---|---|---|"]
    best = min(times["single process"])
    for name, values in times.items():
        med = statistics.median(values)
        lines.append(f"| {name} | {med:.3f} | {min(values):.3f}-{max(values):.3f} | {1000 * med / steps:.1f} "
                     f"| {base / med:.2f} | {best / min(values):.2f} |")
    comm = 1 - shares["compute"] / traced
    lines += ["", f"2-worker epoch traced: {traced:.3f} s; compute on the critical path {shares['compute']:.3f} s "
              f"({100 * shares['compute'] / traced:.0f}%), transfers {shares['transfer']:.3f} s in all "
              f"({100 * shares['transfer'] / traced:.0f}% of the epoch, summed over workers), "
              f"communication and coordination {100 * comm:.0f}%.",
              f"{shares['transfers']} transfers, {1000 * shares['transfer'] / max(shares['transfers'], 1):.1f} ms "
              f"each on average (mostly gradient sums of {param_bytes / 1e6:.2f} MB: "
              f"{param_bytes / 1e6 / max(shares['transfer'] / max(shares['transfers'], 1), 1e-9):.0f} MB/s).",
              "Task compute seconds: " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(shares["tasks"].items())),
              f"A {BATCH // 2}-row shard's gradient: {1000 * shares['tasks']['trainer_gradient'] / (2 * steps):.1f} ms "
              f"as a task on a worker (mean), {1000 * statistics.median(local):.1f} ms in this process (median of 5).",
              f"Fixed cost of a step ({sum(p.get_value().size for p in params)}-parameter model, 2 workers): "
              f"{1000 * latency:.1f} ms; the client's round trip of one empty task: "
              f"{1000 * statistics.median(trips):.1f} ms (median of 20)."]
    out = HERE / "results" / "distributed.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
