"""grad(): its arguments, its errors, dtypes, and gradients at awkward points."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import polygamma

import arignote
from arignote import function, shared, tensor as T
from arignote.gradient import DisconnectedInputError, GradientError, Rop, grad, total_grad, verify_grad
from arignote.graph.types import DisconnectedType
from arignote.scalar.dtypes import upcast
from arignote.scalar.ops import ScalarOp
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.grad import elemwise


def test_exported_where_theano_had_them():
    assert arignote.grad is grad and T.grad is grad
    assert arignote.verify_grad is verify_grad
    for name in ("Lop", "Rop", "jacobian", "hessian"):
        assert getattr(arignote, name) is getattr(arignote.gradient, name)
        assert getattr(T, name) is getattr(arignote.gradient, name)


def test_single_and_list_wrt():
    x, y = T.dvector("x"), T.dscalar("y")
    cost = (x ** 2).sum() * y
    gx = grad(cost, x)
    gx2, gy = grad(cost, [x, y])
    f = function([x, y], [gx, gx2, gy])
    xv = np.array([1.0, -2.0, 3.0])
    a, b, c = f(xv, 2.0)
    np.testing.assert_allclose(a, 4 * xv)
    np.testing.assert_allclose(b, 4 * xv)
    np.testing.assert_allclose(c, (xv ** 2).sum())


def test_tuple_wrt_gives_a_tuple():
    x = T.dscalar("x")
    assert isinstance(grad(x * 2, (x,)), tuple)
    with pytest.raises(TypeError, match="is a set"):
        grad(x * 2, {x})


def test_cost_must_be_a_scalar():
    x = T.dvector("x")
    with pytest.raises(TypeError, match=r"1 dimensions, but must be a scalar.*sum\(\)"):
        grad(x * 2, x)


def test_integer_cost_and_wrt_as_theano():
    # Theano's rule: the gradient of an integer is a float; an integer-valued result passes
    # no gradient back (zeros), so d(2n)/dn is 0, but dn/dn is 1.
    n = T.iscalar("n")
    g = grad(n * 2, n)
    assert g.dtype == arignote.config.floatX
    assert function([n], g, on_unused_input="ignore")(3) == 0.0
    assert function([n], grad(n, n), on_unused_input="ignore")(12) == 1.0
    assert function([n], grad(T.cast(n, "float32") * 2, n), on_unused_input="ignore")(3) == 2.0
    # A division of two integers is a step function: no gradient.
    m = T.iscalar("m")
    assert function([n, m], grad(n / m, [n, m]), on_unused_input="ignore")(3, 2) == [0.0, 0.0]


def test_integer_input_differentiated_as_a_float():
    # An op computing floats from an integer input passes it the float gradient (Theano's
    # test_grad_int: the same as with a float input of the same values).
    rng = np.random.RandomState(5)
    xv = (rng.randn(5, 3) * 127).astype("int32")
    wv, bv = rng.randn(3, 4), rng.randn(4)
    W, b = T.dmatrix("W"), T.dvector("b")

    def gradient_of(X):
        cost = T.nnet.sigmoid(T.dot(X, W) + b).sum()
        return function([X, W, b], grad(cost, X))

    from_int = gradient_of(T.imatrix("X"))(xv, wv, bv)
    from_float = gradient_of(T.dmatrix("X"))(xv.astype("float64"), wv, bv)
    assert from_int.dtype == np.float64
    np.testing.assert_allclose(from_int, from_float)
    # Theano's DimShuffle passes an integer no gradient: a broadcast integer scalar gets zeros.
    x, k = T.dvector("x"), T.iscalar("k")
    assert function([x, k], grad((x * k).sum(), k), on_unused_input="ignore")(np.ones(2), 3) == 0.0


def test_wrt_must_be_symbolic():
    x = T.dvector("x")
    with pytest.raises(TypeError, match="wrt must hold symbolic tensor variables"):
        grad(x.sum(), np.ones(3))


def test_integer_intermediates_carry_no_gradient():
    x = T.dvector("x")
    through_int = T.cast(T.cast(x, "int64"), "float64").sum() + T.cast(T.argmax(x), "float64")
    g = grad(through_int, x)  # connected, so no DisconnectedInputError: zeros
    np.testing.assert_array_equal(function([x], g)(np.array([1.5, 2.5])), [0.0, 0.0])
    mixed = (x * T.cast(T.floor(x), "int8")).sum()
    np.testing.assert_allclose(function([x], grad(mixed, x))(np.array([1.5, 2.5])), [1.0, 2.0])


def test_disconnected_inputs():
    x, y = T.dvector("x"), T.dvector("y")
    cost = (x ** 2).sum()
    with pytest.raises(DisconnectedInputError, match="does not depend on 'y'"):
        grad(cost, [x, y])
    with pytest.warns(UserWarning, match="does not depend on 'y'"):
        gx, gy = grad(cost, [x, y], disconnected_inputs="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gx, gy = grad(cost, [x, y], disconnected_inputs="ignore")
    np.testing.assert_array_equal(function([y], gy)(np.ones(2)), [0.0, 0.0])
    assert grad(cost, y, disconnected_inputs="ignore", return_disconnected="none") is None
    with pytest.raises(ValueError, match="disconnected_inputs='maybe'"):
        grad(cost, x, disconnected_inputs="maybe")


def test_consider_constant():
    x = T.dscalar("x")
    y = x ** 2
    cost = y * x
    g_full = grad(cost, x)
    g_held = grad(cost, x, consider_constant=[y])
    f = function([x], [g_full, g_held])
    full, held = f(3.0)
    assert full == pytest.approx(27.0) and held == pytest.approx(9.0)
    with pytest.raises(DisconnectedInputError):
        grad(y * 2, x, consider_constant=[y])


def test_known_grads():
    x = T.dvector("x")
    h = T.exp(x)
    cost = h.sum()
    g_h = T.dvector("g_h")
    gx = grad(None, x, known_grads={h: g_h})
    xv, gv = np.array([0.0, 1.0]), np.array([2.0, 3.0])
    np.testing.assert_allclose(function([x, g_h], gx)(xv, gv), gv * np.exp(xv))
    # h is on the cost's path: its known gradient replaces the ones the cost sends (Theano's).
    both = grad(cost, x, known_grads={h: g_h})
    np.testing.assert_allclose(function([x, g_h], both)(xv, gv), gv * np.exp(xv))
    with pytest.raises(ValueError, match="give a cost, or known_grads"):
        grad(None, x)
    with pytest.raises(ValueError, match="has 2 dimensions"):
        grad(None, x, known_grads={h: T.dmatrix()})
    with pytest.raises(TypeError, match="is int64: a gradient is a float"):
        grad(None, x, known_grads={h: T.lvector()})


_KX, _KG, _KH = T.dvector("x"), T.dvector("g"), T.dvector("h")
_K2, _K3, _K5 = 2 * _KX, 3 * _KX, 5 * _KX
_KEXP = T.exp(_K2)
_KCOST = (_KX ** 2).sum()
_KSIG = T.nnet.sigmoid(_KX)
_XV, _GV, _HV = np.array([1.0, -3.0]), np.array([10.0, 20.0]), np.array([100.0, 300.0])


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


# d cost / d x where known_grads fixes the gradient of variables on the cost's path; the
# expected values are what real Theano 1.0.5 gave (checked), written out with numpy.
@pytest.mark.parametrize("cost, wrt, known, expected", [
    (_K2.sum(), _KX, {_K2: _KG}, 2 * _GV),  # replaces the ones, does not add to them
    (None, _KX, {_K2: _KG}, 2 * _GV),
    (T.sum(_K2 * _KX), _KX, {_K2: _KG}, 2 * _GV + 2 * _XV),  # the direct path to x still adds
    (T.sum(_KEXP + _K2), _KX, {_K2: _KG, _KEXP: _KH}, 2 * _GV),  # 2x's own, not exp's
    (T.sum(_KEXP + _K2), _KX, {_KEXP: _KH}, 2 * (_HV * np.exp(2 * _XV) + 1)),
    (T.sum(_K3 * _K5), _KX, {_K3: _KG, _K5: _KH}, 3 * _GV + 5 * _HV),
    (_KCOST, _KX, {_KCOST: T.constant(3.0)}, 3 * 2 * _XV),  # the cost's known gradient
    (_KCOST, _KX, {_KX: _KG}, _GV),  # a wrt with a known gradient gets exactly it
    (_KCOST, _KX, {_K3: _KG}, 2 * _XV + 3 * _GV),  # off the cost's path: adds
    # log(sigmoid(x)) has a stable gradient that skips the sigmoid: not with its gradient given.
    (T.log(_KSIG).sum(), _KX, {_KSIG: _KG}, _GV * _sigmoid(_XV) * (1 - _sigmoid(_XV))),
])
def test_known_grads_replace_the_gradient_through_their_variable(cost, wrt, known, expected):
    gx = grad(cost, wrt, known_grads=known)
    got = function([_KX, _KG, _KH], gx, on_unused_input="ignore")(_XV, _GV, _HV)
    np.testing.assert_allclose(got, expected)


def test_known_grads_of_both_an_intermediate_and_wrt():
    gx, gy = grad(T.sum(_K2 * _KX), [_KX, _K2], known_grads={_K2: _KG})
    got = function([_KX, _KG], [gx, gy])(_XV, _GV)
    np.testing.assert_allclose(got[0], 2 * _GV + 2 * _XV)
    np.testing.assert_allclose(got[1], _GV)


def test_total_grad_adds_what_flows_into_a_given_output():
    """total_grad (for ops of several outputs) sums where grad's known_grads replaces."""
    given = {_K2: _KG, _KEXP: _KH}
    f = function([_KX, _KG, _KH], [total_grad(_KX, given), grad(None, _KX, known_grads=given)])
    total, fixed = f(_XV, _GV, _HV)
    np.testing.assert_allclose(total, 2 * (_GV + _HV * np.exp(2 * _XV)))
    np.testing.assert_allclose(fixed, 2 * _GV)


def test_rop_of_expressions_computed_from_one_another():
    v = T.dvector("v")
    r1, r2 = Rop([_KEXP, 3 * _KEXP], _KX, v)
    got = function([_KX, v], [r1, r2])(_XV, _GV)
    np.testing.assert_allclose(got[0], 2 * np.exp(2 * _XV) * _GV)
    np.testing.assert_allclose(got[1], 6 * np.exp(2 * _XV) * _GV)


def test_known_disconnected_gradient_cuts_the_path_through_its_variable():
    cut = {_K2: arignote.gradient.disconnected_type()}
    with pytest.raises(DisconnectedInputError, match="'x'"):
        grad(_K2.sum(), _KX, known_grads=cut)
    gx = grad(_K2.sum(), _KX, known_grads=cut, disconnected_inputs="ignore")
    np.testing.assert_allclose(function([_KX], gx)(_XV), np.zeros(2))
    gx = grad(T.sum(_K2 * _KX), _KX, known_grads=cut)  # the path past it remains
    np.testing.assert_allclose(function([_KX], gx)(_XV), 2 * _XV)


def test_grad_of_shared_variable_and_wrt_equal_cost():
    w = shared(np.array([1.0, 2.0]), name="w")
    cost = (w ** 3).sum()
    np.testing.assert_allclose(function([], grad(cost, w))(), 3 * np.array([1.0, 4.0]))
    s = T.dscalar("s")
    assert function([s], grad(s, s), on_unused_input="ignore")(5.0) == 1.0


@pytest.mark.parametrize("build", [
    lambda x: (T.exp(x) * 2.5 + 1).sum(),
    lambda x: T.nnet.softmax(x.dimshuffle("x", 0)).max(),
    lambda x: T.dot(x, x) / T.cast(x.shape[0], "float64"),
    lambda x: T.log1p(x ** 2).mean(),
    lambda x: T.nnet.binary_crossentropy(T.nnet.sigmoid(x), 0.5).sum(),
])
def test_grads_of_float32_variables_are_float32(build):
    x = T.fvector("x")
    g = grad(build(x), x)
    assert g.dtype == "float32"
    assert g.type == x.type
    assert function([x], g)(np.ones(3, "float32")).dtype == np.float32


def test_gradient_keeps_the_broadcastable_pattern():
    row = T.TensorType("float64", (True, False))("row")
    m = T.dmatrix("m")
    g = grad((row * m).sum(), row)
    assert g.type == row.type
    out = function([row, m], g)(np.ones((1, 3)), np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(out, [[3.0, 5.0, 7.0]])


def test_prod_with_zeros():
    for point in ([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]], [[0.0, 0.0, 1.0], [2.0, 3.0, 4.0]]):
        verify_grad(lambda x: x.prod(axis=1), [np.array(point)])
        verify_grad(lambda x: x.prod(), [np.array(point[0])])
    x = T.dvector("x")
    g = function([x], grad(x.prod(), x))
    np.testing.assert_allclose(g(np.array([0.0, 2.0, 3.0])), [6.0, 0.0, 0.0])
    np.testing.assert_allclose(g(np.array([0.0, 2.0, 0.0])), [0.0, 0.0, 0.0])


def test_max_gradient_goes_to_the_maximum():
    x = T.dmatrix("x")
    g = function([x], grad(x.max(axis=1).sum(), x))
    np.testing.assert_array_equal(g(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])),
                                  [[0, 1, 0], [1, 0, 0]])


def test_psi_gradient_is_trigamma_and_its_own_is_refused():
    x = T.dvector("x")
    g = grad(T.psi(x).sum(), x)
    xv = np.array([0.5, 2.0])
    np.testing.assert_allclose(function([x], g)(xv), polygamma(1, xv))
    with pytest.raises(NotImplementedError, match="gradient of tri_gamma"):
        grad(g.sum(), x)


def test_op_without_gradient_is_named():
    x = T.dvector("x")
    op = Elemwise(ScalarOp("negated_without_rule", 1, np.negative, upcast))
    with pytest.raises(NotImplementedError,
                       match="no gradient is defined for the elementwise op negated_without_rule"):
        grad(op(x).sum(), x)


def test_verify_grad_reports_a_wrong_gradient(monkeypatch):
    monkeypatch.setitem(elemwise.RULES, "sin", lambda inputs, out, gz: [gz * T.cos(inputs[0]) * 1.01])
    with pytest.raises(GradientError, match=r"input 0 \(shape \(3,\)\).*index \(\d,\)"):
        verify_grad(T.sin, [np.array([0.1, 0.2, 0.3])])


def test_verify_grad_refuses_integer_points():
    with pytest.raises(TypeError, match="point 0 is int64"):
        verify_grad(T.sin, [np.array([1, 2])])


def test_verify_grad_integer_output_has_a_zero_gradient():
    """Theano's verify_grad takes an integer-valued fun (argmax, searchsorted): its symbolic
    gradient must be zero, as the finite differences of its float projection are."""
    point = [np.array([[0.33, 0.97, 0.15], [0.84, 0.26, 0.55]])]
    verify_grad(lambda x: T.argmax(x, axis=1), point)
    verify_grad(lambda x: T.cast(T.floor(x * 10), "int32"), point)
    # The projection still sees the values: a jump inside the step is a mismatch.
    with pytest.raises(GradientError, match="numeric"):
        verify_grad(lambda x: T.cast(T.floor(x * 10), "int32"), [np.array([0.33])], eps=0.05)


@pytest.mark.parametrize("name", ["exp", "tanh", "sqr"])
def test_verify_grad_of_in_place_ops_leaves_the_point_alone(name):
    """As Theano's: ``fun`` may overwrite its input in place (``exp_inplace``); each call works
    on its own copy, so the finite differences see the point, and the caller's array is kept."""
    from arignote.tensor import inplace
    point = np.array([[1.5, 1.48, -4.78], [2.05, 0.51, -1.59]])
    kept = point.copy()
    verify_grad(getattr(inplace, f"{name}_inplace"), [point])
    np.testing.assert_array_equal(point, kept)


def test_verify_grad_float32():
    verify_grad(lambda x: T.tanh(x) * 2, [np.linspace(-1, 1, 4).astype("float32")])


def test_gamma_and_chi2sf_gradients():
    """Theano's tensor.gamma and tensor.chi2sf: d gamma = gamma * psi; d chi2sf/dx is minus
    the chi-squared density (scipy's); the degrees of freedom have no gradient."""
    from scipy import stats
    x, k = T.dvector("x"), T.dvector("k")
    xv, kv = np.array([0.4, 1.5, 3.2, 7.0]), np.array([1.0, 2.0, 5.0, 3.0])
    verify_grad(T.gamma, [xv])
    verify_grad(lambda a: T.chi2sf(a, T.constant(kv)), [xv])
    g = function([x, k], grad(T.chi2sf(x, k).sum(), x))(xv, kv)
    np.testing.assert_allclose(g, -stats.chi2.pdf(xv, kv), rtol=1e-10)
    with pytest.raises(arignote.gradient.NullTypeGradError, match="chi2sf"):
        grad(T.chi2sf(x, k).sum(), k)


def test_verify_grad_float32_sums_the_cost_in_float64():
    # Theano's projection is float64 (cast_to_output_type=False): summed in float32, this
    # cost (~1e5) rounds by ~6e-3, which divided by the 2e-3 step is far above the tolerance.
    point = np.linspace(50, 150, 1000).astype("float32")
    verify_grad(lambda x: x * 3, [point], rng=np.random.RandomState(0))
    with pytest.raises(GradientError, match="input 0"):
        verify_grad(lambda x: x * 3, [point], rng=np.random.RandomState(0), cast_to_output_type=True)


def test_verify_grad_float32_still_catches_a_wrong_gradient(monkeypatch):
    monkeypatch.setitem(elemwise.RULES, "sin", lambda inputs, out, gz: [gz * T.cos(inputs[0]) * 1.05])
    with pytest.raises(GradientError, match="input 0"):
        verify_grad(T.sin, [np.linspace(-1, 1, 50).astype("float32")])


def test_composite_gradient_stops_at_its_inputs():
    # exp(x) * y + sin(x) with y = dot(x, x): the fused chain's gradient reaches x once
    # directly and once through y's node, which the outer backpropagation differentiates;
    # going on through y inside the composite's rule counted that path twice.
    from tests.gradient.cases import _composite
    x = T.dvector("x")
    point = np.array([0.1, 0.5, -0.3])
    fused = grad(_composite(x, T.dot(x, x)).sum(), x)
    plain = grad((T.exp(x) * T.dot(x, x) + T.sin(x)).sum(), x)
    np.testing.assert_allclose(function([x], fused)(point), function([x], plain)(point))
    verify_grad(lambda v: _composite(v, T.dot(v, v)), [point])


def test_op_grad_method_uses_the_registered_rule():
    x, y, g = T.dvector("x"), T.dvector("y"), T.dvector("g")
    gx, gy = T.mul.grad([x, y], [g])  # Theano's Op.grad(inputs, output_grads)
    xv, yv, gv = np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([0.5, 2.0])
    got = function([x, y, g], [gx, gy])(xv, yv, gv)
    np.testing.assert_allclose(got[0], gv * yv)
    np.testing.assert_allclose(got[1], gv * xv)


def test_op_grad_method_never_returns_none():
    i, g = T.ivector("i"), T.dvector("g")
    grads = T.sgn.grad([i], [g])  # an integer input has no gradient
    assert len(grads) == 1 and isinstance(grads[0].type, DisconnectedType)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_numeric_grad_matches_the_analytic_gradient(dtype):
    from arignote.gradient import numeric_grad
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3)).astype(dtype), rng.normal(size=4).astype(dtype)

    def f(x, y):
        return np.sum(np.sin(x)) * np.sum(y ** 2)

    ng = numeric_grad(f, [a, b])
    assert len(ng.gf) == 2 and ng.gf[0].shape == (2, 3) and ng.gf[1].shape == (4,)
    expected = [np.cos(a) * np.sum(b ** 2), np.sum(np.sin(a)) * 2 * b]
    tol = 1e-5 if dtype == "float64" else 5e-2
    for got, want in zip(ng.gf, expected):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert numeric_grad.type_eps[dtype] == {"float64": 1e-7, "float32": 3e-4}[dtype]
    single = numeric_grad(lambda x: np.sum(x ** 3), a.astype("float64"))
    np.testing.assert_allclose(single.gf, 3 * a.astype("float64") ** 2, rtol=1e-5, atol=1e-5)
    # max_err: the worst element of the smaller of abs_err/abs_tol and rel_err/rel_tol
    wrong = [expected[0], expected[1].copy()]
    wrong[1][2] += 1.0
    point, pos, abs_err, rel_err = ng.max_err(wrong, 1e-4, 1e-4)
    assert (point, pos) == (1, 2) and abs_err == pytest.approx(1.0, abs=tol)
    abs_e, rel_e = numeric_grad.abs_rel_err(np.array([1.0, 0.0]), np.array([1.5, 0.0]))
    np.testing.assert_allclose(abs_e, [0.5, 0.0])
    np.testing.assert_allclose(rel_e, [0.2, 0.0])


def test_numeric_grad_refuses_integer_points():
    from arignote.gradient import numeric_grad
    with pytest.raises(TypeError, match="point 0 is int64"):
        numeric_grad(np.sum, [np.array([1, 2])])
