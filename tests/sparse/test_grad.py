"""Finite-difference checks of every sparse gradient (verify_grad_sparse), regular ones
perturbing every entry, structured ones only the stored values; and what grad returns."""
import numpy as np
import pytest

import arignote
from arignote import sparse as S
from arignote import tensor as T
from arignote.gradient import GradientError
from tests.sparse.cases import FORMATS, random_sparse

RNG = np.random.RandomState(5)
DENSE_54 = RNG.uniform(0.5, 1.5, (5, 4))
DENSE_43 = RNG.uniform(-1, 1, (4, 3))
DENSE_44 = RNG.uniform(-1, 1, (4, 4))
ROW_4 = RNG.uniform(0.5, 1.5, 4)
COL_5 = RNG.uniform(0.5, 1.5, 5)


def sp54(fmt, seed=0):
    return random_sparse(fmt, "float64", (5, 4), seed=seed)


# name -> (function, point builder of the format, structured?)
CASES = {
    "dense_from_sparse": (S.dense_from_sparse, lambda f: [sp54(f)], True),
    "dense_from_sparse_regular": (S.DenseFromSparse(structured=False), lambda f: [sp54(f)], False),
    "csr_from_dense": (S.csr_from_dense, lambda f: [DENSE_54], False),
    "csc_from_dense": (S.csc_from_dense, lambda f: [DENSE_54], False),
    "csm_data": (lambda x: S.csm_data(x) * 2, lambda f: [sp54(f)], True),
    "transpose": (S.transpose, lambda f: [sp54(f)], False),
    "neg": (S.neg, lambda f: [sp54(f)], False),
    "add_ss": (S.add, lambda f: [sp54(f), sp54(f, 1)], False),
    "sub_ss": (S.sub, lambda f: [sp54(f), sp54(f, 1)], False),
    "add_sd": (S.add, lambda f: [sp54(f), DENSE_54], True),
    "sub_ds": (S.sub, lambda f: [DENSE_54, sp54(f)], True),
    "mul_ss": (S.mul, lambda f: [sp54(f), sp54(f, 1)], False),
    "mul_sd": (S.mul, lambda f: [sp54(f), DENSE_54], True),
    "mul_scalar": (lambda x, y: S.mul(x, y.sum()), lambda f: [sp54(f), ROW_4], True),
    "mul_row": (lambda x, y: x * y.dimshuffle("x", 0), lambda f: [sp54(f), ROW_4], True),
    "col_scale": (S.col_scale, lambda f: [sp54(f), ROW_4], True),
    "row_scale": (S.row_scale, lambda f: [sp54(f), COL_5], True),
    "structured_add_s_v": (S.structured_add_s_v, lambda f: [sp54(f), ROW_4], True),
    "add_s_s_data": (lambda x: S.add_s_s_data(x, x * 3.0), lambda f: [sp54(f)], True),
    "sp_sum": (S.sp_sum, lambda f: [sp54(f)], False),
    "sp_sum_0": (lambda x: S.sp_sum(x, 0), lambda f: [sp54(f)], False),
    "sp_sum_1_structured": (lambda x: S.sp_sum(x, 1, sparse_grad=True), lambda f: [sp54(f)], True),
    "structured_dot": (S.structured_dot, lambda f: [sp54(f), DENSE_43], True),
    "structured_dot_ss": (lambda x: S.structured_dot(x, x.T), lambda f: [sp54(f)], True),
    "dot_sd": (S.dot, lambda f: [sp54(f), DENSE_43], False),
    "dot_ds": (S.dot, lambda f: [DENSE_43.T, sp54(f).T], False),
    "dot_ss": (lambda x, y: S.dot(x, y.T), lambda f: [sp54(f), sp54(f, 1)], False),
    "dot_vector": (S.dot, lambda f: [sp54(f), ROW_4], False),
    "true_dot": (S.true_dot, lambda f: [sp54(f), DENSE_43], False),
    "true_dot_ss": (lambda x, y: S.true_dot(x, y.T), lambda f: [sp54(f), sp54(f, 1)], False),
    "sampling_dot": (lambda x, y: S.sampling_dot(x, y, sp54("csr")), lambda f: [DENSE_54, DENSE_44], True),
    "hstack": (lambda x, y: S.hstack([x, y]), lambda f: [sp54(f), sp54(f, 1)], False),
    "vstack": (lambda x, y: S.vstack([x, y], format="csr"), lambda f: [sp54(f), sp54(f, 1)], False),
    "diag": (S.diag, lambda f: [random_sparse(f, "float64", (4, 4))], False),
    "square_diagonal": (S.square_diagonal, lambda f: [ROW_4], False),
    "get_item_list": (lambda x: x[[1, 4, 1]], lambda f: [sp54(f)], False),
    "get_item_2lists": (lambda x: x[[1, 4, 1], [0, 3, 0]], lambda f: [sp54(f)], False),
    "cast": (lambda x: S.cast(x, "float64"), lambda f: [sp54(f).astype("float32")], False),
    "remove0": (S.remove0, lambda f: [sp54(f)], False),
    "ensure_sorted_indices": (S.ensure_sorted_indices, lambda f: [sp54(f)], False),
    "sp_ones_like_times": (lambda x, d: S.sp_ones_like(x) * d, lambda f: [sp54(f), DENSE_54], True),
}
CASES.update({name: (getattr(S, name), lambda f: [sp54(f) * 0.5], True) for name in
              ("sqr", "sqrt", "sin", "tanh", "arcsin", "arctanh", "log1p", "expm1", "structured_exp",
               "structured_log", "structured_sigmoid")})
CASES["structured_pow"] = (lambda x: S.structured_pow(x, 3), lambda f: [sp54(f)], True)
CASES["structured_maximum"] = (lambda x: S.structured_maximum(x, 0.9), lambda f: [sp54(f)], True)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("fmt", FORMATS)
def test_gradients_match_finite_differences(name, fmt):
    fn, point, structured = CASES[name]
    S.verify_grad_sparse(fn, point(fmt), structured=structured, rng=np.random.RandomState(1), n_tests=1)


def test_verify_grad_sparse_catches_a_wrong_gradient():
    # the structured gradient of dense_from_sparse is not its regular one
    with pytest.raises(GradientError):
        S.verify_grad_sparse(S.dense_from_sparse, [sp54("csr")], structured=False,
                             rng=np.random.RandomState(1), n_tests=1)


def test_gradient_types():
    x, w = S.csr_dmatrix("x"), T.dmatrix("w")
    cost = S.structured_dot(x, w).sum()
    gx, gw = arignote.grad(cost, [x, w])
    assert gx.type == x.type and gw.type == w.type  # structured: sparse for the sparse input
    gx_dot = arignote.grad(S.dot(x, w).sum(), x)
    assert isinstance(gx_dot.type, T.TensorType)  # the regular dot's is dense, as in Theano
    f = arignote.function([x, w], [gx, gw])
    xv, wv = sp54("csr"), DENSE_43
    gxv, gwv = f(xv, wv)
    assert gxv.nnz == xv.nnz  # only the stored positions
    np.testing.assert_allclose(gxv.toarray(), (np.ones((5, 3)) @ wv.T) * (xv.toarray() != 0))
    np.testing.assert_allclose(gwv, xv.T @ np.ones((5, 3)))


def test_a_disconnected_sparse_input_gets_an_empty_sparse_zero():
    x, y = S.csc_dmatrix("x"), S.csc_dmatrix("y")
    g = arignote.grad(S.sp_sum(x), y, disconnected_inputs="ignore")
    assert g.type == y.type
    zero = arignote.function([y], g)(sp54("csc"))
    assert zero.nnz == 0 and zero.shape == (5, 4)


def test_sparse_and_dense_gradient_terms_accumulate():
    x = S.csr_dmatrix("x")
    # a structured sparse term (only the stored positions) and a dense one (everywhere)
    cost = S.sp_sum(x, sparse_grad=True) * 2.0 + S.dot(x, np.ones((4, 1))).sum()
    g = arignote.grad(cost, x)
    got = arignote.function([x], g)(sp54("csr"))
    np.testing.assert_allclose(np.asarray(got), np.full((5, 4), 1.0) + 2.0 * (sp54("csr").toarray() != 0))
