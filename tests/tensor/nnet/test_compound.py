"""Theano's compound nnet ops (tensor.nnet.compound) against numpy references: softmax with
bias, the softmax gradient op, the one-hot softmax cross-entropy with its argmax and its
gradient op, the categorical one-hot cross-entropy and its gradient op. Shapes, dtypes
(Theano's: outputs in x's float dtype, the argmax in the labels' dtype), infer_shape,
finite-difference gradients, and errors naming the variable. Each value is checked twice:
compiled (the node lowered to arignote's composition) and by the op's own ``perform``."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.special as sp

import arignote
from arignote import tensor as T
from arignote.compile.mode import Mode
from arignote.gradient import verify_grad
from arignote.graph.traversal import io_toposort
from arignote.tensor import nnet
from tests.utils import assert_matches, check_infer_shape, run, value

SHAPES = [(1, 1), (3, 4), (6, 2), (2, 7)]
LABEL_DTYPES = ["uint8", "int8", "int32", "int64", "uint64"]
COMPOUND = (nnet.SoftmaxWithBias, nnet.SoftmaxGrad, nnet.CrossentropySoftmaxArgmax1HotWithBias,
            nnet.CrossentropySoftmax1HotWithBiasDx, nnet.CrossentropyCategorical1Hot,
            nnet.CrossentropyCategorical1HotGrad)


@pytest.fixture(params=["lowered", "perform"])
def mode(request):
    """The default compilation (the op becomes its composition), or no rewrites (perform)."""
    return None if request.param == "lowered" else Mode(optimizer=None)


def _labels(rows, cols, dtype="int64", seed=0):
    return np.random.default_rng(seed).integers(0, cols, rows).astype(dtype)


def _probabilities(shape, seed=0):
    p = np.random.default_rng(seed).random(shape) + 0.1
    return p / p.sum(axis=1, keepdims=True)


def _softmax_grad_ref(dy, sm, axis):
    return dy * sm - (dy * sm).sum(axis=axis, keepdims=True) * sm


def _dx_ref(dy, sm, y):
    dy = np.broadcast_to(np.reshape(dy, -1), (sm.shape[0],))
    onehot = np.eye(sm.shape[1])[y]
    return dy[:, None] * (sm - onehot)


# ---------------------------------------------------------------- SoftmaxWithBias
@pytest.mark.parametrize("x_dtype, b_dtype, out_dtype", [("float64", "float64", "float64"),
                                                          ("float32", "float32", "float32"),
                                                          ("float32", "float64", "float32"),
                                                          ("int32", "float64", "float64")])
@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_with_bias_matches_scipy(shape, x_dtype, b_dtype, out_dtype, mode):
    xv, bv = value(shape).astype(x_dtype), value(shape[1:]).astype(b_dtype)
    x, b = T.matrix("x", dtype=x_dtype), T.vector("b", dtype=b_dtype)
    out = nnet.softmax_with_bias(x, b)
    assert isinstance(out.owner.op, nnet.SoftmaxWithBias) and out.dtype == out_dtype
    expected = sp.softmax(xv.astype("float64") + bv.astype("float64"), axis=1).astype(out_dtype)
    assert_matches(run([x, b], out, xv, bv, mode=mode), expected)
    check_infer_shape([x, b], out, [xv, bv])


@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_with_bias_gradients(shape):
    verify_grad(nnet.softmax_with_bias, [value(shape) / 5, value(shape[1:]) / 5], n_tests=1)
    # Theano's test: one column of the output at a time.
    verify_grad(lambda a, b: nnet.SoftmaxWithBias()(a, b)[:, 0], [value(shape) / 5, value(shape[1:])], n_tests=1)


def test_softmax_with_bias_errors_name_the_inputs(mode):
    x, b = T.matrix("x"), T.vector("b")
    with pytest.raises(TypeError, match="softmax_with_bias expects a matrix and a vector of reals.*'b'"):
        nnet.softmax_with_bias(b, b)
    with pytest.raises(TypeError, match="'c'"):
        nnet.softmax_with_bias(x, T.zvector("c"))
    f = arignote.function([x, b], nnet.softmax_with_bias(x, b), mode=mode)
    with pytest.raises(ValueError) as info:  # perform's message, or elementwise add's
        f(value((2, 4)), value(3))
    assert "'b' has" in str(info.value) and "'x' has" in str(info.value)


# ------------------------------------------------------------------- SoftmaxGrad
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, axis", [((5,), -1), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1)])
def test_softmax_grad_op_matches_numpy(shape, axis, dtype, mode):
    dyv, smv = value(shape, dtype), sp.softmax(value(shape), axis=axis).astype(dtype)
    dy, sm = T.tensor(dtype, (False,) * len(shape), "dy"), T.tensor(dtype, (False,) * len(shape), "sm")
    op = nnet.SoftmaxGrad(axis) if axis != -1 else nnet.softmax_grad
    out = op(dy, sm)
    assert out.owner.op.axis == axis % len(shape) and out.dtype == dtype
    assert_matches(run([dy, sm], out, dyv, smv, mode=mode), _softmax_grad_ref(dyv, smv, axis))
    check_infer_shape([dy, sm], out, [dyv, smv])


def test_softmax_grad_op_is_the_gradient_of_softmax():
    x, gz = T.matrix("x"), T.matrix("gz")
    xv, gv = value((3, 4)) / 5, value((3, 4))
    sm = nnet.softmax(x)
    through = arignote.grad(None, x, known_grads={sm: gz})
    assert_matches(run([x, gz], nnet.softmax_grad(gz, sm), xv, gv), run([x, gz], through, xv, gv))


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 2, 3)])
def test_softmax_grad_op_gradients(shape):
    """With respect to dy and to sm (Theano's second-order test differentiates through it)."""
    smv = sp.softmax(value(shape) / 5, axis=-1)
    verify_grad(nnet.softmax_grad, [value(shape) / 5, smv], n_tests=1)
    rng = np.random.default_rng(3)
    x = arignote.shared(rng.standard_normal((3, 4)))
    verify_grad(lambda g: arignote.grad(None, x, known_grads={nnet.softmax_op(x): g}), [rng.random((3, 4))],
                n_tests=1)


def test_softmax_grad_op_errors():
    with pytest.raises(TypeError, match="softmax_grad: sm \\(of dy's dimensions\\) must be a 2-d .*'v'"):
        nnet.softmax_grad(T.matrix("dy"), T.vector("v"))
    with pytest.raises(ValueError, match="softmax_grad along axis 2 of 'sm'"):
        nnet.SoftmaxGrad(2)(T.matrix("dy"), T.matrix("sm"))


# ------------------------------------------------ CrossentropySoftmaxArgmax1HotWithBias
@pytest.mark.parametrize("label_dtype", LABEL_DTYPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_crossentropy_softmax_argmax_matches_numpy(shape, dtype, label_dtype, mode):
    xv, bv = value(shape, dtype), value(shape[1:], dtype)
    yv = _labels(shape[0], shape[1], label_dtype)
    x, b, y = T.matrix("x", dtype=dtype), T.vector("b", dtype=dtype), T.vector("y", dtype=label_dtype)
    outs = nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y)
    assert [o.dtype for o in outs] == [dtype, dtype, label_dtype]
    assert [o.ndim for o in outs] == [1, 2, 1]
    z = xv.astype("float64") + bv.astype("float64")
    nll, sm, am = run([x, b, y], outs, xv, bv, yv, mode=mode)
    assert_matches(nll, (-sp.log_softmax(z, axis=1)[np.arange(shape[0]), yv]).astype(dtype))
    assert_matches(sm, sp.softmax(z, axis=1).astype(dtype))
    assert_matches(am, (xv + bv).argmax(axis=1).astype(label_dtype))
    check_infer_shape([x, b, y], list(outs), [xv, bv, yv])


def test_crossentropy_softmax_argmax_is_stable_for_huge_logits(mode):
    x, b, y = T.matrix("x"), T.vector("b"), T.lvector("y")
    xv = np.array([[1e4, 0.0, -1e4], [0.0, 0.0, 0.0]])
    nll, sm, _ = run([x, b, y], nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y),
                     xv, np.zeros(3), np.array([2, 1]), mode=mode)
    assert_matches(nll, np.array([2e4, np.log(3)]))
    assert_matches(sm, np.array([[1.0, 0.0, 0.0], [1 / 3] * 3]))


def test_crossentropy_ops_of_no_rows(mode):
    x, b, y, dy = T.matrix("x"), T.vector("b"), T.lvector("y"), T.vector("dy")
    nll, sm, am = nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y)
    outs = [nll, sm, am, nnet.crossentropy_softmax_1hot_with_bias_dx(dy, sm, y),
            nnet.CrossentropyCategorical1Hot()(sm, y)]
    got = run([x, b, y, dy], outs, np.zeros((0, 3)), np.zeros(3), np.zeros(0, "int64"), np.zeros(0), mode=mode)
    assert [g.shape for g in got] == [(0,), (0, 3), (0,), (0, 3), (0,)]


@pytest.mark.parametrize("label_dtype", ["uint8", "int8", "int64"])
def test_crossentropy_softmax_argmax_gradients(label_dtype):
    yv = _labels(3, 5, label_dtype, seed=1)
    op = nnet.crossentropy_softmax_argmax_1hot_with_bias
    point = [value((3, 5)) / 5, value(5) / 5]
    verify_grad(lambda x, b: op(x, b, yv)[0], point, n_tests=1)
    verify_grad(lambda x, b: op(x, b, yv)[1], point, n_tests=1)
    verify_grad(lambda x, b: op(x, b, yv)[0].sum() + op(x, b, yv)[1][:, 2].sum(), point, n_tests=1)


def test_crossentropy_softmax_argmax_labels_get_zero_gradients():
    """Integer inputs get zeros (Theano's rule, as for every integer input in arignote)."""
    x, b, y = T.matrix("x"), T.vector("b"), T.lvector("y")
    nll = nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y)[0]
    g = run([x, b, y], arignote.grad(nll.sum(), y), value((2, 3)), value(3), np.array([0, 2]))
    assert_matches(g, np.zeros(2))


@pytest.mark.parametrize("bad", [-1, 5])
def test_crossentropy_softmax_argmax_rejects_labels_out_of_range(bad, mode):
    x, b, y = T.matrix("x"), T.vector("b"), T.lvector("labels")
    f = arignote.function([x, b, y], nnet.CrossentropySoftmaxArgmax1HotWithBias()(x, b, y), mode=mode)
    with pytest.raises(ValueError, match=f"class indices 'labels' .* hold {bad} at position 1, but x has 5"):
        f(value((3, 5)), value(5), np.array([0, bad, 2]))
    with pytest.raises(ValueError, match="'labels' holds 2 class indices for the 3 rows of x"):
        f(value((3, 5)), value(5), np.array([0, 1]))


def test_crossentropy_softmax_argmax_type_errors():
    op = nnet.crossentropy_softmax_argmax_1hot_with_bias
    with pytest.raises(TypeError, match="y_idx must be a 1-d tensor of integer class indices, got 'f'"):
        op(T.matrix("x"), T.vector("b"), T.vector("f"))
    with pytest.raises(TypeError, match="x must be a 2-d tensor of real numbers, got 'v'"):
        op(T.vector("v"), T.vector("b"), T.lvector("y"))


# ------------------------------------------------------ CrossentropySoftmax1HotWithBiasDx
@pytest.mark.parametrize("dy_ndim", [0, 1])
@pytest.mark.parametrize("label_dtype", LABEL_DTYPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_crossentropy_dx_matches_numpy(dtype, label_dtype, dy_ndim, mode):
    smv = _probabilities((10, 5)).astype(dtype)
    dyv = value((10,) if dy_ndim else (), dtype)
    yv = _labels(10, 5, label_dtype)
    dy, sm, y = T.tensor(dtype, (False,) * dy_ndim, "dy"), T.matrix("sm", dtype=dtype), T.vector("y", dtype=label_dtype)
    out = nnet.crossentropy_softmax_1hot_with_bias_dx(dy, sm, y)
    assert out.dtype == dtype
    assert_matches(run([dy, sm, y], out, dyv, smv, yv, mode=mode), _dx_ref(dyv, smv, yv).astype(dtype))
    check_infer_shape([dy, sm, y], out, [dyv, smv, yv])


def test_crossentropy_dx_is_the_gradient_of_the_nll():
    x, b, y, g = T.matrix("x"), T.vector("b"), T.lvector("y"), T.vector("g")
    xv, bv, yv, gv = value((4, 3)) / 5, value(3), _labels(4, 3), value(4)
    nll, sm, _ = nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y)
    through = arignote.grad(None, x, known_grads={nll: g})
    assert_matches(run([x, b, y, g], nnet.crossentropy_softmax_1hot_with_bias_dx(g, sm, y), xv, bv, yv, gv),
                   run([x, b, y, g], through, xv, bv, yv, gv))


@pytest.mark.parametrize("label_dtype", ["uint8", "int8", "uint64", "int64"])
def test_crossentropy_dx_gradients(label_dtype):
    smv, yv = _probabilities((10, 5)), _labels(10, 5, label_dtype, seed=2)
    op = nnet.crossentropy_softmax_1hot_with_bias_dx
    verify_grad(lambda sm: op(value(10), sm, yv), [smv], n_tests=1)
    verify_grad(lambda dy: op(dy, smv, yv), [value(10)], n_tests=1)
    verify_grad(lambda dy, sm: op(dy, sm, yv), [np.array(1.5), smv], n_tests=1)


def test_crossentropy_dx_rejects_bad_labels_and_lengths(mode):
    dy, sm, y = T.vector("dy"), T.matrix("sm"), T.lvector("y")
    f = arignote.function([dy, sm, y], nnet.CrossentropySoftmax1HotWithBiasDx()(dy, sm, y), mode=mode)
    smv = _probabilities((10, 5))
    bad = _labels(10, 5)
    bad[1] = -1
    with pytest.raises(ValueError, match="class indices 'y' .* hold -1 at position 1, but sm has 5 classes"):
        f(value(10), smv, bad)
    with pytest.raises(ValueError) as info:  # perform's message, or elementwise mul's
        f(value(4), smv, _labels(10, 5))
    assert "'dy' has" in str(info.value) and "'sm' has" in str(info.value)
    with pytest.raises(ValueError, match="'y' holds 9 class indices for the 10 rows of sm"):
        f(value(10), smv, _labels(9, 5))
    with pytest.raises(TypeError, match="dy must be a 0-d or 1-d tensor of real numbers, got 'm'"):
        nnet.crossentropy_softmax_1hot_with_bias_dx(T.matrix("m"), sm, y)


# ------------------------------------------------- CrossentropyCategorical1Hot(Grad)
@pytest.mark.parametrize("label_dtype", ["int32", "int64", "uint8"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_crossentropy_categorical_1hot_op(shape, dtype, label_dtype, mode):
    pv, yv = _probabilities(shape).astype(dtype), _labels(shape[0], shape[1], label_dtype)
    p, y = T.matrix("p", dtype=dtype), T.vector("y", dtype=label_dtype)
    out = nnet.CrossentropyCategorical1Hot()(p, y)
    assert out.dtype == dtype and out.ndim == 1
    assert_matches(run([p, y], out, pv, yv, mode=mode), -np.log(pv[np.arange(shape[0]), yv]))
    check_infer_shape([p, y], out, [pv, yv])
    g = T.vector("g", dtype=dtype)
    gv = value(shape[:1], dtype)
    grad = nnet.crossentropy_categorical_1hot_grad(g, p, y)
    expected = np.zeros(shape, dtype)
    expected[np.arange(shape[0]), yv] = -gv / pv[np.arange(shape[0]), yv]
    assert_matches(run([g, p, y], grad, gv, pv, yv, mode=mode), expected)
    check_infer_shape([g, p, y], grad, [gv, pv, yv])


def test_crossentropy_categorical_1hot_op_gradient_and_errors(mode):
    yv = np.array([0, 1, 0])
    op = nnet.CrossentropyCategorical1Hot()
    verify_grad(lambda p: op(p, yv), [_probabilities((3, 2))], n_tests=1)
    p, y = T.matrix("p"), T.lvector("y")
    f = arignote.function([p, y], op(p, y), mode=mode)
    with pytest.raises(ValueError, match="class indices 'y' .* hold 2 at position 0, but coding_dist has 2"):
        f(_probabilities((3, 2)), np.array([2, 1, 0]))
    with pytest.raises(TypeError, match="true_one_of_n must be a 1-d tensor of integer class indices, got 'p'"):
        op(p, p)


@pytest.mark.parametrize("compile_mode", ["FAST_RUN", "FAST_COMPILE"])
def test_compiling_lowers_every_compound_op(compile_mode):
    x, b, y, g, v = T.matrix("x"), T.vector("b"), T.lvector("y"), T.matrix("g"), T.vector("v")
    sm = nnet.softmax(x)
    outs = [nnet.softmax_with_bias(x, b), nnet.softmax_grad(g, sm),
            *nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y),
            nnet.crossentropy_softmax_1hot_with_bias_dx(v, sm, y), nnet.CrossentropyCategorical1Hot()(sm, y),
            nnet.crossentropy_categorical_1hot_grad(v, sm, y)]
    assert {type(n.op) for n in io_toposort([], outs)} >= set(COMPOUND)
    f = arignote.function([x, b, y, g, v], outs, mode=compile_mode)
    assert not [n.op for n in f.maker.fgraph.toposort() if isinstance(n.op, COMPOUND)]
    vals = [value((3, 4)) / 5, value(4), np.array([0, 3, 1]), value((3, 4)), value(3)]
    reference = arignote.function([x, b, y, g, v], outs, mode=Mode(optimizer=None))
    for got, want in zip(f(*vals), reference(*vals)):
        assert_matches(got, want)


def test_lowered_categorical_1hot_of_a_softmax_is_stable():
    x, y = T.matrix("x"), T.lvector("y")
    out = run([x, y], nnet.CrossentropyCategorical1Hot()(nnet.softmax(x), y), np.array([[1e4, 0.0, -1e4]]),
              np.array([2]))
    assert_matches(out, np.array([2e4]))


def test_compound_ops_pickle_and_compare():
    for op in (nnet.SoftmaxWithBias(), nnet.SoftmaxGrad(0), nnet.CrossentropySoftmaxArgmax1HotWithBias(),
               nnet.CrossentropySoftmax1HotWithBiasDx(), nnet.CrossentropyCategorical1Hot(),
               nnet.CrossentropyCategorical1HotGrad()):
        assert pickle.loads(pickle.dumps(op)) == op
    assert nnet.softmax_grad == nnet.SoftmaxGrad() != nnet.SoftmaxGrad(0)
    assert nnet.softmax_with_bias == nnet.SoftmaxWithBias()


def test_crossentropy_softmax_max_and_argmax_1hot():
    xv, bv, yv = value((4, 3)), value(3), _labels(4, 3)
    x, b, y = T.matrix("x"), T.vector("b"), T.lvector("y")
    z = xv + bv
    for outs, ref in ((nnet.crossentropy_softmax_max_and_argmax_1hot_with_bias(x, b, y), z),
                      (nnet.crossentropy_softmax_max_and_argmax_1hot(x, y), xv)):
        nll, sm, mx, am = run([x, b, y], list(outs), xv, bv, yv)
        assert_matches(nll, -sp.log_softmax(ref, axis=1)[np.arange(4), yv])
        assert_matches(sm, sp.softmax(ref, axis=1))
        assert_matches(mx, sp.softmax(ref, axis=1).max(axis=1))
        assert_matches(am, ref.argmax(axis=1))
