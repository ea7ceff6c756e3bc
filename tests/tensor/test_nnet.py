"""tensor.nnet against numpy/scipy: softmax and log_softmax (stable, any axis), the
activations, the cross-entropies, and their errors."""
import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from arignote import tensor as T
from arignote.tensor import nnet
from tests.utils import assert_matches, check_infer_shape, run, value, var_for


# ---------------------------------------------------------------- softmax
@given(st.data())
def test_softmax_and_log_softmax_match_scipy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    v = value(shape, dtype) * data.draw(st.sampled_from([1.0, 1e3]))
    v = v.astype(dtype)
    x = var_for(v)
    sm, lsm = nnet.softmax(x, axis=axis), nnet.log_softmax(x, axis=axis)
    if v.size == 0:  # scipy cannot take the maximum of nothing; the result is empty too
        assert_matches(run([x], sm, v), v)
        assert_matches(run([x], lsm, v), v)
        return
    assert_matches(run([x], sm, v), sp.softmax(v, axis=axis).astype(dtype))
    assert_matches(run([x], lsm, v), sp.log_softmax(v, axis=axis).astype(dtype))
    check_infer_shape([x], sm, [v])
    check_infer_shape([x], lsm, [v])


def test_softmax_of_huge_logits_has_no_nan():
    x = T.matrix("x")
    v = np.array([[1e4, 0.0, -1e4], [1e4, 1e4, 1e4]])
    result = run([x], nnet.softmax(x), v)
    assert not np.isnan(result).any()
    assert_matches(result, np.array([[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]]))
    logs = run([x], nnet.log_softmax(x), v)
    assert np.isfinite(logs).all()
    assert_matches(logs, np.array([[0.0, -1e4, -2e4], [-np.log(3)] * 3]))


@pytest.mark.parametrize("dtype, out_dtype", [("int8", "float32"), ("int64", "float64"),
                                              ("float32", "float32"), ("bool", "float32")])
def test_softmax_dtypes(dtype, out_dtype):
    v = np.array([[1, 0, 1]], dtype=dtype)
    x = var_for(v)
    out = nnet.softmax(x)
    assert out.dtype == out_dtype and out.broadcastable == x.broadcastable
    assert_matches(run([x], out, v), sp.softmax(v.astype(out_dtype), axis=-1).astype(out_dtype))
    assert nnet.logsoftmax is nnet.log_softmax


def test_softmax_with_bias():
    x, b = T.matrix("x"), T.vector("b")
    xv, bv = value((2, 3)), value(3)
    assert_matches(run([x, b], nnet.softmax_with_bias(x, b), xv, bv), sp.softmax(xv + bv, axis=1))
    with pytest.raises(TypeError, match="softmax_with_bias expects a matrix and a vector"):
        nnet.softmax_with_bias(b, b)


def test_softmax_errors():
    with pytest.raises(ValueError, match="softmax of the scalar 's'"):
        nnet.softmax(T.scalar("s"))
    with pytest.raises(ValueError, match="softmax along axis 2 of 'x', which has 2 dimensions"):
        nnet.softmax(T.matrix("x"), axis=2)
    with pytest.raises(TypeError, match="axis must be an int"):
        nnet.log_softmax(T.matrix("x"), axis=None)
    with pytest.raises(TypeError, match="complex inputs are not supported"):
        nnet.softmax(T.zvector("z"))


# ------------------------------------------------------------ activations
def test_sigmoid_and_softplus_are_the_elementwise_ones():
    assert nnet.sigmoid is T.sigmoid and nnet.softplus is T.softplus
    x = T.vector("x")
    v = np.linspace(-50, 50, 11)
    assert_matches(run([x], nnet.sigmoid(x), v), sp.expit(v))
    assert_matches(run([x], nnet.softplus(x), v), np.logaddexp(0, v))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("alpha", [0, 0.1, -1])
def test_relu(dtype, alpha):
    v = value((3, 4), dtype)
    x = var_for(v)
    out = nnet.relu(x, alpha)
    expected = np.where(v > 0, v, alpha * v).astype(out.dtype)
    if dtype != "int32" or alpha != 0.1:
        assert out.dtype == dtype
    assert_matches(run([x], out, v), expected)
    a = T.scalar("a", dtype="float32")
    if dtype == "float32":
        assert_matches(run([x, a], nnet.relu(x, a), v, np.float32(alpha)), expected)
    # A numpy input gives a numpy result, as Theano's arithmetic relu did.
    direct = nnet.relu(v, alpha)
    assert isinstance(direct, np.ndarray)
    np.testing.assert_allclose(direct, np.where(v > 0, v, alpha * v), rtol=1e-6)
    if dtype != "int32" or alpha == 0:
        assert direct.dtype == v.dtype


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8"])
def test_hard_sigmoid(dtype):
    v = np.linspace(-4, 4, 33).astype(dtype)
    x = var_for(v)
    out = nnet.hard_sigmoid(x)
    out_dtype = "float32" if dtype == "int8" else dtype
    assert out.dtype == out_dtype
    expected = np.clip(v.astype(out_dtype) * np.asarray(0.2, out_dtype) + np.asarray(0.5, out_dtype), 0, 1)
    assert_matches(run([x], out, v), expected.astype(out_dtype))


def _ultra_fast_reference(x: float) -> float:
    """Theano's piecewise definition, one scalar at a time."""
    t = abs(x) / 2
    if t < 1.7:
        z = 1.5 * t / (1 + t)
    elif t < 3:
        z = 0.935409070603099 + 0.0458812946797165 * (t - 1.7)
    else:
        z = 0.99505475368673
    return 0.5 + 0.5 * (z if x >= 0 else -z)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ultra_fast_sigmoid_follows_theanos_pieces(dtype):
    v = np.concatenate([np.linspace(-10, 10, 201), [3.4, -3.4, 6.0, -6.0, 0.0, 1e30, -1e30]]).astype(dtype)
    x = var_for(v)
    out = nnet.ultra_fast_sigmoid(x)
    assert out.dtype == dtype
    result = run([x], out, v)
    expected = np.array([_ultra_fast_reference(float(e)) for e in v], dtype=dtype)
    assert_matches(result, expected, rtol=1e-6)
    assert np.abs(result - sp.expit(v)).max() < 0.028
    assert np.isnan(run([x], out, np.array([np.nan], dtype))).all()


# ----------------------------------------------------------------- losses
def test_categorical_crossentropy_one_hot_and_indices():
    p = T.matrix("p")
    pv = sp.softmax(value((4, 3)), axis=1)
    labels = np.array([2, 0, 0, 1])
    onehot = np.eye(3)[labels]
    t = T.matrix("t")
    expected = -np.log(pv[np.arange(4), labels])
    assert_matches(run([p, t], nnet.categorical_crossentropy(p, t), pv, onehot), expected)
    soft = sp.softmax(value((4, 3)), axis=1)
    assert_matches(run([p, t], nnet.categorical_crossentropy(p, t), pv, soft),
                   -(soft * np.log(pv)).sum(axis=1))
    i = T.ivector("i")
    out = nnet.categorical_crossentropy(p, i)
    assert_matches(run([p, i], out, pv, labels.astype("int32")), expected)
    assert_matches(run([p], nnet.categorical_crossentropy(p, labels), pv), expected)


@pytest.mark.parametrize("bad", [-1, 3, 7])
def test_class_indices_out_of_range_are_an_error_naming_them(bad):
    # -1 used to score the last class silently (numpy's negative index).
    m, y = T.matrix("m"), T.ivector("y")
    cost = nnet.categorical_crossentropy(nnet.softmax(m), y)
    mv = value((4, 3))
    labels = np.array([0, 2, bad, 1], "int32")
    message = (rf"the class indices 'y' \(shape \(4,\)\) hold {bad} at position 2, but coding_dist "
               r"has 3 classes: each index must be in 0 \.\. 2")
    with pytest.raises(ValueError, match=message):
        run([m, y], cost, mv, labels)
    with pytest.raises(ValueError, match=message):  # the gradient reads the same checked indices
        run([m, y], T.grad(cost.sum(), m), mv, labels)
    labels[2] = 1
    expected = -sp.log_softmax(mv, axis=1)[np.arange(4), labels]
    assert_matches(run([m, y], cost, mv, labels), expected)


def test_categorical_crossentropy_errors():
    p = T.matrix("p")
    with pytest.raises(TypeError, match="the class indices 'f' must be integers"):
        nnet.categorical_crossentropy(p, T.vector("f"))
    with pytest.raises(TypeError, match="categorical_crossentropy expects true_dist"):
        nnet.categorical_crossentropy(p, T.lscalar("s"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_crossentropy(dtype):
    o, t = T.tensor(dtype, (False, False), "o"), T.tensor(dtype, (False, False), "t")
    ov = sp.expit(value((3, 2))).astype(dtype)
    tv = (value((3, 2)) > 0).astype(dtype)
    out = nnet.binary_crossentropy(o, t)
    assert out.dtype == dtype
    expected = -(tv * np.log(ov) + (1 - tv) * np.log(1 - ov))
    assert_matches(run([o, t], out, ov, tv), expected.astype(dtype))
