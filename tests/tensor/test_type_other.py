"""``tensor.type_other``: make_slice builds slices in the graph (and indexes with them like a
Python slice), SliceConstant and NoneConst compare by value, survive pickling, and equal
make_slice nodes merge."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.graph.basic import Constant
from arignote.tensor.type_other import (MakeSlice, NoneConst, NoneTypeT, SliceConstant, SliceIndices,
                                        make_slice, none_type_t, slicetype)


@pytest.mark.parametrize("bounds", [(0, 3, None), (None, -1, 2), (1, None, None), (4, 0, -1)])
def test_make_slice_value_and_indexing(bounds):
    n = T.lscalar("n")
    parts = [n if b == 3 else b for b in bounds]
    s = make_slice(*parts)
    assert s.type == slicetype and isinstance(s.owner.op, MakeSlice)
    assert function([n], s, on_unused_input="ignore")(3) == slice(*bounds)
    x = T.dvector("x")
    values = np.arange(6.0)
    got = function([x, n], x[s], on_unused_input="ignore")(values, 3)
    np.testing.assert_array_equal(got, values[slice(*bounds)])


def test_make_slice_of_a_python_slice_and_merging():
    s = make_slice(slice(1, None, 2))
    assert [type(v.type).__name__ for v in s.owner.inputs][1] == "NoneTypeT"
    i = T.iscalar("i")
    f = function([i], [make_slice(0, i), make_slice(0, i)])
    assert len([n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, MakeSlice)]) == 1
    assert f(2) == [slice(0, 2), slice(0, 2)]


def test_constants_compare_by_value_and_pickle():
    a, b = Constant(NoneTypeT(), None, name="NoneConst"), Constant(none_type_t, None)
    assert a.equals(b) and NoneConst.equals(a) and pickle.loads(pickle.dumps(NoneConst)).equals(NoneConst)
    c = slicetype.make_constant(slice(np.int8(1), 5))
    assert isinstance(c, SliceConstant) and c.equals(SliceConstant(slicetype, slice(1, 5)))
    assert not c.equals(SliceConstant(slicetype, slice(1, 6)))
    x = T.dvector()
    np.testing.assert_array_equal(function([x], x[c])(np.arange(7.0)), [1, 2, 3, 4])


def test_bad_bounds_and_values():
    with pytest.raises(TypeError, match="integer scalar"):
        make_slice(T.dscalar(), 3)
    with pytest.raises(TypeError, match="slice"):
        slicetype.filter(3)
    with pytest.raises(TypeError, match="only None"):
        none_type_t.filter(0)
    with pytest.raises(TypeError, match="slice variable"):
        SliceIndices()(T.lscalar(), 3)
    with pytest.raises(TypeError, match="integer scalar"):
        SliceIndices()(slicetype(), T.dscalar())


RUN_TIME_SLICES = [slice(1, 3), slice(None), slice(None, None, -1), slice(4, None, -2), slice(-2, None),
                   slice(None, -1, 2), slice(10, 20), slice(-10, 2), slice(0, 0), slice(2, 0, -1),
                   slice(None, -10, -1)]


@pytest.mark.parametrize("s", RUN_TIME_SLICES)
def test_indexing_with_a_slice_known_only_at_run_time(s):
    """As Theano's ``var[slicetype()]``: the slice is an input, its bounds read on its axis at
    run time (negative steps, None and out-of-range bounds as numpy takes them)."""
    slc = slicetype()
    values = np.arange(30.0).reshape(5, 6)
    x = T.dmatrix("x")
    for index, expected in [(slc, values[s]), ((slice(None), slc), values[:, s]),
                            ((Ellipsis, slc), values[..., s]), ((None, 1, slc), values[None, 1, s])]:
        y = x[index]
        assert y.ndim == expected.ndim and y.dtype == "float64"
        got = function([x, slc], y)(values, s)
        np.testing.assert_array_equal(got, expected)
        assert function([x, slc], y.shape)(values, s).tolist() == list(expected.shape)
    shared = function([slc], T.as_tensor_variable(values)[slc])
    np.testing.assert_array_equal(shared(s), values[s])
    expected = values.copy()
    expected[:, s] += 1.0
    got = function([x, slc], T.inc_subtensor(x[:, slc], 1.0))(values, s)
    np.testing.assert_array_equal(got, expected)


def test_a_run_time_slice_has_the_gradient_of_its_slice():
    slc = slicetype()
    x = T.dmatrix("x")
    g = function([x, slc], T.grad(T.sum(x[slc] ** 2), x))
    values = np.arange(12.0).reshape(4, 3)
    expected = np.zeros_like(values)
    expected[3:0:-2] = 2 * values[3:0:-2]
    np.testing.assert_array_equal(g(values, slice(3, 0, -2)), expected)
