"""Graphs pickle and deep-copy as flat node lists: any depth, every op and type of
the library (no lambda or closure in their state), identities kept."""
from __future__ import annotations

import copy
import pickle

import numpy as np

import arignote
from arignote import config, function, shared, tensor as T
from arignote.graph.traversal import io_toposort
from arignote.sandbox.rng_mrg import MRG_RandomStreams
from arignote.tensor.shared_randomstreams import RandomStreams


def chain(n: int):
    """``x + c0 + c1 + ...``: two nodes a step (the constant's DimShuffle, the add)."""
    x = T.vector("x")
    y = x
    for i in range(n):
        y = y + np.float64(i % 7)  # constants differ, so no two nodes merge
    return x, y


def same_chain(a, b, steps: int) -> None:
    for _ in range(steps):
        assert a.owner.op == b.owner.op and str(a.owner.inputs[1]) == str(b.owner.inputs[1])
        a, b = a.owner.inputs[0], b.owner.inputs[0]
    assert a.owner is None and b.owner is None and a.name == b.name == "x"


def test_a_ten_thousand_node_graph_pickles_with_no_recursion(low_recursion_limit):
    x, y = chain(5000)
    assert len(io_toposort([x], [y])) == 10_000
    same_chain(pickle.loads(pickle.dumps(y)), y, 5000)


def test_a_deep_graph_deep_copies_and_its_function_pickles(low_recursion_limit):
    x, y = chain(600)
    same_chain(copy.deepcopy(y), y, 600)
    f = function([x], y)
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g(np.zeros(2)), f(np.zeros(2)))
    assert pickle.loads(pickle.dumps(f.maker.fgraph)).outputs[0].type == y.type


def test_identities_survive_one_pickle():
    x = T.vector("x")
    a = T.exp(x)
    b, c = a * 2, a + 1
    a2, b2, c2, x2 = pickle.loads(pickle.dumps([a, b, c, x]))
    assert b2.owner.inputs[0] is a2 and c2.owner.inputs[0] is a2
    assert a2.owner.inputs[0] is x2 and a2.owner.outputs[0] is a2
    node = pickle.loads(pickle.dumps(b.owner))
    assert node.outputs[0].owner is node
    assert copy.copy(a).owner is a.owner  # a shallow copy, as before


def corpus():
    """Graphs using most ops of the library, rewritten as FAST_RUN compiles them."""
    x, m, i = T.fmatrix("x"), T.fmatrix("m"), T.ivector("i")
    w = shared(np.ones((3, 3), dtype="float32"), "w")
    s = RandomStreams(seed=1)
    r = MRG_RandomStreams(seed=2)
    h, _ = arignote.scan(lambda row, acc: acc + T.tanh(row), sequences=x,
                         outputs_info=T.zeros(3, dtype="float32"))
    cost = (T.nnet.categorical_crossentropy(T.nnet.softmax(T.dot(x, w)), i).mean()
            + h.sum() + T.log1p(T.exp(m)).max() + T.concatenate([x, m]).sum()
            + x[1:, ::2].sum() + x[i].sum() + T.alloc(np.float32(1), 2, 2).sum()
            + s.normal((2,), dtype="float32").sum() + r.uniform((2,), dtype="float32").sum()
            + T.cast(x, "int32").sum() + T.switch(x > 0, x, -x).sum() + m.reshape((9,)).argmax())
    grads = arignote.grad(cost, [w, x])
    jac = arignote.jacobian(T.tanh(x).sum(axis=0), x)
    return [x, m, i], [cost, *grads, jac]


def test_every_op_in_a_compiled_graph_pickles(device):
    with config.change_flags(floatX="float32"):
        inputs, outputs = corpus()
        f = function(inputs, outputs)
        fgraph = pickle.loads(pickle.dumps(f.maker.fgraph))
        assert [type(n.op).__name__ for n in fgraph.toposort()] == [
            type(n.op).__name__ for n in f.maker.fgraph.toposort()]
        args = (np.eye(3, dtype="float32"), np.ones((3, 3), dtype="float32"),
                np.array([0, 2, 1], dtype="int32"))
        g = pickle.loads(pickle.dumps(f))
        for a, b in zip(g(*args), f(*args)):
            np.testing.assert_allclose(a, b, rtol=1e-5)
