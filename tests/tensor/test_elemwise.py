"""Every entry of the scalar table, compiled through function() and compared with numpy.

One reference table below (numpy twin, dtype rule, accepted dtypes) drives the
tests of every op: random shapes from 0-d to 3-d with broadcasting between
inputs of different ndim, every dtype the op accepts, and the output dtype
Theano gives. The dtype rules are restated here rather than read from
arignote.scalar so that a wrong rule there fails a test.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from arignote import config, function, tensor
from arignote.scalar.ops import TABLE
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.type import TensorType
from tests.utils import NUMPY_FP_WARNINGS_ONLY, assert_matches, run

pytestmark = NUMPY_FP_WARNINGS_ONLY

BOOL = ["bool"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
ALL = BOOL + INTS + FLOATS + COMPLEX
REAL = BOOL + INTS + FLOATS
DISCRETE = BOOL + INTS


# ------------------------------------------------------------------ dtype rules
def upcast(*dtypes: str) -> str:
    """numpy's promotion, kept at floatX when floatX is narrower and no input asks for more."""
    out = np.result_type(*dtypes).name
    rank = {"float16": 0, "float32": 1, "float64": 2}
    floats = [rank[d] for d in dtypes if d in rank]
    if out in rank and floats and rank[out] > rank[config.floatX] >= max(floats):
        return config.floatX
    return out


def to_float(*dtypes: str) -> str:
    small = {"bool", "int8", "uint8", "int16", "uint16"}
    return upcast(*["float32" if d in small else "float64" if d in INTS else d for d in dtypes])


def real_of(*dtypes: str) -> str:
    out = upcast(*dtypes)
    return {"complex64": "float32", "complex128": "float64"}.get(out, out)


def div_rule(x: str, y: str) -> str:
    return config.floatX if x in DISCRETE and y in DISCRETE else to_float(x, y)


def complex_of(*dtypes: str) -> str:
    """Theano's dtype of complex(re, im): complex128 from 64-bit floats and 32/64-bit ints."""
    return "complex128" if upcast(*dtypes) in ("float64", "int64", "uint64", "int32", "uint32") else "complex64"


def boolean(*dtypes: str) -> str:
    return "bool"


def round_away(x):
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))


# name: (numpy twin, dtype rule, dtypes accepted, whether two bool inputs are refused)
REFERENCE = {
    "add": (np.add, upcast, ALL, False),
    "sub": (np.subtract, upcast, ALL, True),
    "mul": (np.multiply, upcast, ALL, False),
    "true_div": (np.true_divide, div_rule, ALL, False),
    "int_div": (np.floor_divide, upcast, REAL, True),
    "mod": (np.mod, upcast, REAL, True),
    "pow": (np.power, upcast, ALL, True),
    "maximum": (np.maximum, upcast, ALL, False),
    "minimum": (np.minimum, upcast, ALL, False),
    "arctan2": (np.arctan2, to_float, REAL, False),
    "lt": (np.less, boolean, ALL, False),
    "gt": (np.greater, boolean, ALL, False),
    "le": (np.less_equal, boolean, ALL, False),
    "ge": (np.greater_equal, boolean, ALL, False),
    "eq": (np.equal, boolean, ALL, False),
    "neq": (np.not_equal, boolean, ALL, False),
    "and_": (np.bitwise_and, upcast, DISCRETE, False),
    "or_": (np.bitwise_or, upcast, DISCRETE, False),
    "xor": (np.bitwise_xor, upcast, DISCRETE, False),
    "invert": (np.invert, upcast, DISCRETE, False),
    "neg": (np.negative, upcast, ALL, True),
    "abs": (np.absolute, real_of, ALL, False),
    "sgn": (np.sign, upcast, REAL, True),
    "floor": (np.floor, to_float, REAL, False),
    "ceil": (np.ceil, to_float, REAL, False),
    "trunc": (np.trunc, to_float, REAL, False),
    "round_half_to_even": (np.rint, to_float, REAL, False),
    "round_half_away_from_zero": (round_away, to_float, REAL, False),
    "sqr": (np.square, upcast, ALL, False),
    "sqrt": (np.sqrt, to_float, ALL, False),
    "inv": (np.reciprocal, to_float, ALL, False),
    "exp": (np.exp, to_float, ALL, False),
    "exp2": (np.exp2, to_float, ALL, False),
    "expm1": (np.expm1, to_float, ALL, False),
    "log": (np.log, to_float, ALL, False),
    "log2": (np.log2, to_float, ALL, False),
    "log10": (np.log10, to_float, ALL, False),
    "log1p": (np.log1p, to_float, ALL, False),
    "sin": (np.sin, to_float, ALL, False),
    "cos": (np.cos, to_float, ALL, False),
    "tan": (np.tan, to_float, ALL, False),
    "arcsin": (np.arcsin, to_float, ALL, False),
    "arccos": (np.arccos, to_float, ALL, False),
    "arctan": (np.arctan, to_float, ALL, False),
    "sinh": (np.sinh, to_float, ALL, False),
    "cosh": (np.cosh, to_float, ALL, False),
    "tanh": (np.tanh, to_float, ALL, False),
    "arcsinh": (np.arcsinh, to_float, ALL, False),
    "arccosh": (np.arccosh, to_float, ALL, False),
    "arctanh": (np.arctanh, to_float, ALL, False),
    "deg2rad": (np.deg2rad, to_float, REAL, False),
    "rad2deg": (np.rad2deg, to_float, REAL, False),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), to_float, REAL, False),
    "softplus": (lambda x: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0), to_float, REAL, False),
    "erf": (sp.erf, to_float, ALL, False),
    "erfc": (sp.erfc, to_float, REAL, False),
    "erfinv": (sp.erfinv, to_float, REAL, False),
    "erfcinv": (sp.erfcinv, to_float, REAL, False),
    "gammaln": (sp.gammaln, to_float, REAL, False),
    "psi": (sp.digamma, to_float, REAL, False),
    "gamma": (sp.gamma, to_float, REAL, False),
    "chi2sf": (stats.chi2.sf, to_float, REAL, False),
    "tri_gamma": (lambda x: sp.polygamma(1, x), to_float, REAL, False),
    "erfcx": (sp.erfcx, to_float, REAL, False),
    "j0": (sp.j0, to_float, REAL, False),
    "j1": (sp.j1, to_float, REAL, False),
    "jv": (sp.jv, to_float, REAL, False),
    "i0": (sp.i0, to_float, REAL, False),
    "i1": (sp.i1, to_float, REAL, False),
    "iv": (sp.iv, to_float, REAL, False),
    "real": (np.real, real_of, ALL, False),
    "imag": (np.imag, real_of, ALL, False),
    "angle": (np.angle, lambda d: real_of(to_float(d)), ALL, False),
    "conj": (np.conjugate, upcast, ALL, False),
    "complex": (lambda re, im: re + 1j * im, complex_of, REAL, False),
    "complex_from_polar": (lambda r, a: r * np.exp(1j * a), complex_of, REAL, False),
    "isnan": (np.isnan, boolean, ALL, False),
    "isinf": (np.isinf, boolean, ALL, False),
    "identity": (np.copy, upcast, ALL, False),
    "switch": (np.where, lambda c, a, b: upcast(a, b), ALL, False),
    # Theano's clip: lo where x < lo, else hi where x > hi (so lo wins when lo > hi).
    "clip": (lambda x, lo, hi: np.select([x < lo, x > hi], [lo, hi], x), upcast, REAL, False),
}
RTOL = {"float16": 5e-3, "float32": 1e-3, "complex64": 1e-3}
SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, np.nan, np.inf, -np.inf]


def test_reference_covers_the_whole_table():
    assert set(REFERENCE) == set(TABLE)


# ------------------------------------------------------------------ data
def make_values(rng: np.random.Generator, shape: tuple, dtype: str, *, exponent: bool = False,
                special: bool = False) -> np.ndarray:
    """Values where every op is interesting: negatives (domain errors), zeros, and for
    floats sometimes nan/inf; exponents of integer powers stay non-negative (numpy
    refuses negative integer powers)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        low = 0 if exponent or dtype.startswith("u") else -4
        return rng.integers(low, 4 if exponent else 9, size=shape).astype(dtype)
    values = rng.uniform(-3, 3, size=shape)
    if special and values.size:
        mask = rng.random(shape) < 0.3
        values[mask] = rng.choice(SPECIAL, size=int(mask.sum()))
    if dtype in COMPLEX:
        values = values + 1j * rng.uniform(-3, 3, size=shape)
    return values.astype(dtype)


def reference(name: str, values: list[np.ndarray], out_dtype: str) -> np.ndarray:
    """The numpy twin, computed in double precision where the result is inexact."""
    fn = REFERENCE[name][0]
    if np.dtype(out_dtype).kind in "fc" and name != "switch":
        # float16 stays float16: numpy's own float16 loops decide edge cases (pow of
        # -inf, say) differently from any wider reference.
        if out_dtype != "float16":
            values = [v.astype("complex128" if v.dtype.kind == "c" else "float64") for v in values]
    return np.asarray(fn(*values)).astype(out_dtype)


def symbolic(dtype: str, shape: tuple, mark_broadcastable: bool, name: str, full: tuple = ()):
    """A variable for values of ``shape``. Length-1 dimensions that must stretch to the
    broadcast shape ``full`` are broadcastable (the types decide broadcasting); other
    length-1 dimensions are when ``mark_broadcastable``."""
    pad = len(full) - len(shape)
    return TensorType(dtype, [n == 1 and (mark_broadcastable or full[pad + i] != 1)
                              for i, n in enumerate(shape)])(name)


def check(name: str, dtypes: list[str], shapes: list[tuple], marks: list[bool], seed: int,
          special: bool = False) -> None:
    rng = np.random.default_rng(seed)
    op = TABLE[name]
    exponent = name == "pow" and all(d in DISCRETE for d in dtypes)
    values = [make_values(rng, s, d, exponent=exponent and i == 1, special=special)
              for i, (s, d) in enumerate(zip(shapes, dtypes))]
    full = np.broadcast_shapes(*shapes)
    xs = [symbolic(d, s, m, f"x{i}", full) for i, (d, s, m) in enumerate(zip(dtypes, shapes, marks))]
    out = Elemwise(op)(*xs)
    expected_dtype = REFERENCE[name][1](*dtypes)
    assert out.dtype == expected_dtype, f"{name}{tuple(dtypes)} gave {out.dtype}"
    actual = run(xs, out, *values)
    expected = reference(name, values, expected_dtype)
    assert_matches(actual, expected, rtol=RTOL.get(expected_dtype))


def accepted(name: str) -> list[str]:
    accepts, no_bool = REFERENCE[name][2], REFERENCE[name][3]
    return [d for d in accepts if not (no_bool and d == "bool")]


def shapes_for(nin: int):
    return mutually_broadcastable_shapes(num_shapes=nin, min_dims=0, max_dims=3, min_side=0,
                                         max_side=4).map(lambda s: s.input_shapes)


# ------------------------------------------------------------------ the table tests
@pytest.mark.parametrize("name", list(REFERENCE))
@settings(max_examples=8)
@given(data=st.data())
def test_every_op_on_every_accepted_dtype(name, data):
    """Same dtype for every input; each accepted dtype on the same random shapes."""
    nin = TABLE[name].nin
    shapes = data.draw(shapes_for(nin), label="shapes")
    marks = data.draw(st.lists(st.booleans(), min_size=nin, max_size=nin), label="broadcastable")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    for dtype in accepted(name):
        dtypes = [dtype] * nin
        if name == "switch":
            dtypes[0] = "bool"
        check(name, dtypes, shapes, marks, seed, special=dtype in FLOATS)


@pytest.mark.parametrize("name", [n for n in REFERENCE if TABLE[n].nin > 1])
@given(data=st.data())
def test_every_op_on_mixed_dtypes(name, data):
    """Inputs of different dtypes meet by numpy's promotion (Theano's upcast)."""
    nin = TABLE[name].nin
    pool = accepted(name) if not REFERENCE[name][3] else REFERENCE[name][2]
    dtypes = data.draw(st.lists(st.sampled_from(pool), min_size=nin, max_size=nin), label="dtypes")
    if REFERENCE[name][3] and all(d == "bool" for d in dtypes):
        dtypes[0] = "int8"
    shapes = data.draw(shapes_for(nin), label="shapes")
    marks = data.draw(st.lists(st.booleans(), min_size=nin, max_size=nin), label="broadcastable")
    if name in ("and_", "or_", "xor") and np.result_type(*dtypes).kind == "f":
        with pytest.raises(TypeError, match="cast both inputs to int64"):
            Elemwise(TABLE[name])(*[TensorType(d, ())() for d in dtypes])
        return
    check(name, dtypes, shapes, marks, data.draw(st.integers(0, 2**32 - 1), label="seed"))


@pytest.mark.parametrize("name", list(REFERENCE))
def test_refused_dtypes_fail_at_build_time(name):
    nin = TABLE[name].nin
    for dtype in sorted(set(ALL) - set(REFERENCE[name][2])):
        x = TensorType(dtype, (False,))("x")
        with pytest.raises(TypeError, match=rf"{name}.*'x'.*{dtype}"):
            Elemwise(TABLE[name])(*[x] * nin)
    if REFERENCE[name][3]:
        b = tensor.tensor("bool", (False,), name="b")
        with pytest.raises(TypeError, match=rf"{name} is not defined for bool inputs"):
            Elemwise(TABLE[name])(*[b] * nin)


def test_integer_only_ops_name_the_input_and_the_fix():
    x = tensor.fvector("x")
    with pytest.raises(TypeError) as info:
        tensor.and_(tensor.ivector("i"), x)
    message = str(info.value)
    assert "'x'" in message and "float32" in message and "astype" in message


# ------------------------------------------------------------------ dtype examples
@pytest.mark.parametrize("build, dtype", [
    (lambda: tensor.exp(tensor.bvector()), "float32"),
    (lambda: tensor.exp(tensor.ivector()), "float64"),
    (lambda: tensor.ivector() / tensor.ivector(), "float64"),
    (lambda: tensor.bvector() / tensor.bvector(), "float64"),
    (lambda: tensor.ivector() // tensor.ivector(), "int32"),
    (lambda: tensor.ivector() < tensor.fvector(), "bool"),
    (lambda: tensor.bvector() + tensor.wvector(), "int16"),
    (lambda: tensor.ivector() + tensor.fvector(), "float64"),
    (lambda: tensor.fvector() + 1.5, "float32"),
    (lambda: tensor.fvector() + 1.1, "float64"),
    (lambda: tensor.dvector() + 1.5, "float64"),
    (lambda: tensor.bvector() + 1000, "int16"),
    (lambda: tensor.bvector() + 1, "int8"),
    (lambda: tensor.bvector() * 1.5, "float32"),
    (lambda: tensor.fvector() * np.float64(1.5), "float64"),
    (lambda: tensor.ivector() + True, "int32"),
    (lambda: tensor.fvector() + 1j, "complex128"),
    (lambda: abs(tensor.cvector()), "float32"),
])
def test_output_dtype_under_default_floatx(build, dtype):
    assert build().dtype == dtype


@pytest.mark.parametrize("build, dtype", [
    (lambda: tensor.ivector() / tensor.ivector(), "float32"),
    (lambda: tensor.ivector() + tensor.fvector(), "float32"),
    (lambda: tensor.lvector() * 1.1, "float32"),
    (lambda: tensor.fvector() + 1.1, "float32"),
    (lambda: tensor.exp(tensor.ivector()), "float64"),
    (lambda: tensor.ivector() + tensor.dvector(), "float64"),
    (lambda: tensor.lvector() + tensor.lvector(), "int64"),
])
def test_output_dtype_keeps_float32_under_floatx_float32(build, dtype):
    """Theano's rule: integers mixed with floatX stay floatX unless float64 is asked for."""
    with config.change_flags(floatX="float32"):
        assert build().dtype == dtype


def test_int_float_mix_under_float32_computes_in_float32():
    with config.change_flags(floatX="float32"):
        i, f = tensor.ivector("i"), tensor.fvector("f")
        iv, fv = np.array([1, 2, 3], "int32"), np.array([0.5, 0.25, 2], "float32")
        assert_matches(run([i, f], i * f, iv, fv), (iv * fv).astype("float32"))
        assert_matches(run([i], i / i, iv), np.ones(3, "float32"))


def test_domain_errors_give_nan_like_numpy():
    x = tensor.dvector("x")
    values = np.array([-1.0, 0.0, 1.0])
    out = run([x], [tensor.log(x), tensor.sqrt(x), tensor.arcsin(x * 2)], values)
    with np.errstate(all="ignore"):
        for got, want in zip(out, [np.log(values), np.sqrt(values), np.arcsin(values * 2)]):
            assert_matches(got, want)


def test_zero_d_results_are_arrays():
    x = tensor.fscalar("x")
    out = run([x], tensor.exp(x), np.float32(0.5))
    assert type(out) is np.ndarray and out.shape == () and out.dtype == np.float32


# ------------------------------------------------------------------ the ops themselves
def test_elemwise_identity_and_repr():
    assert Elemwise(TABLE["exp"]) == Elemwise(TABLE["exp"])
    assert hash(Elemwise(TABLE["exp"])) == hash(Elemwise(TABLE["exp"]))
    assert Elemwise(TABLE["exp"]) != Elemwise(TABLE["exp"], {0: 0})
    assert Elemwise(TABLE["exp"]) != Elemwise(TABLE["log"])
    assert str(Elemwise(TABLE["exp"])) == "Elemwise{exp,no_inplace}"
    assert str(Elemwise(TABLE["exp"], {0: 0})) == "Elemwise{exp,inplace}"
    assert str(tensor.exp(tensor.vector()).owner.op) == "Elemwise{exp,no_inplace}"


def test_inputs_of_fewer_dimensions_are_padded_on_the_left():
    x, y = tensor.vector("x"), tensor.tensor3("y")
    node = (x + y).owner
    assert node.inputs[1] is y
    assert isinstance(node.inputs[0].owner.op, DimShuffle)
    assert node.inputs[0].broadcastable == (True, True, False)
    assert (x + y).broadcastable == (False, False, False)
    assert (tensor.row() + tensor.col()).broadcastable == (False, False)
    assert (tensor.row() + tensor.row()).broadcastable == (True, False)


def test_wrong_number_of_inputs():
    with pytest.raises(TypeError, match="takes 2 inputs, got 1"):
        Elemwise(TABLE["add"])(tensor.vector())


def test_perform_reuses_the_output_buffer_only_when_it_fits():
    x = tensor.dvector("x")
    node = tensor.exp(x).owner
    cell = [np.empty(3)]
    buffer = cell[0]
    node.op.perform(node, [np.zeros(3)], [cell])
    assert cell[0] is buffer and np.array_equal(buffer, np.ones(3))
    node.op.perform(node, [np.zeros(2)], [cell])
    assert cell[0].shape == (2,)


def test_perform_never_modifies_its_inputs_and_identity_copies():
    x = tensor.dvector("x")
    values = np.array([1.0, 2.0])
    out = function([x], [tensor.tensor_copy(x), tensor.neg(x)])(values)
    assert np.array_equal(values, [1.0, 2.0])
    assert not np.shares_memory(out[0], values)


def test_identity_and_invert_on_bool():
    b = tensor.tensor("bool", (False,), name="b")
    values = np.array([True, False])
    assert_matches(run([b], tensor.identity(b), values), values)
    assert_matches(run([b], ~b, values), ~values)


def test_infer_shape_prefers_non_broadcastable_inputs():
    x, r = tensor.matrix("x"), tensor.row("r")
    node = (r + x).owner
    assert node.op.infer_shape(None, node, [(1, "n"), ("a", "b")]) == [("a", "n")]
    node = (r * r).owner
    assert node.op.infer_shape(None, node, [(1, "n"), (1, "m")]) == [(1, "n")]


def test_dimshuffle_views_and_errors():
    x = tensor.tensor("float64", (False, True, False), name="x")
    y = x.dimshuffle(2, "x", 0)
    assert y.broadcastable == (False, True, False)
    values = np.arange(6.0).reshape(2, 1, 3)
    assert_matches(run([x], y, values), values[:, 0, :].T[:, None, :])
    assert DimShuffle((False,), (0, "x")) == DimShuffle((False,), (0, "x"))
    with pytest.raises(ValueError, match="drops axis 0"):
        x.dimshuffle(1, 2)
    with pytest.raises(ValueError, match="repeats an axis: an axis may not appear twice"):
        x.dimshuffle(0, 0, 2)
    with pytest.raises(ValueError, match="neither 'x' nor an axis"):
        x.dimshuffle(0, 1, 5)


def test_theano_scalar_names():
    """theano.scalar's ops by name build Elemwise ops; its dtype groups list scalar types."""
    from arignote import scalar
    assert scalar.add is TABLE["add"] and scalar.or_ is TABLE["or_"]
    x, y = tensor.dvector("x"), tensor.dvector("y")
    xv, yv = np.array([1.0, -2.0, 3.0]), np.array([0.5, 4.0, -1.0])
    out = function([x, y], [Elemwise(scalar.maximum)(x, y), Elemwise(scalar.mul)(x, y)])(xv, yv)
    np.testing.assert_array_equal(out[0], np.maximum(xv, yv))
    np.testing.assert_array_equal(out[1], xv * yv)
    assert set(scalar.all_types) == set(scalar.discrete_types) | set(scalar.continuous_types)
    assert scalar.bool in scalar.discrete_types and scalar.bool not in scalar.integer_types
    assert list(map(str, scalar.float_types)) == ["float16", "float32", "float64"]
    c = scalar.constant(3, dtype="int16")
    assert c.ndim == 0 and c.dtype == "int16" and c.astype("int32").dtype == "int32"
    with pytest.raises(TypeError, match="takes a number"):
        scalar.constant([1, 2])
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        _ = scalar.nonsense
    # Static, as in Theano; NaNs compare equal, dtypes must match unless told otherwise.
    values_eq = tensor.TensorType.values_eq
    assert values_eq(np.ones(2), np.ones(2)) and values_eq(np.array(np.nan), np.float64(np.nan))
    assert values_eq(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
    assert not values_eq(np.array([1.0, np.nan]), np.array([np.nan, 1.0]))
    assert not values_eq(np.ones(2), np.ones(2, "float32"))
    assert values_eq(np.ones(2), np.ones(2, "float32"), force_same_dtype=False)
    assert not values_eq(np.ones(2), np.ones(3)) and values_eq(np.arange(3), np.arange(3))
