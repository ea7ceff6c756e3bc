"""Reduction canonicalizations: merged, dropped, computed from an alloc, scaled, folded joins."""
import numpy as np
import pytest

from arignote import tensor as T
from arignote.tensor.reduction import CAReduce
from tests.rewriting.rewrite_utils import check_same_values, op_names, phase_mode

CANON = phase_mode("canonicalize")
rng = np.random.default_rng(0)
x = T.dtensor3("x")
m = T.dmatrix("m")
c = T.dscalar("c")
X = rng.uniform(-2, 2, (2, 3, 4))
M = rng.uniform(-2, 2, (3, 4))


def _reductions(f, name=None):
    return [n.op for n in f.maker.fgraph.toposort()
            if isinstance(n.op, CAReduce) and name in (None, n.op.scalar_op.name)]


@pytest.mark.parametrize("build, axes", [
    (lambda: x.sum(0).sum(0), (0, 1)),
    (lambda: x.sum(2).sum(0), (0, 2)),
    (lambda: x.sum(1).sum(1), (1, 2)),
    (lambda: x.sum(0).sum(0).sum(0), (0, 1, 2)),
    (lambda: x.max(1).max(0), (0, 1)),
    (lambda: x.prod(0).prod(1), (0, 2)),
], ids=["sum01", "sum20", "sum11", "sum000", "max10", "prod01"])
def test_nested_reductions_merge_into_one(build, axes):
    f = check_same_values([x], build(), CANON, [X], rtol=1e-12)
    (op,) = _reductions(f)
    assert op.axis == axes


def test_reductions_of_different_operators_or_dtypes_stay_apart():
    f = check_same_values([x], x.max(0).sum(0), CANON, [X])
    assert len(_reductions(f)) == 2
    i = T.itensor3("i")
    f = check_same_values([i], i.sum(0, dtype="int8").sum(0), CANON, [np.arange(24, dtype="int32").reshape(2, 3, 4)])
    assert len(_reductions(f)) == 2


@pytest.mark.parametrize("make", [
    lambda v: v.sum(axis=[0, 2]), lambda v: v.prod(axis=[0, 2]), lambda v: v.max(axis=[0, 2]),
    lambda v: T.any(v, axis=[0, 2]), lambda v: v.sum(axis=[0, 2], dtype="float32"),
], ids=["sum", "prod", "max", "any", "sum-f32"])
def test_reducing_only_length_one_axes_is_a_dimshuffle(make):
    b = T.TensorType("float64", (True, False, True))("b")
    f = check_same_values([b], make(b), CANON, [rng.uniform(-1, 1, (1, 5, 1))])
    assert not _reductions(f)


def test_length_one_axes_are_dropped_from_a_wider_reduction():
    b = T.TensorType("int64", (True, False, True))("b")
    f = check_same_values([b], b.sum(axis=[0, 1]), CANON, [np.arange(5).reshape(1, 5, 1)])
    (op,) = _reductions(f)
    assert op.axis == (0,)
    assert f.maker.fgraph.toposort()[-1].inputs[0].ndim == 2 or len(op_names(f)) == 2


@pytest.mark.parametrize("build", [
    lambda: T.zeros_like(x).sum(), lambda: T.ones_like(x).prod(), lambda: T.alloc(c, 2, 3, 4).sum(axis=[0, 2]),
    lambda: T.alloc(c, *x.shape).prod(axis=1), lambda: T.alloc(T.dvector(), 2, 3, 4).sum(axis=[0, 1]),
    lambda: T.fill(x, c).sum(),
], ids=["sum-zeros", "prod-ones", "sum-alloc", "prod-alloc", "sum-alloc-vector", "sum-fill"])
def test_reducing_an_alloc_computes_from_its_value(build):
    out = build()
    vec = [i for i in (out.owner.inputs[0].owner.inputs[0],) if i.owner is None and i.ndim == 1]
    inputs = [x, c] + vec
    values = [X, np.float64(1.5)] + [rng.uniform(-1, 1, 4)] * len(vec)
    f = check_same_values(inputs, out, CANON, values, rtol=1e-12)
    assert not _reductions(f)


def test_an_alloc_whose_value_varies_along_the_reduced_axis_is_reduced():
    v = T.dvector("v")
    f = check_same_values([v], T.alloc(v, 3, 4).sum(axis=1), CANON, [rng.uniform(-1, 1, 4)])
    assert len(_reductions(f)) == 1


def test_max_of_an_alloc_keeps_the_empty_axis_error():
    n = T.lscalar("n")
    f = check_same_values([c, n], T.alloc(c, n).max(), CANON, [np.float64(2), 3])
    assert len(_reductions(f)) == 1


@pytest.mark.parametrize("build", [
    lambda: (c * x).sum(1), lambda: (x * c).sum(), lambda: (x / c).sum(axis=[0, 2]), lambda: (-x).sum(0),
    lambda: (x * 2.5).sum(2),
], ids=["c*x", "x*c", "x/c", "-x", "x*2.5"])
def test_a_scalar_factor_moves_out_of_a_sum(build):
    f = check_same_values([x, c], build(), CANON, [X, np.float64(-1.7)], rtol=1e-12)
    (sum_node,) = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, CAReduce)]
    assert sum_node.inputs[0] is f.maker.fgraph.inputs[0]  # the sum reads x itself: the product has moved after it


def test_a_factor_of_full_shape_stays_inside():
    f = check_same_values([x], (x * x).sum(0), CANON, [X])
    assert isinstance(f.maker.fgraph.toposort()[-1].op, CAReduce)


@pytest.mark.parametrize("make, expected", [
    (lambda a, b: T.max(T.stack([a, b]), 0), "maximum"),
    (lambda a, b: T.min(T.stack([a, b, a * 2]), 0), "minimum"),
    (lambda a, b: T.sum(T.stack([a, b]), 0), "add"),
    (lambda a, b: T.prod(T.join(1, a.dimshuffle(0, "x", 1), b.dimshuffle(0, "x", 1)), 1), "mul"),
], ids=["max", "min3", "sum", "prod-axis1"])
def test_reducing_a_stack_along_its_axis_is_elementwise(make, expected):
    b = T.dmatrix("b")
    f = check_same_values([m, b], make(m, b), CANON, [M, M[::-1] * 1.5], rtol=1e-12)
    assert not _reductions(f) and "Join" not in op_names(f)
    assert expected in op_names(f)


def test_a_stack_reduced_along_another_axis_is_left_alone():
    b = T.dmatrix("b")
    f = check_same_values([m, b], T.max(T.stack([m, b]), 1), CANON, [M, M + 1])
    assert "Join" in op_names(f)


def test_any_of_one_element_is_its_truth():
    z = T.TensorType("complex128", (True, False))("z")
    f = check_same_values([z], T.any(z, axis=0), CANON, [np.array([[0j, 1j, 2 + 0j]])])
    assert not _reductions(f)


@pytest.mark.parametrize("build, expected", [
    (lambda: -T.max(-m, 1), ["min"]),
    (lambda: -T.min(-m), ["max"]),
    (lambda: T.max(-m, 0), ["min", "neg"]),
    (lambda: -T.sum(-m, 1), ["sum"]),
], ids=["-max(-x)", "-min(-x)", "max(-x)", "-sum(-x)"])
def test_a_negation_moves_out_of_a_reduction(build, expected):
    f = check_same_values([m], build(), CANON, [M])
    names = {"maximum": "max", "minimum": "min", "add": "sum"}
    got = [names[n.op.scalar_op.name] if isinstance(n.op, CAReduce) else n.op.scalar_op.name
           for n in f.maker.fgraph.toposort()]
    assert got == expected


def test_an_integer_max_of_a_negation_stays():
    i = T.imatrix("i")
    low = np.array([[-2 ** 31, 1]], dtype="int32")  # -INT_MIN wraps to INT_MIN
    f = check_same_values([i], T.max(-i, 0), CANON, [low])
    assert op_names(f) == ["neg", "CAReduce"]
