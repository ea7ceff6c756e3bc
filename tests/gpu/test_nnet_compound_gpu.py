"""Theano's compound nnet ops (tensor.nnet.compound) on a device: lowered to arignote's
compositions, they run with the device's softmax kernels and give the values of the ops'
own perform."""
from __future__ import annotations

import numpy as np

import arignote
from arignote import tensor as T
from arignote.compile.mode import Mode
from arignote.tensor import nnet
from tests.utils import assert_matches, value


def test_compound_ops_run_with_the_device_softmax(device):
    x, b, y, v = T.fmatrix("x"), T.fvector("b"), T.lvector("y"), T.fvector("v")
    nll, sm, am = nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y)
    outs = [nnet.softmax_with_bias(x, b), nll, sm, am, nnet.crossentropy_softmax_1hot_with_bias_dx(v, sm, y),
            arignote.grad((nll * v).sum(), x)]
    vals = [value((6, 5), "float32") / 5, value(5, "float32"), np.array([0, 4, 2, 2, 1, 3]), value(6, "float32")]
    f = arignote.function([x, b, y, v], outs)
    with arignote.config.change_flags(device="cpu"):
        reference = arignote.function([x, b, y, v], outs, mode=Mode(optimizer=None))(*vals)
    for got, want in zip(f(*vals), reference):
        assert_matches(np.asarray(got), want, 1e-4)
    placed = {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
    assert not placed & {"SoftmaxWithBias", "CrossentropySoftmaxArgmax1HotWithBias",
                         "CrossentropySoftmax1HotWithBiasDx"}
    if device != "cpu":
        assert {"GpuSoftmax", "GpuLogSoftmax"} <= placed
