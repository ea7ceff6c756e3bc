"""End to end: logistic regression on a sparse bag-of-words input trained by SGD matches the
same model trained on the dense input; compiling sparse graphs under every mode and printer."""
import pickle
import shutil

import numpy as np
import pytest
import scipy.sparse as sp

import arignote
from arignote import sparse as S
from arignote import tensor as T


def bag_of_words(n_docs=60, vocabulary=40, seed=0):
    rng = np.random.RandomState(seed)
    counts = rng.poisson(0.15, (n_docs, vocabulary)).astype("float64")
    labels = (counts[:, : vocabulary // 2].sum(1) > counts[:, vocabulary // 2:].sum(1)).astype("float64")
    return sp.csr_matrix(counts), labels


def train(x_value, labels, sparse, mode=None, steps=40):
    w = arignote.shared(np.zeros((x_value.shape[1], 1)), name="W")
    b = arignote.shared(np.zeros(1), name="b")
    x = S.csr_dmatrix("x") if sparse else T.dmatrix("x")
    t = T.dvector("t")
    z = (S.structured_dot(x, w) if sparse else T.dot(x, w)).flatten() + b[0]
    cost = T.nnet.binary_crossentropy(T.nnet.sigmoid(z), t).mean()
    gw, gb = arignote.grad(cost, [w, b])
    step = arignote.function([x, t], cost, updates=[(w, w - 0.5 * gw), (b, b - 0.5 * gb)], mode=mode)
    costs = [float(step(x_value if sparse else x_value.toarray(), labels)) for _ in range(steps)]
    return costs, w.get_value(), step


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", "DebugMode"])
def test_sparse_logistic_regression_matches_dense(mode):
    x, labels = bag_of_words()
    steps = 40 if mode != "DebugMode" else 3
    sparse_costs, sparse_w, _ = train(x, labels, True, mode, steps)
    dense_costs, dense_w, _ = train(x, labels, False, mode, steps)
    np.testing.assert_allclose(sparse_costs, dense_costs, rtol=1e-10)
    np.testing.assert_allclose(sparse_w, dense_w, rtol=1e-10, atol=1e-12)
    assert sparse_costs[-1] < sparse_costs[0]


def test_the_compiled_sparse_graph_prints_and_pickles(tmp_path):
    x, labels = bag_of_words()
    _, _, step = train(x, labels, True, steps=1)
    text = arignote.debugprint(step, file="str")
    assert "StructuredDot" in text and "Transpose" in text  # W's gradient: x.T . gz
    assert "StructuredDot" in arignote.pp(step.maker.fgraph.outputs[0])
    again = pickle.loads(pickle.dumps(step))
    np.testing.assert_allclose(again(x, labels), step(x, labels))  # each its own W, the same step
    assert "0 on the device" in str(arignote.explain(step))
    pytest.importorskip("pydot")
    from arignote.pictures import pydot_graph, pydotprint
    assert "StructuredDot" in pydot_graph(step).to_string()
    if shutil.which("dot") is None:
        pytest.skip("drawing needs Graphviz's dot, which is not installed")
    pydotprint(step, outfile=str(tmp_path / "graph.png"), format="png")
    assert (tmp_path / "graph.png").exists()


def test_a_constant_sparse_matrix_is_folded_and_merged():
    m = sp.csr_matrix(np.eye(3))
    d = T.dmatrix("d")
    out = S.structured_dot(S.as_sparse_variable(m), d) + S.structured_dot(S.as_sparse_variable(m), d)
    f = arignote.function([d], out)
    np.testing.assert_allclose(f(np.ones((3, 2))), 2 * np.ones((3, 2)))
    nodes = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, S.StructuredDot)]
    assert len(nodes) == 1  # the two equal products merged
