"""Canonicalization: each identity fires (the graph's ops) and keeps the values."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arignote import function
from arignote import tensor as T
from arignote.compile.mode import FAST_COMPILE, FAST_RUN
from arignote.tensor.elemwise import Elemwise
from tests.rewriting.rewrite_utils import check_same_values, op_names, phase_mode

CANON = phase_mode("canonicalize")
rng = np.random.default_rng(0)


def _vec(n=5):
    return rng.standard_normal(n)


a, b = T.dvector("a"), T.dvector("b")
COPY = ["DeepCopyOp"]  # an output that is an input gets the function's copy node

IDENTITIES = [
    ("x*1", lambda: a * 1, COPY),
    ("1*x", lambda: 1 * a, COPY),
    ("x+0", lambda: a + 0, COPY),
    ("0+x", lambda: 0 + a, COPY),
    ("x-0", lambda: a - 0, COPY),
    ("0-x", lambda: 0 - a, ["neg"]),
    ("x*1.0", lambda: a * 1.0, COPY),
    ("--x", lambda: -(-a), COPY),
    ("---x", lambda: -(-(-a)), ["neg"]),
    ("(-a)*(-b)", lambda: (-a) * (-b), ["mul"]),
    ("(-a)/(-b)", lambda: (-a) / (-b), ["true_div"]),
    ("a-(-b)", lambda: a - (-b), ["add"]),
    ("a+(-b)", lambda: a + (-b), ["sub"]),
    ("x/1", lambda: a / 1, COPY),
    ("(a*b)/b", lambda: (a * b) / b, COPY),
    ("(b*a)/b", lambda: (b * a) / b, COPY),
    ("(a/b)*b", lambda: (a / b) * b, COPY),
    ("exp(a)*1+0", lambda: T.exp(a) * 1 + 0, ["exp"]),
]


@pytest.mark.parametrize("name, build, expected", IDENTITIES, ids=[i[0] for i in IDENTITIES])
def test_algebraic_identities_fire_and_keep_values(name, build, expected):
    f = check_same_values([a, b], build(), CANON, [_vec(), _vec()])
    assert op_names(f) == expected


def test_x_minus_x_and_x_times_0_and_x_over_x_become_constants_without_computing_x():
    x = T.dmatrix("x")
    for expr, value in ((T.exp(x) - T.exp(x), 0.0), (T.exp(x) * 0, 0.0), (T.exp(x) / T.exp(x), 1.0)):
        f = check_same_values([x], expr, CANON, [rng.standard_normal((3, 4))])
        assert "exp" not in op_names(f) and "Alloc" in op_names(f)
        np.testing.assert_array_equal(f(np.ones((2, 3))), np.full((2, 3), value))


def test_integer_times_float_one_becomes_a_cast_with_the_old_dtype():
    i = T.ivector("i")
    f = check_same_values([i], i * 1.5 / 1.5 * 1.0, CANON, [np.arange(4, dtype="int32")])
    assert f(np.arange(3, dtype="int32")).dtype == np.float64


def test_identity_with_a_constant_of_several_elements_is_kept():
    # x * ones(3) is x only when x has length 3; any other length is an error (the
    # types decide broadcasting), which removing the product would hide.
    f = check_same_values([a], a * T.constant(np.ones(3)), CANON, [np.arange(3.0)])
    assert op_names(f) == ["mul"]
    with pytest.raises(ValueError, match="'a' has shape \\(1,\\).*not broadcastable"):
        f(np.ones(1))


def test_a_row_times_one_keeps_its_broadcast_pattern():
    r = T.drow("r")
    out = r * 1
    f = check_same_values([r], out, CANON, [np.ones((1, 4))])
    assert f.maker.fgraph.outputs[0].type == out.type


def test_two_dimshuffles_merge_and_the_identity_one_goes():
    x = T.dtensor3("x")
    f = check_same_values([x], x.dimshuffle(2, 0, 1).dimshuffle(1, "x", 2, 0), CANON,
                          [rng.standard_normal((2, 3, 4))])
    node, copy = f.maker.fgraph.toposort()  # the output is a view of x: copied
    assert node.op.new_order == (0, "x", 1, 2) and op_names(f) == ["DimShuffle", *COPY]
    f = check_same_values([x], x.T.T, CANON, [rng.standard_normal((2, 3, 4))])
    assert op_names(f) == COPY


def test_dimshuffle_is_lifted_through_elemwise_so_transposes_cancel():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    f = check_same_values([x, y], (T.exp(x.T) + y.T).T, CANON,
                          [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))])
    assert op_names(f) == ["exp", "add"]
    f = check_same_values([x], T.exp(x).T, CANON, [rng.standard_normal((3, 4))])
    assert op_names(f) == ["DimShuffle", "exp"]


def test_dimshuffle_is_not_lifted_when_the_elemwise_result_is_used_twice():
    x = T.dmatrix("x")
    e = T.exp(x)
    f = check_same_values([x], [e.T, e], CANON, [rng.standard_normal((3, 4))])
    assert op_names(f) == ["exp", "DimShuffle", *COPY]  # e.T, a view of the later output e


def test_useless_reshape_and_cast_are_removed():
    x = T.dmatrix("x")
    value = rng.standard_normal((3, 4))
    for expr in (x.reshape(x.shape), x.reshape((x.shape[0], -1)), x.reshape((-1, x.shape[1])),
                 T.cast(x, "float64").reshape((x.shape[0], x.shape[1]))):
        f = check_same_values([x], expr, CANON, [value])
        assert op_names(f) == COPY, op_names(f)
    f = check_same_values([x], x.reshape((x.shape[1], x.shape[0])), CANON, [value])
    assert op_names(f).count("Reshape") == 1


def test_useless_reshape_keeps_the_broadcast_pattern_of_the_reshape():
    r = T.drow("r")
    out = r.reshape((1, r.shape[1]))
    f = check_same_values([r], out, CANON, [np.ones((1, 5))])
    assert "Reshape" not in op_names(f)
    assert f.maker.fgraph.outputs[0].type == out.type


def test_cheap_identities_run_under_fast_compile_too():
    f = function([a], -(-a) * 1, mode=FAST_COMPILE)
    assert op_names(f) == COPY


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8"])
def test_fast_run_keeps_values_of_a_mixed_expression(dtype):
    x = T.vector("x", dtype=dtype)
    y = T.matrix("y", dtype=dtype)
    expr = ((x * 1 + 0) * y - y * 0 + (-(-x))).T.T.dimshuffle(1, 0) / 1
    values = [np.arange(1, 4).astype(dtype), np.arange(6).reshape(2, 3).astype(dtype)]
    f = check_same_values([x, y], expr, FAST_RUN, values, rtol=1e-6)
    assert f.maker.fgraph.outputs[0].type == expr.type


def test_negations_of_unsigned_integers_keep_numpy_wrapping():
    u, i = T.vector("u", dtype="uint8"), T.vector("i", dtype="int16")
    values = [np.array([0, 3, 200], dtype="uint8"), np.array([5, -7, 300], dtype="int16")]
    for expr in (0 - u, i - (-u), i + (-u), (-u) * (-i), (-u) / (-i), -(-u), (u * i) / i):
        check_same_values([u, i], expr, CANON, values)


def _expression(draw, st, x, y, depth):
    """A random expression over matrices ``x`` and ``y`` that stays finite (no 0/0, no overflow)."""
    if depth == 0:
        return draw(st.sampled_from([x, y, x.T.T, T.constant(0.0), T.constant(1.0), T.constant(-2.0)]))
    kind = draw(st.sampled_from(["add", "sub", "mul", "div", "neg", "tanh", "pow", "root",
                                 "transpose", "same"]))
    a = _expression(draw, st, x, y, depth - 1)
    if kind == "neg":
        return -a
    if kind == "tanh":
        return T.tanh(a)
    if kind == "pow":
        return a ** draw(st.sampled_from([1, 2, 3, 4]))
    if kind == "root":
        return (1.5 + T.sqr(a)) ** draw(st.sampled_from([0.5, -1, -2]))
    if kind == "transpose":
        return a.T.T
    if kind == "same":
        return draw(st.sampled_from([a - a, a * a, a + a, a / (1.5 + T.sqr(a))]))
    b = _expression(draw, st, x, y, depth - 1)
    if kind == "div":
        return a / (1.5 + T.sqr(b))
    return {"add": a + b, "sub": a - b, "mul": a * b}[kind]


def test_random_expressions_keep_their_values_under_fast_run():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    values = [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))]

    @given(st.data())
    def check(data):
        expr = T.cast(_expression(data.draw, st, x, y, 4), "float64") * T.ones_like(x)
        f = check_same_values([x, y], expr, FAST_RUN, values, rtol=1e-9, atol=1e-12)
        assert f.maker.fgraph.outputs[0].type == expr.type

    check()


def test_a_cast_to_the_same_dtype_is_removed():
    from arignote.scalar.ops import Cast
    from arignote.tensor.elemwise import Elemwise
    f = check_same_values([a], T.exp(Elemwise(Cast("float64"))(a)), CANON, [_vec()])
    assert op_names(f) == ["exp"]


def test_a_slice_of_a_cast_casts_only_the_slice():
    """DLT's givens: ``T.cast(labels, 'int32')[i*n:(i+1)*n]`` converts n labels, not all."""
    labels, i = T.dvector("labels"), T.lscalar("i")
    f = check_same_values([labels, i], T.cast(labels, "int32")[i * 3:(i + 1) * 3], CANON,
                          [np.arange(12.0), np.int64(2)])
    names = op_names(f)
    assert names.index("Subtensor") < names.index("convert_to_int32")


def test_a_subtensor_is_lifted_through_elemwise_ops_only_when_it_is_their_one_use():
    x = T.dmatrix("x")
    value = rng.standard_normal((4, 5))
    f = check_same_values([x], T.exp(T.tanh(x))[1:, 2], CANON, [value])
    assert op_names(f) == ["Subtensor", "tanh", "exp"]
    e = T.exp(x)
    f = check_same_values([x], [e[1:], e], CANON, [value])
    assert op_names(f) == ["exp", "Subtensor", *COPY]
    f = check_same_values([x], (x + x.T)[0], CANON, [rng.standard_normal((4, 4))])
    assert op_names(f)[-1] == "add"  # x[0] + x.T[0]: one row of each


# ------------------------------------------------------------- allocs read once
def test_the_l2_gradient_allocates_no_array_of_the_weights_shape():
    w = T.dmatrix("w")
    g = T.grad(0.01 * (w ** 2).sum() + T.tanh(w).sum(), w)
    wv = rng.standard_normal((4, 3))
    f = check_same_values([w], g, FAST_RUN, [wv])
    assert "Alloc" not in op_names(f)
    np.testing.assert_allclose(f(wv), 0.02 * wv + 1 - np.tanh(wv) ** 2)


@pytest.mark.parametrize("alloc_first", [True, False])
def test_an_alloc_read_by_an_elemwise_is_replaced_by_its_value(alloc_first):
    x, c = T.dmatrix("x"), T.dscalar("c")
    filled = T.alloc(c, x.shape[0], x.shape[1])
    out = filled * x if alloc_first else x - filled
    xv = rng.standard_normal((3, 2))
    f = check_same_values([x, c], out, FAST_RUN, [xv, 1.5])
    assert "Alloc" not in op_names(f)


def test_an_alloc_whose_length_nothing_vouches_for_is_kept_with_its_check():
    x, n = T.dvector("x"), T.lscalar("n")
    out = T.alloc(2.0, n) * x
    f = function([x, n], out, mode=FAST_RUN)
    assert "Alloc" in op_names(f)
    np.testing.assert_allclose(f(np.ones(3), 3), [2, 2, 2])
    with pytest.raises(ValueError):
        f(np.ones(3), 4)  # without the alloc, 2.0 would broadcast to x silently


def test_scalars_beside_an_alloc_are_computed_before_it():
    x, c = T.dmatrix("x"), T.dscalar("c")
    out = (T.alloc(c, x.shape[0], x.shape[1]) * 2 + 1) * x
    f = check_same_values([x, c], out, FAST_RUN, [rng.standard_normal((2, 3)), 0.5])
    assert "Alloc" not in op_names(f)


def test_a_chain_of_dimshuffles_collapses_in_one_step():
    """One application leaves the input itself when the chain keeps every axis in place, so a
    single walk that does not revisit new nodes (Theano's out2in) ends clean."""
    from arignote.graph import FunctionGraph
    from arignote.tensor.rewrites.canonicalize import local_dimshuffle_merge

    m = T.dmatrix("m")
    chain = m.dimshuffle(0, "x", 1).dimshuffle(2, 0, "x", 1).dimshuffle(1, 0, 2)
    fg = FunctionGraph([m], [chain.dimshuffle(1, 0, 2)])
    (out,) = local_dimshuffle_merge.transform(fg, fg.outputs[0].owner)
    assert out.owner.op.new_order == (1, 0, "x") and out.owner.inputs[0] is fg.inputs[0]
    fg = FunctionGraph([m], [m.T.T])
    assert local_dimshuffle_merge.transform(fg, fg.outputs[0].owner) == [fg.inputs[0]]


@pytest.mark.parametrize("index", [lambda v: v[0], lambda v: v[0:2], lambda v: v[1, ::-1]], ids=["row", "slice", "mixed"])
def test_indexing_moves_into_an_elemwise_of_several_inputs(index):
    a, b, s = T.dmatrix("a"), T.dmatrix("b"), T.dscalar("s")
    values = [np.arange(6.0).reshape(3, 2), np.arange(6.0).reshape(3, 2)[::-1], np.float64(0.5)]
    f = check_same_values([a, b, s], index(T.exp(a + s + b)), CANON, values)
    last = f.maker.fgraph.toposort()[-1]
    assert isinstance(last.op, Elemwise)  # the indexing happens before: only the part read is computed


def test_indexing_stays_after_an_elemwise_with_a_row_broadcast():
    a, r = T.dmatrix("a"), T.drow("r")
    f = check_same_values([a, r], (a * r)[0], CANON, [np.arange(6.0).reshape(3, 2), np.ones((1, 2))])
    assert type(f.maker.fgraph.toposort()[-1].op).__name__ == "Subtensor"


@pytest.mark.parametrize("shapes, build", [
    (((3, 4), (4, 5)), lambda x, y: T.dot(x, y).T),
    (((1, 4), (4, 5)), lambda x, y: T.dot(x, y).T),
    (((3, 4), (4, 1)), lambda x, y: T.dot(x, y).T),
    (((0, 4), (4, 2)), lambda x, y: T.dot(x, y).T),
])
def test_a_transposed_matrix_product_is_the_product_of_the_transposes(shapes, build):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    values = [rng.standard_normal(s) for s in shapes]
    f = check_same_values([x, y], build(x, y), CANON, values)
    names = op_names(f)
    assert names.count("Dot") == 1 and f.maker.fgraph.outputs[0].owner.op.__class__.__name__ == "Dot"
    transposed_inputs = [n.inputs[0] for n in f.maker.fgraph.toposort() if n.op.__class__.__name__ == "DimShuffle"]
    assert set(transposed_inputs) == set(f.maker.fgraph.inputs)


def test_a_transposed_product_used_elsewhere_is_left_alone():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    d = T.dot(x, y)
    f = function([x, y], [d.T, d * 2], mode=CANON)
    assert op_names(f).count("Dot") == 1
    a, b_ = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    first, second = f(a, b_)
    np.testing.assert_allclose(first, (a @ b_).T)
    np.testing.assert_allclose(second, 2 * a @ b_)
