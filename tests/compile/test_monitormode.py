"""MonitorMode: the user's functions see every node's input and output values, in order."""
from __future__ import annotations

import numpy as np
from arignote import function, tensor as T
from arignote.compile import MonitorMode
from arignote.compile.monitormode import detect_nan
from tests.utils import NUMPY_FP_WARNINGS_ONLY

pytestmark = NUMPY_FP_WARNINGS_ONLY  # log(0) on purpose


def test_pre_and_post_funcs_see_each_nodes_values_in_schedule_order():
    seen = []
    x, y = T.vector("x"), T.vector("y")
    mode = MonitorMode(pre_func=lambda i, node, fn: seen.append(("pre", i, [c[0].copy() for c in fn.inputs])),
                       post_func=lambda i, node, fn: seen.append(("post", i, [c[0].copy() for c in fn.outputs])))
    f = function([x, y], [T.dot(x, y), T.exp(x).sum()], mode=mode)
    xv, yv = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    got = f(xv, yv)
    np.testing.assert_allclose(got[0], 11.0)
    np.testing.assert_allclose(got[1], np.exp(xv).sum())
    nodes = f.maker.fgraph.toposort()
    assert [(kind, i) for kind, i, _ in seen] == [(k, i) for i in range(len(nodes)) for k in ("pre", "post")]
    for (_, i, inputs), (_, _, outputs) in zip(seen[0::2], seen[1::2]):
        node = nodes[i]
        assert len(inputs) == len(node.inputs) and len(outputs) == len(node.outputs)
    assert any(np.allclose(out[0], 11.0) for kind, _, out in seen if kind == "post")


def test_detect_nan_prints_the_node_that_made_one(capsys):
    x = T.scalar("x", dtype="float64")
    f = function([x], T.log(x) * x, mode=MonitorMode(post_func=detect_nan))
    assert np.isnan(f(0.0))
    text = capsys.readouterr().out
    assert "*** NaN detected ***" in text and "Inputs : [array(0.)]" in text and "Outputs: [array(nan)]" in text
    f(2.0)
    assert capsys.readouterr().out == ""

