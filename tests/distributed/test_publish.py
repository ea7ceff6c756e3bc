"""What travels between client and workers pickles, and carries only what it should:
programs without their shared values, pins without their futures, and the errors a
worker raises with their fields (a task's exception reaches the client as a pickle)."""
import pickle

import numpy as np
import pytest

pytest.importorskip("dask.array")
pytest.importorskip("distributed")

from dask.base import tokenize  # noqa: E402

from arignote import function, shared, tensor as T  # noqa: E402
from arignote.distributed.publish import (Pin, ProgramRef, describe, load_program, program_bytes,  # noqa: E402
                                          value_digest)
from arignote.distributed.training import Definition, OutOfStep  # noqa: E402
from arignote.distributed.worker import BlobLost  # noqa: E402


def test_a_program_travels_without_its_shared_values_and_binds_to_the_workers_replicas(rng):
    W = shared(rng.normal(size=(40, 3)), name="W")
    x = T.matrix("x")
    f = function([x], T.dot(x, W))
    data, variables = program_bytes(f)
    assert variables == [W]
    assert W.get_value(borrow=True).tobytes() not in data  # the value travels on its own
    recipe = describe(W)
    replica = recipe.loader(rng.normal(size=(40, 3)), *recipe.args)
    loaded = load_program(pickle.loads(pickle.dumps(data)), {recipe.key: replica})
    X = rng.normal(size=(5, 40))
    np.testing.assert_allclose(loaded(X), X @ replica.get_value())
    np.testing.assert_allclose(f(X), X @ W.get_value())  # the client's function is untouched
    assert replica.name == "W" and replica.type == W.type


def test_a_clone_of_a_shared_variable_is_bound_as_a_clone_of_the_replica():
    W = shared(np.ones(3), name="W")
    data, variables = program_bytes([W, W.clone()])
    assert variables == [W]
    replica = shared(np.zeros(3), name="W")
    same, clone = load_program(data, {describe(W).key: replica})
    assert same is replica and clone is not replica and clone.origin is replica


def test_a_program_with_a_reference_it_does_not_know_is_refused():
    class Other(pickle.Pickler):
        def persistent_id(self, obj):
            return ("device", "x", False) if obj == "marker" else None

    import io
    stream = io.BytesIO()
    Other(stream).dump(["marker"])
    with pytest.raises(pickle.UnpicklingError, match="unknown reference"):
        load_program(stream.getvalue(), {})


def test_a_pin_travels_as_its_key_alone():
    class Future:
        status = "finished"

    pin = Pin("arignote-value-abc", Future())
    assert pin.alive()
    back = pickle.loads(pickle.dumps(pin))
    assert back.key == pin.key and back.future is None and not back.alive()
    assert tokenize(pin) == tokenize(Pin(pin.key))  # a graph's token does not see the future


def test_a_trainer_definition_pickles_with_its_recipes(rng):
    W = shared(rng.normal(size=(2, 2)), name="W")
    refs = (describe(W)._replace(digest="d", pin=Pin("k")),)
    definition = Definition("trainer-1", ProgramRef("g", Pin("pg")), ProgramRef("u", Pin("pu")), refs, True)
    back = pickle.loads(pickle.dumps(definition))
    assert back.space == "trainer-1" and back.gradient.pin.key == "pg" and back.mean
    replica = back.state[0].loader(np.zeros((2, 2)), *back.state[0].args)
    assert replica.name == "W" and replica.type == W.type


def test_the_errors_a_worker_raises_reach_the_client_whole():
    err = pickle.loads(pickle.dumps(OutOfStep("tcp://w:1", None, 4)))
    assert (err.worker, err.have, err.want) == ("tcp://w:1", None, 4)
    assert str(err) == "worker tcp://w:1 holds no replica, where step 4 was needed"
    assert "its replica at step 2" in str(pickle.loads(pickle.dumps(OutOfStep("w", 2, 3))))
    lost = pickle.loads(pickle.dumps(BlobLost("the published object k is no longer in the cluster")))
    assert isinstance(lost, BlobLost) and "no longer in the cluster" in str(lost)


def test_a_value_digest_follows_content_dtype_and_shape():
    a = np.arange(12.0).reshape(3, 4)
    assert value_digest(a) == value_digest(a.copy())
    assert value_digest(a.T) == value_digest(np.ascontiguousarray(a.T))  # a view: its content
    assert value_digest(a) != value_digest(a.reshape(4, 3))
    assert value_digest(a) != value_digest(a.view(np.int64))
    b = a.copy()
    b[2, 3] += 1e-12
    assert value_digest(a) != value_digest(b)
    assert value_digest(np.float64(2.0)) == value_digest(np.float64(2.0)) != value_digest(np.float64(3.0))
