"""Products as sign-carrying trees (mul_trees.py) and the rewrite local_sigm_times_exp:
``exp(a) * sigmoid(-a)`` -> ``sigmoid(a)`` anywhere in a product, checked against numpy
values (also where the written-out product overflows to nan) and by its gradient."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

import arignote
from arignote import tensor as T
from arignote.compile.mode import get_default_mode
from arignote.gradient import verify_grad
from arignote.graph.traversal import is_same_graph
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.nnet import sigmoid
from arignote.tensor.nnet.mul_trees import (compute_mul, is_1pexp, is_exp, is_neg, parse_mul_tree,
                                            perform_sigm_times_exp, simplify_mul)

x, y, z = T.vectors("x", "y", "z")


def np_sigmoid(v):
    return expit(v)


def test_parse_mul_tree_folds_negations_into_flags():
    assert parse_mul_tree(x * y) == [False, [[False, x], [False, y]]]
    assert parse_mul_tree(-(x * y)) == [True, [[False, x], [False, y]]]
    assert parse_mul_tree(T.neg(-x)) == [False, x]
    assert parse_mul_tree((x * -y) * z) == [False, [[False, [[False, x], [True, y]]], [False, z]]]
    assert parse_mul_tree(x + y)[1] is not None and parse_mul_tree(x + y)[0] is False


def test_compute_mul_rebuilds_the_tree():
    expr = (x * y) * -z
    tree = parse_mul_tree(expr)
    assert parse_mul_tree(compute_mul(tree)) == tree
    assert is_same_graph(compute_mul(tree), expr)
    with pytest.raises(ValueError, match="simplify_mul"):
        compute_mul([False, None])


def test_simplify_mul_drops_ones_and_keeps_their_signs():
    assert simplify_mul([False, [[True, None], [False, x]]]) == [True, x]
    assert simplify_mul([True, [[True, None], [False, None]]]) == [False, None]
    assert simplify_mul([False, [[False, [[True, None], [False, x]]], [False, y]]]) == \
        [False, [[True, x], [False, y]]]


def test_is_neg_and_is_exp():
    assert is_neg(-x) is x
    assert is_neg(-1 * x) is x and is_neg(x * -1) is x
    assert is_neg(2 * x) is None and is_neg(x) is None
    assert is_exp(T.exp(x)) == (False, x)
    assert is_exp(-T.exp(x)) == (True, x)
    assert is_exp(T.log(x)) is None


def test_is_1pexp_recognises_one_plus_exp_only():
    assert is_1pexp(1 + T.exp(x), False) == (False, x)
    assert is_1pexp(T.exp(x) + 1) == (False, x)
    negated, arg = is_1pexp(1 + T.exp(-x))
    assert not negated and is_same_graph(arg, -x)
    for other in (1 - T.exp(x), 2 + T.exp(x), T.exp(x) - 1, -1 + T.exp(x), 1 + 2 * T.exp(x), T.exp(x) + y):
        assert is_1pexp(other, False) is None
    # A 1 computed from constants counts only when asked to look past plain constants.
    one = T.constant(0.5) + T.constant(0.5)
    assert is_1pexp(one + T.exp(x), True) is None
    assert is_1pexp(one + T.exp(x), False) == (False, x)


def _cancelled(expr, expected):
    tree = parse_mul_tree(expr)
    assert perform_sigm_times_exp(tree)
    return is_same_graph(compute_mul(simplify_mul(tree)), compute_mul(parse_mul_tree(expected)))


def test_perform_sigm_times_exp_cancels_pairs_and_keeps_the_sign():
    assert _cancelled(sigmoid(x) * T.exp(-x), sigmoid(-x))
    assert _cancelled(T.exp(x) * sigmoid(-x), sigmoid(x))
    assert _cancelled(-x * sigmoid(x) * (y * T.exp(-x)), -x * sigmoid(-x) * y)
    assert _cancelled(T.exp(-x) * -T.exp(-x) * (-sigmoid(x) * -sigmoid(x)), -sigmoid(-x) * sigmoid(-x))
    # the sigmoid one pair makes cancels against a later exp
    assert _cancelled(-T.exp(x) * -sigmoid(-x) * -T.exp(-x), -sigmoid(-x))
    unpaired = sigmoid(x) * T.exp(x) * y
    tree = parse_mul_tree(unpaired)
    assert not perform_sigm_times_exp(tree)
    assert tree == parse_mul_tree(unpaired)


def _scalar_ops(f) -> list:
    return [n.op.scalar_op.name for n in f.maker.fgraph.toposort() if isinstance(n.op, Elemwise)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_rewrite_removes_the_exp_and_the_overflow(dtype):
    v = T.vector("v", dtype=dtype)
    w = T.vector("w", dtype=dtype)
    values = np.array([-800, -30, -1, 0, 0.5, 3, 30, 800], dtype=dtype)
    other = np.linspace(-2, 2, values.size).astype(dtype)
    exprs = [sigmoid(-v) * T.exp(v), -(sigmoid(v) * w) * T.exp(-v), T.exp(v) * w * sigmoid(-v) * 3]
    expected = [np_sigmoid(values), -np_sigmoid(-values) * other, np_sigmoid(values) * other * 3]
    mode = get_default_mode().excluding("fusion")
    f = arignote.function([v, w], exprs, mode=mode, on_unused_input="ignore")
    assert "exp" not in _scalar_ops(f)
    with np.errstate(over="ignore", invalid="ignore"):
        for out, ref in zip(f(values, other), expected):
            assert out.dtype == dtype and out.shape == values.shape
            np.testing.assert_allclose(out, ref.astype(dtype), rtol=1e-5, atol=1e-30)
        plain = arignote.function([v], exprs[0], mode=get_default_mode().excluding("local_sigm_times_exp"))
        assert np.isnan(plain(values)).any()  # what the rewrite saves the user from


def test_rewrite_keeps_the_gradient():
    verify_grad(lambda a, b: sigmoid(-a) * T.exp(a) * b, [np.array([-2.0, 0.3, 1.7]), np.array([0.5, -1.0, 2.0])],
                mode=get_default_mode())


def test_products_without_a_pair_are_left_alone():
    f = arignote.function([x], sigmoid(x) * T.exp(x), mode=get_default_mode().excluding("fusion"))
    assert "exp" in _scalar_ops(f)
