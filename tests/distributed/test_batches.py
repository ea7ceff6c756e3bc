"""map_batches: a compiled function over the chunks of dask arrays, shipped and compiled
once per worker, with shared values sent once per worker and again only when changed."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

import dask  # noqa: E402

from arignote import function, shared, tensor as T  # noqa: E402
from arignote.distributed import map_batches  # noqa: E402
from tests.distributed.conftest import worker_stats  # noqa: E402


@pytest.fixture
def layer(rng):
    W = shared(rng.normal(size=(4, 3)), name="W")
    x, scale = T.matrix("x"), T.scalar("scale")
    f = function([x, scale], [T.tanh(T.dot(x, W)) * scale, x.sum(axis=1)])
    return W, f


def test_chunks_give_what_the_function_gives_on_the_whole_array(client, rng, layer):
    W, f = layer
    X = rng.normal(size=(23, 4))
    dx = da.from_array(X, chunks=((5, 9, 9), (2, 2)))  # uneven rows; columns rechunked to one
    outs = map_batches(f, dx, 0.5)
    assert isinstance(outs, list) and len(outs) == 2
    assert outs[0].shape == (23, 3) and outs[0].chunks[0] == (5, 9, 9) and outs[1].shape == (23,)
    got = dask.compute(*outs)
    for g, want in zip(got, f(X, 0.5)):
        np.testing.assert_allclose(g, want, rtol=1e-13)
    x = T.matrix("x")
    single = function([x], x * 2)
    result = map_batches(single, dx)
    assert isinstance(result, da.Array)
    np.testing.assert_array_equal(result.compute(), X * 2)


def test_each_worker_compiles_once_and_values_travel_again_only_when_changed(client, rng):
    W = shared(rng.normal(size=(4, 3)), name="W_travel")
    x = T.matrix("x")
    f = function([x], T.dot(x, W))
    X = rng.normal(size=(40, 4))
    dx = da.from_array(X, chunks=10)
    before = worker_stats(client)
    old = map_batches(f, dx)
    for _ in range(2):
        np.testing.assert_allclose(map_batches(f, dx).compute(), X @ W.get_value())
    after = worker_stats(client)
    key = next(k for k in after[next(iter(after))] if k.startswith("fetched W_travel"))
    ran = [w for w in after if after[w].get(key)]
    assert ran, "no worker ran a chunk"
    for w in ran:  # four chunks twice: one program compiled, one value fetched, per worker
        assert after[w][key] == 1
        assert after[w]["compiled"] - before[w].get("compiled", 0) == 1
    W.set_value(W.get_value() * -1)
    new = map_batches(f, dx)
    # A graph made before the change still computes with the value it was made with.
    got_old, got_new = dask.compute(old, new)
    np.testing.assert_allclose(got_new, X @ W.get_value())
    np.testing.assert_allclose(got_old, -(X @ W.get_value()))
    final = worker_stats(client)
    for w in ran:
        assert final[w]["compiled"] == after[w]["compiled"]  # a new value, the same program
        assert final[w][key] >= 2


def test_map_batches_refuses_what_it_cannot_map(client, rng):
    X = da.from_array(rng.normal(size=(6, 2)), chunks=3)
    x = T.matrix("x")
    s = shared(np.zeros(2), name="counter")
    with pytest.raises(ValueError, match="updates 'counter'.*delete_updates"):
        map_batches(function([x], x, updates={s: s + 1}), X)
    with pytest.raises(ValueError, match="per-example"):
        map_batches(function([x], x.sum(axis=0)), X)
    with pytest.raises(TypeError, match="no argument is a dask array"):
        map_batches(function([x], x * 2), np.zeros((6, 2)))
    y = T.matrix("y")
    with pytest.raises(ValueError, match="same number of rows"):
        map_batches(function([x, y], x + y), X, da.zeros((5, 2), chunks=5))
    with pytest.raises(TypeError, match="compiled arignote function"):
        map_batches(lambda a: a, X)


def test_a_function_whose_rows_depend_on_the_chunk_is_caught_on_the_worker(client, rng):
    x = T.matrix("x")
    f = function([x], x[:1] * 2)  # one row, whatever the chunk: per-example only on one row
    out = map_batches(f, da.from_array(rng.normal(size=(6, 2)), chunks=3))
    with pytest.raises(ValueError, match="not per-example"):
        out.compute()

