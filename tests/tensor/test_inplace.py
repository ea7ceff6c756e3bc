"""``tensor.inplace``: every ``*_inplace`` op writes into its first input and computes what
its out-of-place op does (checked against numpy for the common ones); graphs holding one
need ``accept_inplace=True``; readers of the overwritten input see its old value."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import In, function, tensor as T
from arignote.scalar.ops import TABLE, TransferType
from arignote.tensor import inplace
from arignote.tensor.elemwise import Elemwise

NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "true_div": np.true_divide,
         "exp": np.exp, "neg": np.negative, "sqrt": np.sqrt, "maximum": np.maximum,
         "pow": np.power, "tanh": np.tanh, "abs_": np.abs, "sqr": np.square, "log1p": np.log1p}
BOOL = {"lt", "gt", "le", "ge", "eq", "neq", "and_", "or_", "xor", "invert"}
INT_ONLY = {"and_", "or_", "xor", "invert"}


def _names():
    return sorted(n[:-len("_inplace")] for n in inplace.__all__ if n not in
                  ("second_inplace", "fill_inplace", "transpose_inplace"))


@pytest.mark.parametrize("name", _names())
def test_inplace_op_overwrites_its_first_input(name):
    op = getattr(inplace, f"{name}_inplace")
    out_of_place = T.math.elemwise_of({"abs_": "abs"}.get(name, name))
    dtype = "int8" if name in BOOL else "float64"
    rng = np.random.default_rng(0)
    nin = op.scalar_op.nin
    values = [(rng.integers(0, 2, 5) if name in INT_ONLY else rng.random(5) * 0.8 + (1.1 if name == "arccosh" else 0.1)).astype(dtype)
              for _ in range(nin)]
    variables = [T.vector(dtype=dtype) for _ in range(nin)]
    if name in BOOL:  # comparisons give bool-like int8: the first input must hold that
        variables[0] = T.vector(dtype="int8" if name in INT_ONLY else "bool")
        values[0] = values[0].astype(variables[0].dtype)
        if name not in INT_ONLY:
            variables[1:] = [T.vector(dtype="bool") for _ in variables[1:]]
            values[1:] = [v.astype("bool") for v in values[1:]]
    try:
        expected = function(variables, out_of_place(*variables))(*values)
    except TypeError:
        pytest.skip(f"{name} does not take these dtypes")
    if expected.dtype != values[0].dtype:
        with pytest.raises(TypeError, match="in place"):
            op(*variables)
        return
    f = function([In(variables[0], mutable=True)] + variables[1:], op(*variables), accept_inplace=True)
    first = values[0].copy()
    got = f(first, *values[1:])
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(first, expected, rtol=1e-12)  # written into the argument
    if name in NUMPY:
        np.testing.assert_allclose(got, NUMPY[name](*values), rtol=1e-12)


def test_inplace_needs_accept_inplace_and_a_fitting_first_input():
    x, m = T.dvector("x"), T.dmatrix("m")
    with pytest.raises(TypeError, match="accept_inplace"):
        function([x], inplace.exp_inplace(x))
    with pytest.raises(TypeError, match="in place"):
        inplace.add_inplace(x, m)  # a vector cannot hold a matrix
    with pytest.raises(TypeError, match="in place"):
        inplace.true_div_inplace(T.ivector(), T.ivector())  # nor an int vector a float result


def test_readers_see_the_old_value_and_second_and_transpose():
    x, y = T.dvector("x"), T.dvector("y")
    f = function([In(x, mutable=True), y], [inplace.mul_inplace(x, y), x + 1], accept_inplace=True)
    prod, plus = f(np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0]))
    np.testing.assert_array_equal(prod, [2, 4, 6])
    np.testing.assert_array_equal(plus, [2, 3, 4])
    g = function([In(x, mutable=True), y], inplace.fill_inplace(x, y), accept_inplace=True)
    np.testing.assert_array_equal(g(np.zeros(3), np.full(3, 7.0)), [7, 7, 7])
    m = T.dmatrix()
    v = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(function([m], inplace.transpose_inplace(m))(v), v.T)


def test_every_inplace_op_is_a_table_entry_on_input_0():
    ops = {name: op for name, op in vars(inplace).items() if name.endswith("_inplace") and isinstance(op, Elemwise)}
    assert len(ops) == len(_names()) + 2  # and second/fill
    for name, op in ops.items():
        assert op.destroy_map == {0: [0]}, name
        assert isinstance(op.scalar_op, TransferType) and op.scalar_op.index == 0, name
        assert name in ("second_inplace", "fill_inplace") or op.scalar_op.base in TABLE.values()
    assert inplace.add_inplace.scalar_op != TABLE["add"]  # its dtype rule is another


@pytest.mark.parametrize("name", ["neg", "exp", "add", "mul", "sqr", "maximum"])
def test_inplace_op_equals_the_in_place_rewrites_op(name):
    # Theano compared the rewrite's node op with ``inplace.neg_inplace`` (test_sigm): the same
    # scalar op on the same destroyed input is one op, with one hash, whichever made it.
    op = getattr(inplace, f"{name}_inplace")
    rewritten = Elemwise(TABLE[name], {0: 0})
    assert op == rewritten and rewritten == op and hash(op) == hash(rewritten)
    x = T.vector("x")
    built = op(*[x] * TABLE[name].nin).owner.op
    assert built == rewritten and hash(built) == hash(rewritten)
    assert op != Elemwise(TABLE[name]) and op != Elemwise(TABLE["sub" if name != "sub" else "add"], {0: 0})


def test_neg_inplace_is_the_op_the_rewrite_puts_in_a_compiled_graph():
    from arignote.compile.mode import FAST_RUN
    x = T.vector("x")
    f = function([x], T.fill(x, -1.0) / (1 + T.exp(-x)), mode=FAST_RUN.excluding("fusion"))
    ops = [node.op for node in f.maker.fgraph.toposort()]
    assert inplace.neg_inplace in ops and ops[-1] == inplace.neg_inplace
    data = np.linspace(-3.0, 3.0, 7)
    np.testing.assert_allclose(f(data), -1.0 / (1.0 + np.exp(-data)))


@pytest.mark.parametrize("n", [6, 100_000], ids=["small", "large"])
@pytest.mark.parametrize("mode", [None, "FAST_COMPILE", "DebugMode"])
def test_the_result_takes_the_first_inputs_dtype(n, mode):
    # Theano's transfer_type(0): a float result written into ints is truncated, as astype does.
    if mode == "DebugMode" and n > 6:
        pytest.skip("DebugMode checks every node twice; the small arrays suffice")
    i, d = T.lvector("i"), T.dvector("d")
    ints, floats = np.arange(n) - n // 2, np.linspace(-2.5, 2.5, n)
    expected = (ints + floats).astype("int64")
    f = function([i, d], inplace.add_inplace(i, d), accept_inplace=True, mode=mode)
    assert f.maker.fgraph.outputs[0].dtype == "int64"
    given = ints.copy()
    np.testing.assert_array_equal(f(given, floats), expected)
    np.testing.assert_array_equal(given, expected)
    gamma = function([i], inplace.gamma_inplace(i), accept_inplace=True, mode=mode)
    small = np.arange(1, 7)
    np.testing.assert_array_equal(gamma(small.copy()), [1, 1, 2, 6, 24, 120])
    f32 = T.fvector("f32")
    g = function([f32, d], inplace.mul_inplace(f32, d), accept_inplace=True, mode=mode)
    assert g(np.ones(3, "float32"), np.full(3, 1.5)).dtype == "float32"


def test_ops_that_keep_their_own_dtype_hold_it_in_place_only_where_it_fits():
    # Comparisons are bool, bitwise ops the upcast, true division of integers floatX (Theano's).
    x, i8, i16 = T.dvector("x"), T.bvector("i8"), T.wvector("i16")
    for build in (lambda: inplace.lt_inplace(x, x), lambda: inplace.xor_inplace(i8, i16),
                  lambda: inplace.true_div_inplace(i16, i16)):
        with pytest.raises(TypeError, match="in place"):
            build()
    assert inplace.xor_inplace(i16, i8).dtype == "int16"
    assert inplace.lt_inplace(T.vector(dtype="bool"), x).dtype == "bool"
    assert inplace.true_div_inplace(x, i16).dtype == "float64"
