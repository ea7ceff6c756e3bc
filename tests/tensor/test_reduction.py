"""Reductions against numpy over shapes, dtypes, axes (negative, tuples) and keepdims."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from arignote import tensor as T
from arignote.tensor.reduction import CAReduce
from tests.utils import assert_matches, check_infer_shape, run, value, var_for

DTYPES = ["bool", "int8", "int32", "uint8", "int64", "float16", "float32", "float64", "complex128"]
SUM_DTYPE = {"bool": "int64", "int8": "int64", "int32": "int64", "uint8": "uint64", "int64": "int64",
             "float16": "float16", "float32": "float32", "float64": "float64",
             "complex128": "complex128"}


@st.composite
def arrays_and_axes(draw, min_side=0):
    shp = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=min_side, max_side=3))
    ndim = len(shp)
    if ndim and draw(st.booleans()):
        axes = draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim,
                             unique_by=lambda a: a % ndim))
        axis = axes[0] if len(axes) == 1 and draw(st.booleans()) else tuple(axes)
    else:
        axis = None
    return shp, axis, draw(st.booleans())


def np_axis(axis):
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def reference(fn, v, axis, keepdims, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(fn(v, axis=np_axis(axis), keepdims=keepdims)).astype(dtype)


@given(arrays_and_axes(), st.sampled_from(DTYPES))
def test_sum_and_prod(case, dtype):
    shp, axis, keepdims = case
    v = value(shp, dtype)
    x = var_for(v)
    out_dtype = SUM_DTYPE[dtype]
    y = T.sum(x, axis=axis, keepdims=keepdims)
    assert y.dtype == out_dtype
    rtol = 1e-2 if dtype == "float16" else None
    assert_matches(run([x], y, v), reference(np.sum, v, axis, keepdims, out_dtype), rtol)
    p = x.prod(axis=axis, keepdims=keepdims)
    assert p.dtype == out_dtype
    small = np.clip(v, -2, 2).astype(dtype)
    assert_matches(run([x], p, small), reference(np.prod, small, axis, keepdims, out_dtype), rtol)
    check_infer_shape([x], y, [v])


@given(arrays_and_axes(min_side=1), st.sampled_from(DTYPES[:-1]))
def test_max_min_argmax_argmin(case, dtype):
    shp, axis, keepdims = case
    v = value(shp, dtype)
    x = var_for(v)
    for fn, ref in ((T.max, np.max), (T.min, np.min)):
        y = fn(x, axis=axis, keepdims=keepdims)
        assert y.dtype == dtype
        assert_matches(run([x], y, v), reference(ref, v, axis, keepdims, dtype))
    if axis is None or isinstance(axis, int):
        for fn, ref in ((T.argmax, np.argmax), (T.argmin, np.argmin)):
            y = fn(x, axis=axis, keepdims=keepdims)
            assert y.dtype == "int64"
            expected = reference(ref, v, axis, keepdims and axis is not None, "int64")
            if keepdims and axis is None:
                expected = expected.reshape((1,) * v.ndim)
            assert_matches(run([x], y, v), expected)
            check_infer_shape([x], y, [v])


def test_argmax_over_several_axes_flattens_them_in_order():
    v = value((2, 3, 4), "float64")
    x = var_for(v)
    moved = np.transpose(v, (1, 0, 2)).reshape(3, 8)
    assert_matches(run([x], T.argmax(x, axis=(0, 2)), v), moved.argmax(-1))
    assert_matches(run([x], T.argmin(x, axis=(-1, 0)), v), moved.argmin(-1))
    mx, amx = T.max_and_argmax(x, axis=1)
    assert_matches(run([x], mx, v), v.max(1))
    assert_matches(run([x], amx, v), v.argmax(1))


@given(arrays_and_axes(), st.sampled_from(DTYPES))
def test_any_all(case, dtype):
    shp, axis, keepdims = case
    v = (value(shp, "float64") > 0.5).astype(dtype)
    x = var_for(v)
    for fn, ref in ((T.any, np.any), (T.all, np.all)):
        y = fn(x, axis=axis, keepdims=keepdims)
        assert y.dtype == "bool"
        assert_matches(run([x], y, v), reference(ref, v, axis, keepdims, "bool"))


@given(arrays_and_axes(min_side=1), st.sampled_from(DTYPES))
def test_mean_var_std(case, dtype):
    shp, axis, keepdims = case
    v = value(shp, dtype)
    x = var_for(v)
    expected_dtype = {"float16": "float16", "float32": "float32",
                      "complex128": "complex128"}.get(dtype, "float64")
    m = x.mean(axis=axis, keepdims=keepdims)
    assert m.dtype == expected_dtype
    rtol = 1e-2 if dtype == "float16" else 1e-5 if dtype == "float32" else None
    assert_matches(run([x], m, v), reference(np.mean, v, axis, keepdims, expected_dtype), rtol)
    check_infer_shape([x], m, [v])
    real_dtype = {"complex128": "float64"}.get(expected_dtype, expected_dtype)
    for ddof in (0, 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = run([x], [T.var(x, axis, ddof=ddof, keepdims=keepdims),
                            x.std(axis=axis, ddof=ddof, keepdims=keepdims)], v)
            ref_v = np.var(v.astype(expected_dtype), axis=np_axis(axis), ddof=ddof, keepdims=keepdims)
            ref_s = np.std(v.astype(expected_dtype), axis=np_axis(axis), ddof=ddof, keepdims=keepdims)
        assert_matches(out[0], np.asarray(ref_v, real_dtype), rtol)
        assert_matches(out[1], np.asarray(ref_s, real_dtype), rtol)


def test_axis_given_as_a_constant_variable():
    """Theano took NoneConst, constant(k) and constant int vectors as axes."""
    v = value((2, 3), "float64")
    x = var_for(v)
    for axis, np_axis in ((T.NoneConst.clone(), None), (T.constant(0), 0), (T.constant(-1), -1),
                          (T.as_tensor_variable([1, 0]), (0, 1))):
        maximum, index = T.max_and_argmax(x, axis)
        assert_matches(run([x], maximum, v), np.max(v, np_axis))
        assert_matches(run([x], T.sum(x, axis), v), np.sum(v, np_axis))
        if not isinstance(np_axis, tuple):
            assert_matches(run([x], index, v), np.argmax(v, np_axis))
    with pytest.raises(TypeError, match="axis must be None, an int or a tuple of ints"):
        T.sum(x, T.lscalar("k"))


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128"])
def test_var_corrected_two_pass(dtype):
    """corrected=True takes the mean's rounding error off: equal to numpy's var up to
    rounding, and exact where a float32 mean is off (a large offset)."""
    v = value((3, 4, 5), dtype)
    if dtype == "float32":
        v = v + np.float32(1e4)
    x = var_for(v)
    for axis, ddof in ((None, 0), (2, 1), ((0, 2), 0), (-1, 2)):
        for keepdims in (False, True):
            y = T.var(x, axis, ddof, keepdims, corrected=True)
            ref = np.var(v.astype("complex128" if dtype == "complex128" else "float64"),
                         axis=axis, ddof=ddof, keepdims=keepdims)
            got = run([x], y, v)
            assert got.dtype == y.dtype and got.shape == ref.shape
            np.testing.assert_allclose(got, ref, rtol=1e-3 if dtype == "float32" else 1e-10)
            s = x.std(axis, ddof, keepdims, corrected=True)
            np.testing.assert_allclose(run([x], s, v), np.sqrt(ref),
                                       rtol=1e-3 if dtype == "float32" else 1e-10)
    assert T.vector(dtype="float16").var(corrected=True).dtype == "float16"
    with pytest.raises(TypeError, match="keepdims is the fourth argument"):
        T.var(x, 0, True)


@pytest.mark.parametrize("L", [1, 2, 3, np.inf])
@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_norm(L, dtype):
    v = value((3, 4), dtype)
    x = var_for(v)
    out_dtype = "float64" if dtype == "int32" else dtype
    for axis in (None, 0, -1):
        y = x.norm(L, axis=axis)
        assert y.dtype == out_dtype
        flat = np.abs(v.astype("float64"))
        ref = (flat.max(axis) if np.isinf(L) else (flat ** L).sum(axis) ** (1 / L))
        assert_matches(run([x], y, v), np.asarray(ref, out_dtype), 1e-4)
    assert run([x], T.norm(x, 2, axis=1, keepdims=True), v).shape == (3, 1)
    with pytest.raises(ValueError, match="L=0"):
        x.norm(0)


def test_explicit_dtypes():
    x = T.bmatrix("x")
    v = np.full((2, 3), 100, dtype="int8")
    assert_matches(run([x], x.sum(dtype="int8"), v), np.asarray(v.sum(dtype="int8")))
    assert_matches(run([x], x.sum(acc_dtype="int32", dtype="int32"), v),
                   np.asarray(600, dtype="int32"))
    assert x.mean(dtype="float32").dtype == "float32"
    assert T.fvector("f").sum(dtype="float64").dtype == "float64"
    with pytest.raises(TypeError, match="would lose precision"):
        T.dvector("d").sum(acc_dtype="float32")
    s = T.shape(T.matrix("m")).prod()
    assert s.dtype == "int64"
    assert T.matrix("m").size.dtype == "int64"


def test_reduction_type_broadcastable_and_op():
    x = T.tensor("float64", (True, False, False), name="x")
    y = x.sum(axis=1, keepdims=True)
    assert y.broadcastable == (True, True, False)
    assert x.max(axis=(0, 2)).broadcastable == (False,)
    assert isinstance(x.sum(axis=-1).owner.op, CAReduce)
    assert T.scalar("s").sum().ndim == 0


def test_bad_axes_fail_when_the_graph_is_built():
    x = T.matrix("x")
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of range for 'x', which has 2"):
        x.sum(axis=2)
    with pytest.raises(np.exceptions.AxisError, match="axis -3"):
        T.mean(x, axis=-3)
    with pytest.raises(ValueError, match="same axis twice"):
        x.max(axis=(0, -2))
    with pytest.raises(TypeError, match="axis must be"):
        x.sum(axis=1.0)
    with pytest.raises(np.exceptions.AxisError):
        T.scalar("s").sum(axis=0)
    with pytest.raises(TypeError, match="not ordered"):
        T.zvector("z").argmax()


def test_empty_max_and_argmax_fail_clearly_at_run_time():
    x = T.matrix("x")
    empty = np.zeros((0, 3))
    assert_matches(run([x], x.max(axis=1), empty), np.zeros(0))
    with pytest.raises(ValueError, match=r"'x' has shape \(0, 3\), and the max of no elements"):
        run([x], x.max(axis=0), empty)
    with pytest.raises(ValueError, match="min of no elements"):
        run([x], x.min(), empty)
    with pytest.raises(ValueError, match="no elements to choose from"):
        run([x], x.argmax(), empty)
    # Over a non-empty axis of a matrix with no rows: no positions, not a reshape error.
    assert_matches(run([x], x.argmax(axis=1), empty), np.zeros(0, "int64"))
    assert_matches(run([x], T.argmin(x, axis=1), empty), np.zeros(0, "int64"))
    assert_matches(run([x], x.sum(axis=0), empty), np.zeros(3))


# ---------------------------------------------------------- Theano's forms
@pytest.mark.parametrize("axis", [np.array(1), np.array([0, 1]), [np.array(0), np.array(1)],
                                  np.array(-1, dtype="int32")])
def test_axis_given_as_numpy_integers(axis):
    v = value((3, 4))
    x = var_for(v)
    ref = tuple(int(a) for a in np.atleast_1d(np.asarray(axis)))
    for fn, twin in ((T.sum, np.sum), (T.max, np.max), (T.mean, np.mean), (T.var, np.var)):
        assert_matches(run([x], fn(x, axis=axis), v), twin(v, axis=ref))
    if np.ndim(axis) == 0:
        assert_matches(run([x], T.argmax(x, axis=axis), v), np.argmax(v, axis=int(axis)))
    with pytest.raises(TypeError, match="axis must be"):
        T.sum(x, axis=np.array([0.5]))


@pytest.mark.parametrize("in_dtype", ["bool", "int8", "int16", "uint32", "int64"])
@pytest.mark.parametrize("acc_dtype", ["float16", "float32", "complex64"])
def test_a_discrete_input_may_accumulate_in_any_float(in_dtype, acc_dtype):
    """Theano: a float/complex accumulator for an integer input is allowed (not an upcast)."""
    v = (np.abs(value((2, 5))) * 3).astype(in_dtype)
    x = var_for(v)
    s = x.sum(axis=1, acc_dtype=acc_dtype)
    assert s.owner.op.acc_dtype == acc_dtype
    np.testing.assert_allclose(run([x], s, v), v.sum(axis=1, dtype=acc_dtype), rtol=1e-3)
    with pytest.raises(TypeError, match="would lose precision"):
        T.matrix("f", dtype="float64").sum(acc_dtype="float32")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64"])
def test_mean_with_a_discrete_dtype_is_float64(dtype):
    v = (value((3, 4)) * 5).astype("int32")
    v[:, 0] = [1, -1, 0]  # sums to 0: a bool sum of it is False (Theano's), not numpy's any()
    x = var_for(v)
    m = x.mean(axis=0, dtype=dtype)
    assert m.dtype == "float64"
    # Theano's rule: the sum accumulates in int64 (the int32 input's accumulator), then
    # rounds once to ``dtype``.
    np.testing.assert_allclose(run([x], m, v), v.sum(axis=0, dtype="int64").astype(dtype) / 3.0)


def test_prod_takes_no_zeros_in_input():
    """Theano's promise keyword; the gradient stays right where zeros are."""
    from arignote.gradient import verify_grad
    v = np.array([[1.0, 2.0, 3.0], [0.0, 5.0, 6.0], [0.0, 0.0, 9.0]])
    x = var_for(v)
    for flag in (False, True):
        assert_matches(run([x], T.prod(x, axis=1, no_zeros_in_input=flag), v), np.prod(v, axis=1))
    verify_grad(lambda a: T.prod(a, axis=1, no_zeros_in_input=True), [v])


def test_theano_signature_reduction_ops():
    """Theano's CAReduce(scalar_op, axis=None), Sum(axis), Prod(axis), from tensor.elemwise."""
    from arignote import scalar
    from arignote.gradient import verify_grad
    from arignote.tensor import elemwise
    assert elemwise.CAReduce is CAReduce and elemwise.Prod is T.reduction.Prod
    v = value((2, 3, 4))
    x = var_for(v)
    for axis, ref_axis in ((None, None), (1, 1), ([0, 2], (0, 2)), (-1, 2), ((-3, -1), (0, 2))):
        out = CAReduce(scalar.add, axis=axis)(x)
        assert isinstance(out.owner.op, CAReduce) and all(a >= 0 for a in out.owner.op.axis)
        assert_matches(run([x], out, v), np.sum(v, axis=ref_axis))
        assert_matches(run([x], CAReduce(scalar.maximum, axis)(x), v), np.max(v, axis=ref_axis))
        assert_matches(run([x], elemwise.Sum(axis)(x), v), np.sum(v, axis=ref_axis))
        assert_matches(run([x], elemwise.Prod(axis=axis)(x), v), np.prod(v, axis=ref_axis))
        check_infer_shape([x], out, [v])
    b = T.bmatrix("b")
    assert CAReduce(scalar.add)(b).dtype == "int8"  # Theano's CAReduce keeps the dtype
    assert elemwise.Sum()(b).dtype == "int64" and elemwise.Prod(axis=0)(b).dtype == "int64"
    verify_grad(elemwise.Prod(axis=1), [np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])])
    verify_grad(elemwise.Prod(axis=1, no_zeros_in_input=True), [np.array([[1.0, 2.0], [0.0, 5.0]])])
    with pytest.raises(np.exceptions.AxisError):
        CAReduce(scalar.add, axis=3)(x)
    with pytest.raises(ValueError, match="cannot reduce with sub"):
        CAReduce(scalar.sub)


def test_prod_without_zeros():
    """Theano's ProdWithoutZeros: the product of the non-zero entries, prod's output dtypes,
    Theano's accumulators, and no gradient."""
    from arignote.gradient import NullTypeGradError, grad
    from arignote.tensor.elemwise import ProdWithoutZeros
    v = np.array([[1.0, 2.0, 3.0], [0.0, 5.0, 6.0], [0.0, 0.0, 9.0]])
    x = var_for(v)
    for axis in (None, 0, 1, -1, (0, 1), ()):
        ref_axis = axis if axis != -1 else 1
        expected = np.prod(np.where(v != 0, v, 1), axis=ref_axis)
        out = ProdWithoutZeros(axis=axis)(x)
        assert_matches(run([x], out, v), expected)
        check_infer_shape([x], out, [v])
    assert_matches(run([x], ProdWithoutZeros()(x * 0), v), np.float64(1.0))
    for dtype, out_dtype, acc in (("int8", "int64", "int64"), ("uint16", "uint64", "uint64"),
                                  ("float32", "float32", "float64"), ("bool", "int64", "int64"),
                                  ("complex64", "complex64", "complex128")):
        p = ProdWithoutZeros(axis=0)(T.matrix(dtype=dtype))
        assert (p.dtype, p.owner.op.acc_dtype) == (out_dtype, acc)
    assert ProdWithoutZeros(dtype="float16", acc_dtype="float32")(T.bmatrix()).dtype == "float16"
    with pytest.raises(TypeError, match="would lose precision"):
        ProdWithoutZeros(acc_dtype="int8")(T.lmatrix("l"))
    with pytest.raises(NullTypeGradError, match="no_zeros_in_input"):
        grad(ProdWithoutZeros(axis=0)(x).sum(), x)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_of_complex_numbers_use_numpys_order(dtype, axis, fn):
    """As the elementwise maximum/minimum of complex numbers: numpy's lexicographic order
    (real part, then imaginary part), here with ties in the real parts."""
    rng = np.random.default_rng(3)
    v = (rng.integers(-2, 3, (4, 5)) + 1j * rng.normal(size=(4, 5))).astype(dtype)
    x = T.TensorType(dtype, (False, False))("x")
    y = getattr(x, fn)(axis=axis)
    assert y.dtype == dtype
    expected = getattr(np, fn)(v, axis=np_axis(axis))
    assert_matches(run([x], y, v), np.asarray(expected, dtype=dtype))
    scalar_op = T.maximum.scalar_op if fn == "max" else T.minimum.scalar_op
    by_op = CAReduce(scalar_op, axis=None if axis is None else np_axis(axis))(x)
    assert_matches(run([x], by_op, v), np.asarray(expected, dtype=dtype))


BIT_REDUCERS = {"and_": np.bitwise_and, "or_": np.bitwise_or, "xor": np.bitwise_xor}


@given(arrays_and_axes(), st.sampled_from(["bool", "int8", "uint8", "int32", "int64", "uint64"]),
       st.sampled_from(sorted(BIT_REDUCERS)))
def test_careduce_of_and_or_xor_reduces_the_bits_of_integers(case, dtype, name):
    """Theano's CAReduce(and_/or_/xor) of integers is bitwise, keeping the dtype (a mask of
    flags, a parity); reduced to a bool it is the truth of the elements, as all and any."""
    from arignote import scalar
    shp, axis, _ = case
    v = value(shp, "int64").astype(dtype)
    x = var_for(v)
    axes = tuple(range(len(shp))) if axis is None else np_axis(axis)
    axes = tuple(sorted(a % len(shp) for a in np.atleast_1d(axes)))
    ufunc = BIT_REDUCERS[name]
    out = CAReduce(getattr(scalar, name), axis)(x)
    assert out.dtype == dtype
    assert_matches(run([x], out, v), np.asarray(ufunc.reduce(v, axis=axes), dtype=dtype))
    truth = CAReduce(getattr(scalar, name), axis, dtype="bool")(x)
    assert_matches(run([x], truth, v), np.asarray(ufunc.reduce(v != 0, axis=axes)))
    check_infer_shape([x], out, [v])


def test_careduce_bitwise_keeps_the_bits_on_every_path():
    """The native kernels and the rewrites reduce truth values; a bitwise reduction must not
    reach them as one (0b0110 & 0b0011 is 0b0010, not 1), over a length-1 axis either."""
    from arignote import function, scalar
    v = np.array([[6, 3], [5, 7]], dtype="int8")
    x = T.bmatrix("x")
    row = T.tensor("int8", (True, False), name="row")
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        f = function([x, row], [CAReduce(scalar.and_, 1)(x), CAReduce(scalar.or_, 0)(x),
                                CAReduce(scalar.xor)(x), CAReduce(scalar.and_, 0)(row)], mode=mode)
        both, either, parity, single = f(v, v[:1])
        assert_matches(both, np.array([2, 5], dtype="int8"))
        assert_matches(either, np.array([7, 7], dtype="int8"))
        assert_matches(parity, np.array(6 ^ 3 ^ 5 ^ 7, dtype="int8"))
        assert_matches(single, v[0])
    assert_matches(run([x], T.all(x, axis=1), v), np.array([True, True]))


def test_careduce_bitwise_of_floats_is_refused():
    from arignote import scalar
    x = T.matrix("weights")
    with pytest.raises(TypeError, match="weights.*only integers have bits.*tensor.all"):
        CAReduce(scalar.xor)(x)
    with pytest.raises(TypeError, match="to float64: only integers have bits"):
        CAReduce(scalar.and_, dtype="float64")(T.bmatrix("flags"))
    assert CAReduce(scalar.or_, dtype="bool")(x).dtype == "bool"
