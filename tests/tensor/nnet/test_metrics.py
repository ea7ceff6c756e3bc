"""confusion_matrix against an explicit count of (actual, predicted) pairs."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import tensor as T
from arignote.tensor import nnet
from tests.utils import assert_matches, run


def _reference(actual, pred):
    order = np.union1d(actual, pred)
    conf = np.zeros((len(order), len(order)), dtype="int64")
    for a, p in zip(actual, pred):
        conf[np.searchsorted(order, a), np.searchsorted(order, p)] += 1
    return conf, order


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
@pytest.mark.parametrize("case", [([0, 1, 2, 1, 0], [0, 0, 2, 1, 2]),
                                  ([2, 0, 2, 2, 0, 1], [0, 0, 2, 2, 0, 2]),
                                  ([5, 5, 5], [5, 5, 5]),
                                  ([1, 3], [3, 7]),
                                  ([], [])])
def test_confusion_matrix_counts_pairs(case, dtype):
    actual, pred = (np.asarray(c).astype(dtype) for c in case)
    x, y = T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    conf, order = nnet.confusion_matrix(x, y)
    assert conf.dtype == "int64" and order.dtype == dtype
    got_conf, got_order = run([x, y], [conf, order], actual, pred)
    want_conf, want_order = _reference(actual, pred)
    assert_matches(got_conf, want_conf)
    assert_matches(got_order, want_order.astype(dtype))


def test_theano_documented_example():
    x, y = T.vector("x"), T.vector("y")
    conf, order = run([x, y], nnet.confusion_matrix(x, y), np.array([2, 0, 2, 2, 0, 1.0]),
                      np.array([0, 0, 2, 2, 0, 2.0]))
    assert_matches(conf, np.array([[2, 0, 0], [0, 0, 1], [1, 0, 2]]))
    assert_matches(order, np.array([0.0, 1.0, 2.0]))
    conf, order = run([x, y], nnet.confusion_matrix(x, y), np.array([0.5, 3]), np.array([3, 7.0]))
    assert_matches(conf, np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]]))
    assert_matches(order, np.array([0.5, 3.0, 7.0]))


def test_confusion_matrix_needs_vectors():
    with pytest.raises(ValueError, match="confusion_matrix: pred must be a vector of labels, got 'p'"):
        nnet.confusion_matrix(T.vector("a"), T.matrix("p"))
