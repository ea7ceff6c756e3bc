"""set_subtensor / inc_subtensor in place (Theano's local_inplace_setsubtensor and
local_inplace_incsubtensor1): the gradient of ``x[idx]`` scatters into its zeros without a
copy, a chain of writes shares one buffer, and nothing anyone still reads is overwritten."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arignote import function, shared
from arignote import tensor as T
from arignote.compile.mode import FAST_COMPILE, FAST_RUN
from arignote.gradient import grad, verify_grad
from arignote.tensor.subtensor import AdvancedIncSubtensor, AdvancedIncSubtensor1, IncSubtensor
from tests.rewriting.rewrite_utils import check_same_values

INC_OPS = (IncSubtensor, AdvancedIncSubtensor, AdvancedIncSubtensor1)


def _in_place(f):
    return [n.op for n in f.maker.fgraph.toposort() if isinstance(n.op, INC_OPS) and n.op.inplace]


def _index(kind, n, draw):
    if kind == "rows":
        return draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=6))  # repeats accumulate
    if kind == "slice":
        return slice(draw(st.integers(0, n - 1)), None, draw(st.integers(1, 2)))
    return (draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4)), slice(None, None, -1))


@settings(max_examples=25, deadline=None)
@given(st.data(), st.sampled_from(["rows", "slice", "advanced"]), st.sampled_from(["float32", "float64"]),
       st.integers(1, 3))
def test_the_gradient_of_an_index_scatters_in_place_and_matches_numpy(data, kind, dtype, ndim):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    if kind == "advanced" and ndim < 2:
        kind = "rows"
    idx = _index(kind, shape[0], data.draw)
    v = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    x = T.tensor(dtype, (False,) * ndim, name="x")
    g = grad(T.exp(x[idx]).sum(), x)
    f = check_same_values([x], g, FAST_RUN, [v], rtol=1e-5)
    assert _in_place(f), [str(n.op) for n in f.maker.fgraph.toposort()]
    expected = np.zeros_like(v)
    np.add.at(expected, idx if kind != "advanced" else tuple(idx), np.exp(v[idx if kind != "advanced" else tuple(idx)]))
    first = f(v)
    np.testing.assert_allclose(first, expected, rtol=1e-5)
    kept = first.copy()
    f(v * 2)  # the next call reuses the zeros' buffer: the result handed out stays as it was
    np.testing.assert_array_equal(first, kept)
    if dtype == "float64":
        verify_grad(lambda t: T.exp(t[idx]).sum(), [v], mode=FAST_RUN)


def test_a_chain_of_writes_shares_one_buffer_and_leaves_the_input_alone():
    z, a = T.dmatrix("z"), T.dvector("a")
    out = T.set_subtensor(T.inc_subtensor(T.set_subtensor(z[0], a)[1:], 2.0)[[0, 0, 2]], a * 3)
    zv, av = np.arange(12.0).reshape(3, 4), np.arange(4.0)
    f = check_same_values([z, a], out, FAST_RUN, [zv, av])
    assert len(_in_place(f)) == 2  # all but the first, which would overwrite the caller's z
    saved = zv.copy()
    expected = saved.copy()
    expected[0] = av
    expected[1:] += 2.0
    expected[[0, 0, 2]] = av * 3
    np.testing.assert_array_equal(f(zv, av), expected)
    np.testing.assert_array_equal(zv, saved)
    assert not _in_place(function([z, a], out, mode=FAST_COMPILE))


def test_never_in_place_over_a_value_read_elsewhere_or_a_shared_variable():
    x = T.dvector("x")
    e = T.exp(x)
    s = shared(np.arange(4.0), name="s")
    f = function([x], [T.set_subtensor(e[1:], 0.0), e * 2, T.inc_subtensor(s[[1, 1]], x[:2])], mode=FAST_RUN)
    assert not _in_place(f)
    v = np.array([0.1, 0.2, 0.3, 0.4])
    written, doubled, incremented = f(v)
    np.testing.assert_allclose(written, [np.exp(0.1), 0, 0, 0])
    np.testing.assert_allclose(doubled, np.exp(v) * 2)
    np.testing.assert_allclose(incremented, [0.0, 1.3, 2.0, 3.0])
    np.testing.assert_array_equal(s.get_value(), np.arange(4.0))


def test_theanos_signatures_and_names():
    """Theano's IncSubtensor(idx_list, inplace, set_instead_of_inc) and
    AdvancedIncSubtensor1(inplace, set_instead_of_inc): the in-place form declares it."""
    x, y, i = T.dvector("x"), T.dvector("y"), T.lvector("i")
    op = AdvancedIncSubtensor1(True)
    assert op.inplace and not op.set_instead_of_inc and op.destroy_map == {0: [0]}
    assert AdvancedIncSubtensor1(set_instead_of_inc=True) != AdvancedIncSubtensor1(True, True)
    assert str(AdvancedIncSubtensor1(True, True)).startswith("AdvancedIncSubtensor1{InplaceSet")
    assert not AdvancedIncSubtensor1().destroy_map
    sliced = x[1:].owner.op
    assert IncSubtensor(sliced.idx_list, inplace=True, set_instead_of_inc=True).destroy_map == {0: [0]}
    with pytest.raises(Exception, match="accept_inplace"):
        function([x, y, i], op(T.exp(x), y, i))
    f = function([x, y, i], op(T.exp(x), y, i), accept_inplace=True)
    np.testing.assert_allclose(f(np.zeros(3), np.ones(2), [2, 2]), [1.0, 1.0, 3.0])
