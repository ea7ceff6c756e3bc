"""Two basic indexings in a row merged into one (local_subtensor_merge), checked against numpy."""
import itertools

import numpy as np
import pytest

import arignote.tensor as T
from arignote import function
from arignote.compile.mode import get_mode
from arignote.tensor.alloc import Alloc
from arignote.tensor.checks import Assert
from arignote.tensor.subtensor.read import Subtensor

from tests.rewriting.rewrite_utils import NO_REWRITES

MODE = get_mode("FAST_RUN")
BOUNDS = [None, -7, -2, 0, 1, 3, 9]
STEPS = [None, -3, -1, 2]


def _subtensors(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Subtensor)]


@pytest.mark.parametrize("outer", [slice(b, e, s) for b, e, s in itertools.product(BOUNDS[::2], BOUNDS[1::2], STEPS)])
def test_two_constant_slices_merge_into_one_with_pythons_rules(outer):
    x = T.vector("x")
    inners = [slice(b, e, s) for b, e, s in itertools.product(BOUNDS[1::2], BOUNDS[::3], STEPS)]
    fs = [function([x], x[outer][inner], mode=MODE) for inner in inners]
    assert all(len(_subtensors(f)) == 1 for f in fs)
    for n in (0, 1, 4, 7):
        a = np.arange(float(n))
        for f, inner in zip(fs, inners):
            np.testing.assert_array_equal(f(a), a[outer][inner])


def test_symbolic_slice_bounds_are_left_as_two_indexings():
    x = T.vector("x")
    b, e = T.iscalar("b"), T.iscalar("e")
    f = function([x, b, e], x[b:e][1:], mode=MODE)
    assert len(_subtensors(f)) == 2
    np.testing.assert_array_equal(f(np.arange(6.0), 1, 5), np.arange(2.0, 5.0))


@pytest.mark.parametrize("outer", [slice(b, e, s) for b, e, s in itertools.product(BOUNDS, BOUNDS[::2], STEPS)])
def test_constant_slice_then_index_merges_and_keeps_index_errors(outer):
    x = T.matrix("x")
    i = T.iscalar("i")
    f = function([x, i], x[outer][i], mode=MODE)
    assert len(_subtensors(f)) == 1
    for shape in ((0, 2), (1, 3), (5, 2)):
        a = np.arange(float(np.prod(shape))).reshape(shape)
        for k in (-6, -1, 0, 2, 4):
            try:
                expected = a[outer][k]
            except IndexError:
                with pytest.raises(IndexError):
                    f(a, k)
            else:
                np.testing.assert_array_equal(f(a, k), expected)


def test_several_axes_integers_kept_and_trailing_inner_items_go_to_whole_axes():
    x = T.tensor3("x")
    f = function([x], x[1:, 2, ::-1][::2, 1:], mode=MODE)
    g = function([x], x[0][1:], mode=MODE)
    a = np.arange(60.0).reshape(3, 4, 5)
    assert len(_subtensors(f)) == 1 and len(_subtensors(g)) == 1
    np.testing.assert_array_equal(f(a), a[1:, 2, ::-1][::2, 1:])
    np.testing.assert_array_equal(g(a), a[0][1:])


def test_without_rewrites_the_two_indexings_stay():
    x = T.vector("x")
    f = function([x], x[2:][1:], mode=NO_REWRITES)
    assert len(_subtensors(f)) == 2
    np.testing.assert_array_equal(f(np.arange(6.0)), np.arange(3.0, 6.0))


def _allocs(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Alloc)]


@pytest.mark.parametrize("write", [T.inc_subtensor, T.set_subtensor])
def test_an_alloc_written_at_an_advanced_index_is_the_value_broadcast(write):
    x, y = T.vector("x"), T.vector("y")
    i = T.matrix("i", dtype="int64")
    f = function([x, i, y], write(x[i], T.alloc(y, *i.shape)), mode=MODE)
    assert _allocs(f) == [] and not any(isinstance(n.op, Assert) for n in f.maker.fgraph.toposort())
    index, value = np.array([[1, 1, 2], [0, 4, 4]]), np.array([2.5, -1.0, 4.0])
    expected = np.arange(5.0)
    if write is T.inc_subtensor:
        np.add.at(expected, index, np.broadcast_to(value, index.shape))
    else:
        expected[index] = np.broadcast_to(value, index.shape)
    np.testing.assert_allclose(f(np.arange(5.0), index, value), expected)


def test_a_single_value_filled_out_keeps_its_alloc():
    """A scalar's alloc stays: on a GPU it is a device fill, where the broadcast value would be
    a host array uploaded at each call (a gradient's -1/n written at x[arange(n), y])."""
    x, y = T.vector("x"), T.scalar("y")
    i = T.vector("i", dtype="int64")
    f = function([x, i, y], T.inc_subtensor(x[i], T.alloc(y, i.shape[0])), mode=MODE)
    assert len(_allocs(f)) == 1
    np.testing.assert_allclose(f(np.zeros(3), np.array([0, 2, 2]), 1.5), [1.5, 0.0, 3.0])


def test_an_alloc_written_at_a_row_list_is_the_value_broadcast():
    x, y = T.matrix("x"), T.vector("y")
    i = T.vector("i", dtype="int64")
    f = function([x, i, y], T.advanced_inc_subtensor1(x, T.alloc(y, i.shape[0], x.shape[1]), i), mode=MODE)
    assert _allocs(f) == []
    expected = np.zeros((3, 2))
    np.add.at(expected, [0, 2, 2], [1.0, 2.0])
    np.testing.assert_allclose(f(np.zeros((3, 2)), [0, 2, 2], [1.0, 2.0]), expected)


def test_an_unproven_alloc_shape_becomes_a_checked_assert():
    x, y = T.vector("x"), T.vector("y")
    n = T.scalar("n", dtype="int64")
    f = function([x, n, y], T.inc_subtensor(x[:n], T.alloc(y, n)), mode=MODE)
    assert _allocs(f) == [] and any(isinstance(nd.op, Assert) for nd in f.maker.fgraph.toposort())
    np.testing.assert_allclose(f(np.arange(5.0), 3, np.ones(3)), [1.0, 2.0, 3.0, 3.0, 4.0])
    np.testing.assert_allclose(f(np.arange(2.0), 2, np.ones(2)), [1.0, 2.0])
    g = function([x, n, y], T.inc_subtensor(x[:2], T.alloc(y, n)), mode=MODE)
    with pytest.raises(AssertionError, match="shape other than the indexed part"):
        g(np.arange(5.0), 3, np.ones(3))  # alloc(y, 3) into x[:2] fails without the rewrite too
