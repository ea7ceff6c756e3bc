"""Rewrites reading values the graph fixes: zeros added or set, products with zeros, constant
switches, divisions of zeros and by one, allocs to the shape their value has."""
import numpy as np
import pytest

from arignote import function
from arignote import tensor as T
from tests.rewriting.rewrite_utils import check_same_values, op_names, phase_mode

CANON = phase_mode("canonicalize")
rng = np.random.default_rng(0)
x = T.dmatrix("x")
y = T.dmatrix("y")
X = rng.uniform(-1, 1, (5, 4))
Y = rng.uniform(-1, 1, (4, 4))


@pytest.mark.parametrize("build", [
    lambda: T.inc_subtensor(x[:4], T.zeros_like(y)),
    lambda: T.inc_subtensor(x[:4], np.zeros((4, 4))),
    lambda: T.inc_subtensor(x[:4], T.zeros_like(y).T),
    lambda: T.inc_subtensor(x[[0, 2]], T.zeros_like(y[:2])),
    lambda: T.set_subtensor(T.zeros_like(x)[:4], T.zeros_like(y)),
    lambda: T.set_subtensor(T.ones_like(x)[1:], 1.0),
], ids=["inc-zeros", "inc-constant", "inc-zeros-T", "inc-advanced", "set-zeros-into-zeros", "set-ones-into-ones"])
def test_writes_that_change_nothing_are_removed(build):
    f = check_same_values([x, y], build(), CANON, [X, Y])
    assert not [n for n in op_names(f) if "IncSubtensor" in n]


def test_writes_that_change_something_stay():
    f = check_same_values([x, y], T.set_subtensor(T.zeros_like(x)[:4], T.ones_like(y)), CANON, [X, Y])
    assert "IncSubtensor" in op_names(f)
    f = check_same_values([x, y], T.inc_subtensor(x[:4], y), CANON, [X, Y])
    assert "IncSubtensor" in op_names(f)


@pytest.mark.parametrize("build, shape", [
    (lambda: T.dot(T.zeros_like(x), y), (5, 4)),
    (lambda: T.dot(y, T.zeros_like(x).T), (4, 5)),
    (lambda: T.dot(x, T.zeros_like(y[0])), (5,)),
    (lambda: T.dot(T.zeros_like(y[0]), y), (4,)),
], ids=["0.y", "y.0", "x.0vec", "0vec.y"])
def test_a_product_with_zeros_is_zeros_and_keeps_its_shape_check(build, shape):
    f = check_same_values([x, y], build(), CANON, [X, Y])
    assert "Dot" not in op_names(f) and "Assert" in op_names(f)
    assert f(X, Y).shape == shape


def test_the_shape_check_of_a_product_with_zeros_still_fails():
    f = function([x, y], T.dot(T.zeros_like(y), x), mode=CANON)
    with pytest.raises(AssertionError, match="dot: "):
        f(X, Y)


@pytest.mark.parametrize("cond, pick", [(0, "y"), (1, "x"), (True, "x"), (np.zeros((4, 4)), "y")],
                         ids=["0", "1", "True", "zeros"])
def test_a_switch_on_a_known_condition_is_its_branch(cond, pick):
    xi, yi = T.imatrix("xi"), T.lmatrix("yi")
    f = check_same_values([xi, yi], T.switch(cond, xi, yi), CANON,
                          [np.arange(16, dtype="int32").reshape(4, 4), -np.arange(16).reshape(4, 4)])
    assert "switch" not in op_names(f)


def test_a_switch_between_equal_branches_is_the_branch():
    c = T.dmatrix("c")
    f = check_same_values([x, c], T.switch(c, x, x), CANON, [X, X > 0])
    assert op_names(f) == ["DeepCopyOp"]  # the output is x, copied


def test_a_switch_broadcasting_its_branch_allocs_it():
    r = T.drow("r")
    f = check_same_values([x, r], T.switch(T.ones_like(x), r, x), CANON, [X, X[:1]])
    assert "switch" not in op_names(f) and "Alloc" in op_names(f)
    assert f(X, X[:1]).shape == X.shape


@pytest.mark.parametrize("build", [
    lambda: T.zeros_like(x) / y, lambda: T.zeros_like(y, dtype="int64") // T.cast(y * 10 + 20, "int64"),
], ids=["0/y", "0//y"])
def test_dividing_zeros_gives_zeros(build):
    f = check_same_values([x, y], build(), CANON, [X[:4], Y])
    assert not {"true_div", "int_div"} & set(op_names(f))


def test_integer_floor_division_by_one_is_removed_and_float_is_kept():
    i = T.lmatrix("i")
    f = check_same_values([i], i // 1, CANON, [np.arange(-4, 4).reshape(2, 4)])
    assert op_names(f) == ["DeepCopyOp"]
    f = check_same_values([x], x // 1, CANON, [X])
    assert op_names(f) == ["int_div"]  # floor(x) for floats


@pytest.mark.parametrize("build", [
    lambda r: T.alloc(x, x.shape[0], x.shape[1]) * 2,
    lambda r: T.alloc(r, 1, r.shape[1]) * 2,
], ids=["own-shape", "row"])
def test_an_alloc_to_its_values_own_shape_is_removed(build):
    r = T.drow("r")
    f = check_same_values([x, r], build(r), CANON, [X, X[:1]])
    assert "Alloc" not in op_names(f)


def test_an_alloc_to_lengths_nothing_vouches_for_keeps_its_check():
    f = check_same_values([x], T.alloc(x, 5, 4) * 2, CANON, [X])
    assert "Alloc" in op_names(f)
    with pytest.raises(ValueError):
        f(Y)


def test_an_alloc_that_broadcasts_stays():
    f = check_same_values([x], T.alloc(x, 3, 5, 4), CANON, [X])
    assert "Alloc" in op_names(f)
    v = T.dvector("v")
    f = check_same_values([v], T.alloc(v, 3, v.shape[0]), CANON, [np.arange(4.0)])
    assert "Alloc" in op_names(f)


@pytest.mark.parametrize("index, kept", [
    (lambda v: v[0], 0), (lambda v: v[-1], 0), (lambda v: v[:2], 2), (lambda v: v[::2], 2),
    (lambda v: v[[0, 2]], 2), (lambda v: v[::-1], 3), (lambda v: v[5:], 0),
], ids=["0", "-1", ":2", "::2", "[0,2]", "::-1", "5:"])
def test_a_constant_index_into_a_make_vector_picks_its_elements(index, kept):
    from arignote.tensor.join import make_vector

    a, b, c = T.lscalar("a"), T.lscalar("b"), T.lscalar("c")
    f = check_same_values([a, b, c], index(make_vector(a, b, c)), CANON, [3, 5, 7])
    assert "Subtensor" not in op_names(f) and "AdvancedSubtensor1" not in op_names(f)
    assert sum(len(n.inputs) for n in f.maker.fgraph.toposort() if type(n.op).__name__ == "MakeVector") == kept


def test_the_lengths_a_shape_slice_needs_are_read_alone():
    t = T.dtensor3("t")
    f = check_same_values([t], T.zeros(t.shape[1:]), CANON, [np.ones((2, 3, 4))])
    assert "Subtensor" not in op_names(f)


def test_a_symbolic_or_out_of_range_index_into_a_make_vector_stays():
    from arignote.tensor.join import make_vector

    a, b = T.lscalar("a"), T.lscalar("b")
    f = function([a, b], make_vector(a, b)[a], mode=CANON)
    assert "Subtensor" in op_names(f)
    f = function([a, b], make_vector(a, b)[4], mode=CANON)
    with pytest.raises(IndexError):
        f(1, 2)


def test_an_alloc_of_an_alloc_fills_once():
    m = T.dmatrix("m")
    a, b, c = T.lscalar("a"), T.lscalar("b"), T.lscalar("c")
    f = check_same_values([m, a, b, c], T.alloc(T.alloc(m, b, 1, 1), a, b, c, 2), CANON, [np.full((1, 1), 2.5), 2, 3, 4])
    assert op_names(f) == ["Alloc"]


def test_an_alloc_of_an_alloc_checks_the_lengths_it_cannot_prove():
    m = T.dmatrix("m")
    a, b = T.lscalar("a"), T.lscalar("b")
    f = check_same_values([m, a, b], T.alloc(T.alloc(m, a, 1), 2, b, 3), CANON, [np.ones((1, 1)), 2, 2])
    assert op_names(f).count("Alloc") == 1 and "Assert" in op_names(f)
    with pytest.raises(AssertionError, match="alloc of an alloc"):
        f(np.ones((1, 1)), 2, 5)
