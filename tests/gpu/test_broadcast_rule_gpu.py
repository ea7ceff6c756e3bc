"""The broadcasting rule and its errors on every backend (tests/tensor/test_broadcast_rule.py
holds the CPU paths in detail): GpuElemwise, fused or not, refuses what the types
do not allow and names the user's variables, never the transfers around them."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, grad
from arignote import tensor as T


def gpu_elemwise(f) -> list:
    return [n for n in f.maker.fgraph.toposort() if type(n.op).__name__ == "GpuElemwise"]


@pytest.mark.parametrize("fused", [False, True])
def test_a_length_one_dimension_that_is_not_broadcastable_is_refused(device, fused):
    x, y = T.fmatrix("x"), T.fmatrix("y")
    out = T.exp(x) * 2 + T.tanh(y) if fused else x + y
    f = function([x, y], out)
    if device != "cpu":
        assert gpu_elemwise(f), "the elementwise work must run on the device"
    with pytest.raises(ValueError) as info:
        f(np.ones((1, 3), "float32"), np.ones((2, 3), "float32"))
    text = str(info.value)
    assert "'x' has shape (1, 3) and 'y' has shape (2, 3)" in text
    assert "tensor.addbroadcast(x, 0)" in text
    assert "GpuFromHost" not in text and "arg " not in text
    if fused:
        assert f"built at {out.tag.trace}" in text


def test_mismatched_lengths_name_the_constant(device):
    v = T.fvector("v")
    f = function([v], v * np.array([1, 2], "float32"))
    with pytest.raises(ValueError, match=r"'v' has shape \(3,\) and the constant \[1\. 2\.\] has shape \(2,\)"):
        f(np.ones(3, "float32"))


def test_broadcastable_dimensions_stretch_and_gradients_keep_their_shape(device):
    r, m = T.frow("r"), T.fmatrix("m")
    cost = (T.exp(r) * m).sum()
    f = function([r, m], [cost] + grad(cost, [r, m]))
    rv = np.zeros((1, 3), "float32")
    mv = np.arange(6, dtype="float32").reshape(2, 3)
    c, gr, gm = f(rv, mv)
    assert gr.shape == (1, 3) and gm.shape == (2, 3)
    np.testing.assert_allclose(gr, mv.sum(axis=0, keepdims=True))
    np.testing.assert_allclose(gm, np.ones((2, 3)))
    x = T.fmatrix("x")  # not broadcastable: the cost itself refuses the (1, 3) value
    g = function([x, m], [(x * m).sum(), grad((x * m).sum(), x)])
    with pytest.raises(ValueError, match="'x' has shape \\(1, 3\\)"):
        g(rv, mv)
