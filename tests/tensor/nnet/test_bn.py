"""tensor.nnet.bn against numpy formulas written here: per-activation, spatial and custom
axes, parameters of full or reduced rank, running averages, float32/float64; both the
ops' own perform (no rewrites) and the graphs the specialize phase lowers them to;
gradients of every output (verify_grad), and of the gradient op itself."""
from __future__ import annotations

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.compile.mode import Mode
from arignote.gradient import verify_grad
from arignote.tensor.nnet import bn
from tests.utils import assert_matches, check_infer_shape, run

NO_REWRITES = Mode(optimizer=None)
LAYOUTS = [  # (input shape, axes, parameters of full rank?)
    ((5, 3), "per-activation", False),
    ((4, 3, 2, 3), "spatial", False),
    ((4, 3, 2, 3), "spatial", True),
    ((3, 2, 4), (0, 2), False),
    ((2, 3, 4), (1,), True),
    ((1, 2, 3, 2, 2), "spatial", False),
]


def resolved(shape: tuple, axes) -> tuple[int, ...]:
    if axes == "per-activation":
        return (0,)
    if axes == "spatial":
        return (0,) + tuple(range(2, len(shape)))
    return tuple(axes)


def param_shape(shape: tuple, axes: tuple, full: bool) -> tuple:
    if full:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def broadcast(p: np.ndarray, shape: tuple, axes: tuple) -> np.ndarray:
    return p.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))


def reference_train(x, gamma, beta, axes, eps, factor=None, rm=None, rv=None):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    invstd = 1 / np.sqrt(var + eps)
    out = (x - mean) * broadcast(gamma, x.shape, axes) * invstd + broadcast(beta, x.shape, axes)
    result = [out, mean, invstd]
    if rm is not None:
        m = x.size / mean.size
        result += [broadcast(rm, x.shape, axes) * (1 - factor) + mean * factor,
                   broadcast(rv, x.shape, axes) * (1 - factor) + m / (m - 1) * var * factor]
    return result


def sample(shape, axes, full, dtype, seed=0):
    rng = np.random.default_rng(seed)
    pshape = param_shape(shape, axes, full)
    return (rng.standard_normal(shape).astype(dtype) * 2 + 1,
            *(rng.standard_normal(pshape).astype(dtype) for _ in range(2)),
            rng.standard_normal(pshape).astype(dtype), rng.random(pshape).astype(dtype) + 0.5)


def tensors(values, names):
    return [T.tensor(str(v.dtype), (False,) * v.ndim, name=n) for v, n in zip(values, names)]


@pytest.mark.parametrize("mode", [None, NO_REWRITES], ids=["lowered", "perform"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, axes, full", LAYOUTS)
def test_train_and_test_match_numpy(shape, axes, full, dtype, mode):
    ax = resolved(shape, axes)
    xv, gv, bv, rmv, rvv = sample(shape, ax, full, dtype)
    x, g, b, rm, rv = tensors([xv, gv, bv, rmv, rvv], ["x", "gamma", "beta", "rm", "rv"])
    outs = bn.batch_normalization_train(x, g, b, axes, 1e-4, 0.3, rm, rv)
    assert [o.dtype for o in outs] == [dtype] * 5
    got = run([x, g, b, rm, rv], list(outs), xv, gv, bv, rmv, rvv, mode=mode)
    expected = reference_train(xv.astype(np.float64), gv, bv, ax, 1e-4, 0.3, rmv, rvv)
    rtol = 1e-4 if dtype == "float32" else None
    assert_matches(got[0], expected[0].astype(dtype), rtol)
    for value, ref in zip(got[1:], expected[1:]):  # statistics come back in the parameters' layout
        assert_matches(value, ref.reshape(gv.shape).astype(dtype), rtol)
    plain = run([x, g, b], list(bn.batch_normalization_train(x, g, b, axes)), xv, gv, bv, mode=mode)
    assert len(plain) == 3
    assert_matches(plain[0], reference_train(xv.astype(np.float64), gv, bv, ax, 1e-4)[0].astype(dtype), rtol)
    m, v = T.tensor(dtype, (False,) * gv.ndim, name="m"), T.tensor(dtype, (False,) * gv.ndim, name="v")
    test = bn.batch_normalization_test(x, g, b, m, v, axes, 1e-3)
    expected = ((xv - broadcast(rmv, shape, ax)) * broadcast(gv, shape, ax) / np.sqrt(broadcast(rvv, shape, ax) + 1e-3)
                + broadcast(bv, shape, ax))
    assert_matches(run([x, g, b, m, v], test, xv, gv, bv, rmv, rvv, mode=mode), expected.astype(dtype), rtol)


def test_lowering_leaves_no_abstract_op():
    x, g, b = T.tensor4("x"), T.vector("g"), T.vector("b")
    out = bn.batch_normalization_train(x, g, b, "spatial")[0]
    f = arignote.function([x, g, b], arignote.grad(out.sum(), [x, g]))
    assert not any(isinstance(n.op, bn._AxesOp) for n in f.maker.fgraph.toposort())


@pytest.mark.parametrize("shape, axes, full", LAYOUTS[:4])
def test_verify_grad_of_every_output(shape, axes, full):
    ax = resolved(shape, axes)
    xv, gv, bv, rmv, rvv = sample(shape, ax, full, "float64", seed=1)
    for k in range(5):
        verify_grad(lambda x, g, b, rm, rv, k=k: bn.batch_normalization_train(x, g, b, axes, 1e-3, 0.2, rm, rv)[k],
                    [xv, gv, bv, rmv, rvv], n_tests=1)
    verify_grad(lambda x, g, b, m, v: bn.batch_normalization_test(x, g, b, m, v, axes, 1e-3),
                [xv, gv, bv, rmv, rvv], n_tests=1)


@pytest.mark.parametrize("mode", [None, NO_REWRITES], ids=["lowered", "perform"])
def test_gradient_op_matches_and_has_a_gradient(mode):
    shape, ax = (4, 3, 2, 2), (0, 2, 3)
    rng = np.random.default_rng(2)
    xv, dyv = rng.standard_normal(shape), rng.standard_normal(shape)
    sv = rng.standard_normal((1, 3, 1, 1))
    mv, iv = xv.mean(axis=ax, keepdims=True), 1 / np.sqrt(xv.var(axis=ax, keepdims=True) + 1e-4)
    x, dy = T.tensor4("x"), T.tensor4("dy")
    s, m, i = (T.tensor("float64", (True, False, True, True), name=n) for n in ("s", "m", "i"))
    outs = bn.AbstractBatchNormTrainGrad(ax)(x, dy, s, m, i, 1e-4)
    got = run([x, dy, s, m, i], list(outs), xv, dyv, sv, mv, iv, mode=mode)
    centred = xv - mv
    c = dyv * iv - centred * (dyv * centred).mean(axis=ax, keepdims=True) * iv ** 3
    assert_matches(got[0], sv * (c - c.mean(axis=ax, keepdims=True)))
    assert_matches(got[1], (dyv * iv * centred).sum(axis=ax, keepdims=True))
    assert_matches(got[2], dyv.sum(axis=ax, keepdims=True))
    for k in range(3):
        verify_grad(lambda x, dy, s, m, i, k=k: bn.AbstractBatchNormTrainGrad(ax)(x, dy, s, m, i, 1e-4)[k],
                    [xv, dyv, sv, mv, iv], n_tests=1, mode=mode)


def test_input_gradient_matches_the_textbook_formula():
    shape = (6, 4)
    rng = np.random.default_rng(3)
    xv, gv, bv, dyv = rng.standard_normal(shape), rng.standard_normal(4), rng.standard_normal(4), \
        rng.standard_normal(shape)
    x, g, b, dy = T.matrix("x"), T.vector("g"), T.vector("b"), T.matrix("dy")
    out = bn.batch_normalization_train(x, g, b, "per-activation", 1e-4)[0]
    gx = arignote.grad(None, x, known_grads={out: dy})
    n = shape[0]
    xhat = (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-4)
    expected = gv / np.sqrt(xv.var(0) + 1e-4) / n * (n * dyv - dyv.sum(0) - xhat * (dyv * xhat).sum(0))
    assert_matches(run([x, g, b, dy], gx, xv, gv, bv, dyv), expected)


def _second_order(x, dy, dx, g, b, ax, consider_constant):
    """ddx: the gradient of <dx, d out / d x . dy> with respect to x, through the op."""
    out, mean, invstd = bn.batch_normalization_train(x, g, b, ax, 1e-4)
    gx = arignote.grad(None, x, known_grads={out: dy})
    return arignote.grad(None, x, known_grads={gx: dx},
                         consider_constant=[mean, invstd] if consider_constant else None)


def test_second_order_gradient_with_the_statistics_held_constant():
    # The op's own gradient treats its inputs as independent: with the batch mean and inverse
    # std held constant (Theano's test of the op), ddx is Theano's closed form. It used to
    # go on through the mean and std to x as well, and came out wrong.
    shape, ax = (5, 3, 2), (0, 2)
    rng = np.random.default_rng(4)
    xv, dyv, dxv = (rng.standard_normal(shape) for _ in range(3))
    gv, bv = rng.standard_normal((1, 3, 1)), rng.standard_normal((1, 3, 1))
    x, dy, dx = T.tensor3("x"), T.tensor3("dy"), T.tensor3("dx")
    g, b = (T.tensor("float64", (True, False, True), name=n) for n in ("g", "b"))
    ddx = _second_order(x, dy, dx, g, b, ax, consider_constant=True)
    centred = xv - xv.mean(axis=ax, keepdims=True)
    invstd = 1 / np.sqrt(xv.var(axis=ax, keepdims=True) + 1e-4)
    ccc = gv * (dxv - dxv.mean(axis=ax, keepdims=True))
    expected = -invstd ** 3 * (ccc * (dyv * centred).mean(axis=ax, keepdims=True)
                               + dyv * (ccc * centred).mean(axis=ax, keepdims=True))
    assert_matches(run([x, dy, dx, g, b], ddx, xv, dyv, dxv, gv, bv), expected)


def test_second_order_gradient_matches_the_explicit_graph():
    shape, ax = (6, 4), (0,)
    rng = np.random.default_rng(5)
    xv, dyv, dxv = (rng.standard_normal(shape) for _ in range(3))
    gv, bv = rng.standard_normal((1, 4)), rng.standard_normal((1, 4))
    x, dy, dx = T.matrix("x"), T.matrix("dy"), T.matrix("dx")
    g, b = (T.tensor("float64", (True, False), name=n) for n in ("g", "b"))
    mean = x.mean(axis=0, keepdims=True)
    explicit = (x - mean) * g / T.sqrt(T.sqr(x - mean).mean(axis=0, keepdims=True) + 1e-4) + b
    gx = arignote.grad(None, x, known_grads={explicit: dy})
    expected = arignote.grad(None, x, known_grads={gx: dx})
    ddx = _second_order(x, dy, dx, g, b, ax, consider_constant=False)
    values = xv, dyv, dxv, gv, bv
    assert_matches(run([x, dy, dx, g, b], ddx, *values), run([x, dy, dx, g, b], expected, *values))


def test_shapes_are_inferred():
    shape, ax = (4, 3, 2, 3), (0, 2, 3)
    xv, gv, bv, rmv, rvv = sample(shape, ax, True, "float64")
    x, g, b, rm, rv = tensors([xv, gv, bv, rmv, rvv], ["x", "g", "b", "rm", "rv"])
    op = bn.AbstractBatchNormTrain(ax)
    outs = op(x, T.addbroadcast(g, 0, 2, 3), T.addbroadcast(b, 0, 2, 3), 1e-4, 0.1,
              T.addbroadcast(rm, 0, 2, 3), T.addbroadcast(rv, 0, 2, 3))
    check_infer_shape([x, g, b, rm, rv], list(outs), [xv, gv, bv, rmv, rvv])


def test_elementwise_batch_normalization():
    rng = np.random.default_rng(4)
    values = [rng.standard_normal((3, 4))] + [rng.standard_normal(4) for _ in range(3)] + [rng.random(4) + 1]
    x, g, b, m, s = T.matrix("x"), T.vector("g"), T.vector("b"), T.vector("m"), T.vector("s")
    xv, gv, bv, mv, sv = values
    for mode in ("low_mem", "high_mem"):
        out = bn.batch_normalization(x, g, b, m, s, mode)
        assert_matches(run([x, g, b, m, s], out, *values), (xv - mv) * (gv / sv) + bv)
    verify_grad(lambda *a: bn.batch_normalization(*a), values, n_tests=1)
    with pytest.raises(ValueError, match='mode must be either "low_mem", "high_mem"'):
        bn.batch_normalization(x, g, b, m, s, "fast")
    assert T.nnet.bn is bn and T.nnet.batch_normalization is bn.batch_normalization


def test_bad_arguments():
    x, g, b = T.tensor4("x"), T.vector("gamma"), T.vector("beta")
    with pytest.raises(ValueError, match="epsilon must be at least 1e-5, got 1e-06"):
        bn.batch_normalization_train(x, g, b, "spatial", epsilon=1e-6)
    with pytest.raises(ValueError, match="invalid axes"):
        bn.batch_normalization_train(x, g, b, "everything")
    with pytest.raises(ValueError, match=r"axes should be less than ndim \(<4\)"):
        bn.batch_normalization_train(x, g, b, (0, 4))
    with pytest.raises(ValueError, match="both be given or both be None"):
        bn.batch_normalization_train(x, g, b, "spatial", running_mean=g)
    with pytest.raises(ValueError, match="'gamma' has 1 dimensions, but must have 3"):
        bn.batch_normalization_train(x, g, b, (0,))
    with pytest.raises(ValueError, match="'var' has 2 dimensions"):
        bn.batch_normalization_test(x, g, b, g, T.matrix("var"), "spatial")
