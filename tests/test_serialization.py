"""arignote.save / arignote.load: parameters in a .npz whose loading runs no code;
refusals change nothing."""
from __future__ import annotations

import json

import numpy as np
import pytest

import arignote
from arignote import function, shared


def params():
    return [shared(np.arange(6, dtype="float32").reshape(2, 3), "w"),
            shared(np.zeros((1, 3), dtype="float64"), "b", broadcastable=(True, False)),
            shared(np.int64(7), "steps")]


@pytest.mark.parametrize("form", ["list", "dict", "arrays"])
def test_save_and_load_round_trip(tmp_path, form, device):
    w, b, steps = params()
    given = {"list": [w, b, steps], "dict": {"W": w, "B": b, "S": steps},
             "arrays": {"W": w.get_value(), "B": b.get_value(), "S": steps.get_value()}}[form]
    path = tmp_path / "params.npz"
    arignote.save(path, given)
    loaded = arignote.load(path)
    names = ["w", "b", "steps"] if form == "list" else ["W", "B", "S"]
    assert list(loaded) == names
    for name, s in zip(names, (w, b, steps)):
        assert loaded[name].dtype == s.dtype and loaded[name].shape == s.get_value().shape
        np.testing.assert_array_equal(loaded[name], s.get_value())
    # the file is a plain npz: numpy reads it without pickle, metadata included
    with np.load(path, allow_pickle=False) as raw:
        meta = json.loads(str(raw["__arignote__"]))
    assert [p["name"] for p in meta["params"]] == names
    if form != "arrays":
        assert meta["params"][1]["broadcastable"] == [True, False]


def test_load_into_shared_variables(tmp_path, device):
    w, b, steps = params()
    arignote.save(tmp_path / "p.npz", [w, b, steps])
    w2, b2, steps2 = params()
    w2.set_value(np.ones((2, 3), dtype="float32"))
    f = function([], w2 * 2)
    arignote.load(tmp_path / "p.npz", [w2, b2, steps2])
    np.testing.assert_array_equal(f(), w.get_value() * 2)
    assert steps2.get_value() == 7


@pytest.mark.parametrize("change, message", [
    (lambda v: v.astype("float64"), "dtype float64.*float32"),
    (lambda v: v[:, :2], r"shape \(2, 2\).*\(2, 3\)"),
])
def test_a_mismatch_is_refused_and_changes_nothing(tmp_path, change, message):
    w, b, steps = params()
    saved = {"w": change(w.get_value()), "b": b.get_value(), "steps": steps.get_value()}
    saved["b"] = saved["b"] + 1  # would change b if anything were assigned
    arignote.save(tmp_path / "p.npz", saved)
    before = [s.get_value() for s in (w, b, steps)]
    with pytest.raises(ValueError, match=message) as info:
        arignote.load(tmp_path / "p.npz", [w, b, steps])
    assert "'w'" in str(info.value)
    for s, value in zip((w, b, steps), before):
        np.testing.assert_array_equal(s.get_value(), value)


def test_missing_names_are_refused(tmp_path):
    w, b, steps = params()
    arignote.save(tmp_path / "p.npz", [w])
    with pytest.raises(KeyError, match="'b', 'steps'"):
        arignote.load(tmp_path / "p.npz", [w, b, steps])


def test_a_file_holding_a_pickled_object_array_is_refused(tmp_path):
    path = tmp_path / "evil.npz"
    meta = {"format": "arignote.params", "version": 1,
            "params": [{"name": "w", "dtype": "object", "shape": [1], "broadcastable": [False]}]}
    np.savez(path, p0=np.array([print], dtype=object), __arignote__=np.array(json.dumps(meta)))
    with pytest.raises(ValueError, match="pickled"):
        arignote.load(path)
    plain = tmp_path / "plain.npz"
    np.savez(plain, w=np.ones(2))
    with pytest.raises(ValueError, match="not an arignote parameter file"):
        arignote.load(plain)


def test_save_refuses_what_it_cannot_write_safely(tmp_path):
    unnamed = shared(np.zeros(2))
    with pytest.raises(ValueError, match="no name"):
        arignote.save(tmp_path / "p.npz", [unnamed])
    with pytest.raises(ValueError, match="twice"):
        arignote.save(tmp_path / "p.npz", [shared(np.zeros(2), "a"), shared(np.zeros(2), "a")])
    with pytest.raises(TypeError, match="object"):
        arignote.save(tmp_path / "p.npz", {"x": np.array([None])})
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_random_states_are_not_parameters(tmp_path):
    state = shared(np.random.RandomState(0), "rng")
    with pytest.raises(TypeError, match="RandomState, not an array"):
        arignote.save(tmp_path / "p.npz", [state])
    arignote.save(tmp_path / "p.npz", {"rng": np.zeros(2)})
    with pytest.raises(TypeError, match="not an array"):
        arignote.load(tmp_path / "p.npz", [state])
