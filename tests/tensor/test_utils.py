"""``tensor.utils``: hash_from_ndarray tells arrays apart by values, shape, dtype (views hash
as their copies); shape_of_variables gives each variable's shape from the inputs' shapes
and never computes the values."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import tensor as T
from arignote.graph.fg import FunctionGraph
from arignote.tensor.utils import hash_from_ndarray, shape_of_variables


def test_hash_from_ndarray_distinguishes_and_matches_copies():
    rng = np.random.default_rng(0).random((5, 5))
    arrays = [np.asarray(v) for v in (-2, -1, 0, 1, 2)] + [
        np.zeros((1, 5)), np.zeros((1, 6)), np.zeros((1, 0)), np.zeros((2, 0)),
        np.arange(25).reshape(5, 5), np.arange(25).reshape(5, 5).T,
        np.zeros((5, 5), dtype="uint32"), np.zeros((5, 5), dtype="int32"),
        rng, rng[1:], rng[:4], rng[1:3], rng[::2], rng[::-1]]
    hashes = [hash_from_ndarray(a) for a in arrays]
    assert len(set(hashes)) == len(hashes)
    for view in (rng[1:], rng[1:3], rng[:4], rng[::2], rng[::-1], rng.T):
        assert hash_from_ndarray(view) == hash_from_ndarray(view.copy())


def test_shape_of_variables():
    x = T.matrix("x")
    y = x + x
    assert shape_of_variables(FunctionGraph([x], [y], clone=False), {x: (5, 5)}) == {x: (5, 5), y: (5, 5)}
    z = T.dot(x, x.T)
    shapes = shape_of_variables(FunctionGraph([x], [z], clone=False), {x: (5, 1)})
    assert shapes[x] == (5, 1) and shapes[z] == (5, 5)
    sub = x[1:, ::2]
    assert shape_of_variables(FunctionGraph([x], [sub], clone=False), {x: (10, 7)})[sub] == (9, 4)
    big = T.dot(x, x)  # would take ~8 TB to compute
    assert shape_of_variables(FunctionGraph([x], [big], clone=False), {x: (10 ** 6, 10 ** 6)})[big] == \
        (10 ** 6, 10 ** 6)


def test_shape_of_variables_refuses_foreign_or_missing_inputs():
    x, v = T.matrix("x"), T.vector("v")
    with pytest.raises(ValueError, match="not an input"):
        shape_of_variables(FunctionGraph([x], [x[1:]]), {x: (10, 10)})  # cloned: x is not in it
    with pytest.raises(ValueError, match="no shape given"):
        shape_of_variables(FunctionGraph([x, v], [x + v], clone=False), {x: (3, 3)})
