"""Pickles of shared variables and compiled functions, on every device: host data and
types, never device handles; a function loaded in a fresh process computes exactly
what the original would have; a failed dump writes nothing it could avoid."""
from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from arignote import In, Mode, SharedVariable, function, shared, tensor as T
from arignote.graph.traversal import graph_inputs
from arignote.sandbox.rng_mrg import MRG_RandomStreams
from arignote.tensor.shared_randomstreams import RandomStreams

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")
DEVICE_FLAGS = {"cpu": "device=cpu", "opencl": "device=opencl", "cuda": "device=cuda0"}


def run_fresh(code: str, flags: str, *args: str) -> str:
    """Run ``code`` in a new interpreter with ARIGNOTE_FLAGS=``flags``; its stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARIGNOTE")}
    env.update(PYTHONPATH=SRC, ARIGNOTE_FLAGS=flags, HOME="/nonexistent")
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def roundtrip(obj):
    return pickle.loads(pickle.dumps(obj))


# ------------------------------------------------------------ shared variables
def test_a_shared_variable_pickles_as_host_data_type_and_name(device):
    s = shared(np.arange(6, dtype="float32").reshape(1, 6), "w", strict=True, allow_downcast=False,
               broadcastable=(True, False))
    s.default_update = s * np.float32(2)
    data = pickle.dumps(s)
    assert b"Device" not in data and b"Context" not in data and b"cl." not in data
    t = pickle.loads(data)
    assert type(t) is type(s) and t.type == s.type and t.name == "w"
    assert t.strict and t.allow_downcast is False
    np.testing.assert_array_equal(t.get_value(), s.get_value())
    assert t in graph_inputs([t.default_update]) and s not in graph_inputs([t.default_update])
    function([], t * 1)()  # the default update of the loaded variable doubles it
    np.testing.assert_array_equal(t.get_value(), s.get_value() * 2)


def test_a_loaded_shared_variable_is_independent_of_the_original(device):
    s = shared(np.zeros(3, dtype="float32"), "s")
    t = roundtrip(s)
    function([], [], updates={t: t + np.float32(1)})()
    np.testing.assert_array_equal(s.get_value(), [0, 0, 0])
    np.testing.assert_array_equal(t.get_value(), [1, 1, 1])


def test_a_clone_loads_as_a_clone_of_its_loaded_origin():
    s = shared(np.zeros(2), "s")
    c = s.clone()
    s2, c2 = roundtrip([s, c])
    assert c2.origin is s2 and c2.storage is s2.storage


def test_random_states_pickle_with_their_stream_position():
    srng = RandomStreams(seed=7)
    draw = function([], srng.uniform((3,)))
    draw()
    copy_of_draw = roundtrip(draw)
    np.testing.assert_array_equal(copy_of_draw(), draw())


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
@pytest.mark.parametrize("load", [roundtrip, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_random_streams_and_their_functions_copy_together(streams, load):
    s = streams(seed=3)
    draw = function([], s.uniform((2,)))
    s2, draw2 = load((s, draw))
    np.testing.assert_array_equal(draw2(), draw())
    s2.seed(5)  # reseeds the copy's states, the ones its function reads
    s.seed(5)
    np.testing.assert_array_equal(draw2(), draw())
    s.seed(6)
    assert not np.array_equal(draw2(), draw())


def test_pickled_on_opencl_loads_in_a_cpu_only_process(opencl, tmp_path):
    path = tmp_path / "model.pkl"
    run_fresh("""
        import pickle, sys
        import numpy as np
        from arignote import function, shared, tensor as T
        w = shared(np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3), "w")
        b = shared(np.zeros(3, dtype="float32"), "b", broadcastable=(False,))
        assert "Gpu" in type(w).__name__
        x = T.fmatrix("x")
        step = function([x], T.tanh(T.dot(x, w) + b).sum(), updates={b: b + 1})
        step(np.ones((1, 2), "float32"))
        with open(sys.argv[1], "wb") as f:
            pickle.dump({"params": [w, b], "step": step}, f)
    """, "device=opencl,floatX=float32", str(path))
    out = run_fresh("""
        import pickle, sys
        sys.modules["pyopencl"] = None  # no OpenCL here at all
        import numpy as np
        with open(sys.argv[1], "rb") as f:
            model = pickle.load(f)
        w, b = model["params"]
        print(type(w).__name__, w.name, w.get_value().tolist(), b.get_value().tolist())
        print(model["step"](np.ones((1, 2), "float32")), b.get_value().tolist())
    """, "device=cpu,floatX=float32", str(path))
    first, second = out.splitlines()
    assert first == ("TensorSharedVariable w [[-1.0, -0.6000000238418579, -0.20000000298023224], "
                     "[0.20000000298023224, 0.6000000238418579, 1.0]] [1.0, 1.0, 1.0]")
    value, b_after = second.rsplit(" ", 3)[0], second.split(" ", 1)[1]
    expected = np.tanh(np.ones((1, 2)) @ np.linspace(-1, 1, 6).reshape(2, 3) + 1).sum()
    assert float(value) == pytest.approx(expected, rel=1e-5)
    assert b_after == "[2.0, 2.0, 2.0]"


# ----------------------------------------------------------- functions
FUNCTION_SCRIPT = """
    import pickle, sys
    import numpy as np
    import arignote
    from arignote import In, function, shared, tensor as T
    from arignote.sandbox.rng_mrg import MRG_RandomStreams
    from arignote.tensor.shared_randomstreams import RandomStreams
    x, k = T.fmatrix("x"), T.fscalar("k")
    w = shared(np.linspace(-1, 1, 12, dtype="float32").reshape(3, 4), "w")
    srng, mrg = RandomStreams(seed=3), MRG_RandomStreams(seed=5)
    h, _ = arignote.scan(lambda row, acc: acc + T.tanh(T.dot(row, w)), sequences=x,
                         outputs_info=T.zeros(4, dtype="float32"))
    cost = ((h[-1] ** 2).sum() + srng.uniform((4,), dtype="float32").sum()
            + mrg.uniform((4,), dtype="float32").sum())
    f = function([x, In(k, value=np.float32(1), update=k * 2)], [cost, k],
                 updates={w: w - np.float32(0.01) * arignote.grad(cost, w)})
    X = np.arange(6, dtype="float32").reshape(2, 3) / 10
    f(X)
    data = pickle.dumps((f, w))
    expected = [f(X) for _ in range(3)] + [[w.get_value()]]
    with open(sys.argv[1], "wb") as out:
        pickle.dump((data, X, expected), out)
"""


def test_a_pickled_function_gives_identical_results_in_a_fresh_process(device, tmp_path):
    path = tmp_path / "f.pkl"
    flags = DEVICE_FLAGS[device] + ",floatX=float32"
    run_fresh(FUNCTION_SCRIPT, flags, str(path))
    out = run_fresh("""
        import pickle, sys
        import numpy as np
        with open(sys.argv[1], "rb") as f:
            data, X, expected = pickle.load(f)
        g, w = pickle.loads(data)
        got = [g(X) for _ in range(3)] + [[w.get_value()]]
        for a, b in zip(got, expected):
            for u, v in zip(a, b):
                assert np.asarray(u).dtype == np.asarray(v).dtype
                assert np.array_equal(u, v), (u, v)
        print("same")
    """, flags, str(path))
    assert out.strip() == "same"


def test_a_function_and_the_variables_it_uses_load_together(device):
    w = shared(np.ones(3, dtype="float32"), "w")
    x = T.fvector("x")
    f = function([x], (x * w).sum(), updates={w: w * np.float32(2)})
    g, w2 = roundtrip((f, w))
    assert w2 is not w and isinstance(w2, SharedVariable)
    assert g(np.ones(3, dtype="float32")) == 3
    np.testing.assert_array_equal(w2.get_value(), [2, 2, 2])
    np.testing.assert_array_equal(w.get_value(), [1, 1, 1])


def test_a_loaded_function_keeps_its_stored_inputs_names_and_options():
    x, k = T.vector("x"), T.scalar("k")
    f = function([x, In(k, value=1.0, update=k + 1, name="k")], x * k, name="scale",
                 trust_input=True, mode="FAST_COMPILE", on_unused_input="ignore")
    f(np.ones(2))
    g = roundtrip(f)
    assert g.name == "scale" and g.trust_input and g["k"] == 2 == f["k"]
    np.testing.assert_array_equal(g(np.ones(2)), [2, 2])
    np.testing.assert_array_equal(g(np.ones(2), k=np.asarray(5.0)), [5, 5])
    assert g.maker.mode.optimizer == "fast_compile"


def test_a_function_copied_with_swap_pickles_with_the_swapped_variable():
    a, b = shared(np.float64(1), "a"), shared(np.float64(10), "b")
    f = function([], a * 2)
    g = roundtrip(f.copy(swap={a: b}))
    assert g() == [20]  # a copy with swap returns a list (Theano 1.0)


def _rewrite_nothing(fgraph):
    pass


def test_a_failed_dump_writes_nothing(tmp_path):
    big = shared(np.zeros(1_000_000), "big")  # 8 MB: many pickle frames
    f = function([], big * 2, mode=Mode(optimizer=lambda fgraph: None))
    path = tmp_path / "f.pkl"
    with open(path, "wb") as out:
        with pytest.raises(pickle.PicklingError, match="lambda"):
            pickle.dump(f, out)
    assert path.stat().st_size == 0
    # a module-level function pickles
    g = roundtrip(function([], big * 2, mode=Mode(optimizer=_rewrite_nothing)))
    assert g().shape == (1_000_000,)


def test_pickles_hold_no_thunk_or_generated_code(device):
    x = T.fmatrix("x")
    w = shared(np.ones((3, 3), dtype="float32"), "w")
    f = function([x], T.nnet.softmax(T.exp(x) * np.float32(2) + T.dot(x, w)).sum())
    f(np.ones((2, 3), dtype="float32"))
    data = pickle.dumps(f)
    assert b"thunk" not in data and b"<locals>" not in data
    np.testing.assert_allclose(pickle.loads(data)(np.ones((2, 3), dtype="float32")), 2, rtol=1e-6)
