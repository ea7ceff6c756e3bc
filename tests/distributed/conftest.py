"""One local Dask cluster per test module (starting one costs seconds): threads for most
tests, processes where a test needs a real process to lose."""
import pytest


def _cluster(processes: bool):
    distributed = pytest.importorskip("distributed")
    import dask
    from arignote.distributed import release
    # A LocalCluster closes the nanny of a worker lost for lost-worker-timeout (15 s) unless
    # a worker of the same name has joined by then; it checks by name only, so with two
    # kills in a row on a loaded machine it can close the nanny that is restarting the
    # second, leaving one worker for good. The fault tests restart workers on purpose.
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "1h"}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
        try:
            yield client
        finally:
            release(client)
            client.close()
            cluster.close()


@pytest.fixture(scope="module")
def client():
    """Two workers of one thread each, in this process."""
    yield from _cluster(processes=False)


@pytest.fixture(scope="module")
def process_client():
    """Two worker processes of one thread each, restarted by their nannies when killed."""
    yield from _cluster(processes=True)


def worker_stats(client, space="default"):
    """Each worker's counters for ``space`` (programs compiled, values fetched)."""
    from arignote.distributed.worker import report
    return {w: (r or {}).get("stats", {}) for w, r in client.run(report, space).items()}
