"""assert_conv_shape, assert_shape and the ``conv.assert_shape`` flag; the convolution
ops' own shape checks raise an error that is both a ValueError and the AssertionError
Theano code catches."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.config import config
from arignote.tensor.nnet import abstract_conv as ac
from arignote.tensor.shape import ShapeMismatchError


def test_assert_conv_shape_checks_constants_now_and_symbols_at_run_time():
    shape = tuple(T.iscalar(f"s{i}") for i in range(4))
    f = arignote.function(shape, list(ac.assert_conv_shape(shape)))
    assert [int(v) for v in f(1, 2, 3, 4)] == [1, 2, 3, 4]
    assert [int(v) for v in f(0, 0, 1, 1)] == [0, 0, 1, 1]
    for bad, dim in [((3, 3, 3, 0), 3), ((3, 3, 0, 3), 2), ((3, 3, -1, 3), 2), ((3, -1, 3, 3), 1),
                     ((-1, 3, 3, 3), 0)]:
        with pytest.raises(AssertionError, match=rf"invalid shape \(dim\[{dim}\] must be"):
            f(*bad)
    assert ac.assert_conv_shape((0, 1, 5, 6)) == (0, 1, 5, 6)
    with pytest.raises(ValueError, match=r"dim\[2\]: 0 <= 0"):
        ac.assert_conv_shape((2, 3, 0, 4))
    with pytest.raises(ValueError, match=r"dim\[1\]: -1 < 0"):
        ac.assert_conv_shape((2, -1, 3, 4))
    mixed = ac.assert_conv_shape((2, T.constant(3), shape[2], 4))
    assert mixed[0] == 2 and mixed[3] == 4


def test_assert_shape_follows_the_flag():
    x, s1, s2 = T.tensor4("x"), T.iscalar("s1"), T.iscalar("s2")
    assert config.conv.assert_shape is False  # Theano's default
    assert ac.assert_shape(x, [None, s1, s2, None]) is x
    v = np.zeros((3, 5, 7, 11), dtype="float32")
    with config.change_flags({"conv.assert_shape": True}):
        checked = ac.assert_shape(x, [None, s1, s2, None], "maps of the wrong size")
        assert ac.assert_shape(x, [None] * 4) is x and ac.assert_shape(x, None) is x
    f = arignote.function([x, s1, s2], checked)
    assert f(v, 5, 7).shape == v.shape
    for bad in [(5, 0), (5, 9), (0, 7), (7, 7)]:
        with pytest.raises(AssertionError, match=r"maps of the wrong size \(checking 'x'\)"):
            f(v, *bad)
    g = arignote.function([x, s1, s2], arignote.grad(checked.sum(), x))
    assert g(v, 5, 7).shape == v.shape
    op = checked.owner.op
    assert pickle.loads(pickle.dumps(op)) == op


@pytest.mark.parametrize("build, values", [
    (lambda i, w: T.nnet.conv2d(i, w, input_shape=(3, 5, 7, 11), filter_shape=(7, 5, 3, 3)),
     [(np.zeros((3, 5, 9, 11)), np.zeros((7, 5, 3, 3))), (np.zeros((3, 5, 7, 11)), np.zeros((7, 5, 2, 2)))]),
    (lambda g, w: ac.conv2d_grad_wrt_inputs(g, w, (None, None, 7, 11), (7, 5, 3, 3)),
     [(np.zeros((3, 7, 5, 9)), np.zeros((7, 6, 3, 3)))]),
    (lambda i, g: ac.conv2d_grad_wrt_weights(i, g, (None, None, 3, 3), (3, 5, 7, 11)),
     [(np.zeros((3, 6, 7, 11)), np.zeros((3, 7, 5, 9)))]),
])
def test_given_shapes_are_checked_with_or_without_the_flag(build, values):
    a, b = T.tensor4("a"), T.tensor4("b")
    for flag in (False, True):
        with config.change_flags({"conv.assert_shape": flag}):
            f = arignote.function([a, b], build(a, b))
        for args in values:
            with pytest.raises(ShapeMismatchError, match="shape mismatch|channels") as info:
                f(*args)
            assert isinstance(info.value, AssertionError) and isinstance(info.value, ValueError)
