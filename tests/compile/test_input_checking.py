"""Input checking: Theano's TensorType.filter rules and the call-signature errors.

A user's mistake must raise an error that names the input, what was expected,
what came and the fix; it must never corrupt state.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arignote import In, MissingInputError, UnusedInputError, config, function, shared
from arignote import tensor as T
from tests.utils import AddOneInplace

NUMERIC = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"]


def identity(var, **kwargs):
    return function([var], var, **kwargs)


# -------------------------------------------------------------- ndarrays
def test_exact_dtype_ndarray_passes_without_copy_into_the_graph():
    x = T.vector("x")
    a = np.arange(3.0)
    assert function([In(x, borrow=True)], x)(a) is a


def test_lossless_upcast_is_converted():
    out = identity(T.dvector("x"))(np.arange(3, dtype="float32"))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [0, 1, 2])


@pytest.mark.parametrize("src", NUMERIC)
@pytest.mark.parametrize("dst", ["int32", "float32", "float64"])
def test_ndarray_accepted_exactly_when_numpy_upcasts_it_to_the_input_dtype(src, dst):
    f = identity(T.TensorType(dst, (False,))("x"))
    value = np.zeros(2, dtype=src)
    if np.result_type(src, dst) == np.dtype(dst):
        assert f(value).dtype == np.dtype(dst)
    else:
        with pytest.raises(TypeError):
            f(value)


def test_wider_dtype_is_refused_with_a_message_naming_input_type_value_and_fix():
    f = identity(T.fvector("x"))
    with pytest.raises(TypeError) as info:
        f(np.zeros(3))
    message = str(info.value)
    assert "'x'" in message  # the input
    assert "float32 vector" in message  # what was expected
    assert "float64 array of shape (3,)" in message  # what came
    assert "numpy.asarray(v, 'float32')" in message and "allow_input_downcast" in message  # fix


def test_ndarray_subclass_comes_in_as_a_plain_ndarray():
    m = T.matrix("m")
    out = function([In(m, borrow=True)], m)(np.ma.masked_array(np.ones((2, 2))))
    assert type(out) is np.ndarray


# ------------------------------------------------ Python lists and scalars
def test_list_of_ints_into_int32_vector():
    out = identity(T.ivector("x"))([1, 2])
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [1, 2])


@given(st.lists(st.integers(-2**40, 2**40), min_size=1, max_size=5))
def test_list_into_int32_accepted_exactly_when_every_value_fits(values):
    f = identity(T.ivector("x"))
    info = np.iinfo(np.int32)
    if all(info.min <= v <= info.max for v in values):
        np.testing.assert_array_equal(f(values), values)
    else:
        with pytest.raises(TypeError, match="values change"):
            f(values)


def test_python_float_that_is_not_an_int_is_refused_for_int_input():
    with pytest.raises(TypeError, match="'x'.*int32 vector.*float 1.5"):
        identity(T.ivector("x"))(1.5)
    with pytest.raises(TypeError, match="values change"):
        identity(T.iscalar("x"))(1.5)
    assert identity(T.iscalar("x"))(2.0) == 2


def test_python_float_into_float32_is_refused_when_floatx_is_float64():
    with pytest.raises(TypeError, match="'x'.*float32 scalar.*float 0.1"):
        identity(T.fscalar("x"))(0.1)
    assert identity(T.fscalar("x"))(0.5) == 0.5  # exactly representable


def test_python_float_into_floatx_input_is_accepted():
    with config.change_flags(floatX="float32"):
        x = T.scalar("x")
        out = identity(x)(0.1)
    assert out.dtype == np.float32 and out == np.float32(0.1)


def test_python_float_into_floatx_refused_when_downcast_explicitly_false():
    with config.change_flags(floatX="float32"):
        x = T.scalar("x")
        with pytest.raises(TypeError):
            identity(x, allow_input_downcast=False)(0.1)


def test_list_of_floats_into_float32_vector_needs_exact_values():
    f = identity(T.fvector("x"))
    np.testing.assert_array_equal(f([0.5, 0.25]), [0.5, 0.25])
    with pytest.raises(TypeError, match="values change"):
        f([0.1])


@pytest.mark.parametrize("value, fix", [
    ("abc", r"got str 'abc': text is not read as numbers: parse it first \(float\(s\)"),
    ("3", r"got str '3': text is not read as numbers"),
    (b"1", r"got bytes b'1': text is not read as numbers"),
    (["a", "b"], r"it holds text: parse it first"),
    (np.array(["1.5"]), r"got <U3 array of shape \(1,\): it holds text"),
    (None, r"got NoneType None: None is not a value: pass an array, such as "
           r"numpy.zeros\(shape, 'float64'\)"),
    ([1.0, None], r"it holds NoneType None among its entries: replace such entries by numbers "
                  r"\(numpy.nan for a missing float\)"),
    (object(), r"a value of type object is not array-like: pass a numpy array such as numpy.zeros"),
    ({"a": 1}, r"a dict is not an array: pass its values, e.g. numpy.asarray\(list\(d.values\(\)\)\)"),
    ([[1, 2], [3]], r"whose rows have different lengths.*give every row the same length"),
], ids=["str", "numeric str", "bytes", "list of str", "str array", "None", "None inside", "object",
        "dict", "ragged"])
@pytest.mark.parametrize("downcast", [None, True])
def test_non_numeric_values_say_what_was_expected_and_how_to_convert(value, fix, downcast):
    # Never a cast that would fail itself; allow_input_downcast does not turn None into nan
    # or parse text either.
    f = identity(T.vector("x"), allow_input_downcast=downcast)
    with pytest.raises(TypeError, match=r"input 'x' expects float64 vector, .*" + fix) as info:
        f(value)
    assert "numpy.asarray(v, 'float64')" not in str(info.value)


def test_allow_input_downcast_relaxes_every_conversion():
    assert identity(T.fscalar("x"), allow_input_downcast=True)(0.1) == np.float32(0.1)
    out = identity(T.ivector("x"), allow_input_downcast=True)(np.array([1.7, 2.2]))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [1, 2])
    x = T.fvector("x")
    assert function([In(x, allow_downcast=True)], x)(np.zeros(2)).dtype == np.float32


def test_in_strict_accepts_only_the_exact_ndarray():
    x = T.dvector("x")
    f = function([In(x, strict=True)], x)
    with pytest.raises(TypeError, match="strict"):
        f(np.zeros(2, dtype="float32"))
    with pytest.raises(TypeError, match="strict"):
        f([1.0])


# ---------------------------------------------------------- ndim, broadcast
def test_wrong_ndim_is_refused():
    with pytest.raises(TypeError, match=r"'x'.*float64 vector \(1 dimension\).*2 dimensions"):
        identity(T.vector("x"))(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="0 dimensions"):
        identity(T.vector("x"))(1.0)


def test_broadcastable_dims_must_have_length_one():
    f = identity(T.row("r"))
    assert f(np.zeros((1, 4))).shape == (1, 4)
    with pytest.raises(TypeError, match=r"'r'.*dimension 0 has length 1.*\(2, 4\)"):
        f(np.zeros((2, 4)))


# ------------------------------------------------------------ call errors
@pytest.fixture
def add_xy():
    x, y = T.vector("x"), T.vector("y")
    return function([x, y], x + y)


def test_too_many_arguments(add_xy):
    with pytest.raises(TypeError, match="at most 2 arguments.*got 3"):
        add_xy([1.0], [2.0], [3.0])


def test_unknown_keyword(add_xy):
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'.*'x', 'y'"):
        add_xy([1.0], z=[2.0])


def test_same_input_by_position_and_keyword(add_xy):
    with pytest.raises(TypeError, match="'x' both by position and by name"):
        add_xy([1.0], [2.0], x=[3.0])


def test_missing_input(add_xy):
    with pytest.raises(TypeError, match="missing input 'y'"):
        add_xy([1.0])


def test_keyword_shared_by_two_inputs_is_ambiguous():
    f = function([T.vector("x"), T.vector("x")], [], on_unused_input="ignore")
    with pytest.raises(TypeError, match="several inputs named 'x'"):
        f([1.0], x=[2.0])
    assert f([1.0], [2.0]) == []


def test_inputs_by_keyword(add_xy):
    np.testing.assert_array_equal(add_xy(y=[1.0], x=[2.0]), [3.0])


def test_bad_value_does_not_leave_the_function_broken(add_xy):
    with pytest.raises(TypeError):
        add_xy([1.0], "nope")
    np.testing.assert_array_equal(add_xy([1.0], [2.0]), [3.0])


# ------------------------------------------------------- compile-time checks
def test_unused_input_raises_by_default():
    x, y = T.vector("x"), T.vector("y")
    with pytest.raises(UnusedInputError, match="'y'.*on_unused_input"):
        function([x, y], x * 2)


def test_unused_input_warn_and_ignore():
    x, y = T.vector("x"), T.vector("y")
    with pytest.warns(UserWarning, match="'y'"):
        f = function([x, y], x * 2, on_unused_input="warn")
    np.testing.assert_array_equal(f([1.0], [5.0]), [2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        function([x, y], x * 2, on_unused_input="ignore")
    with config.change_flags(on_unused_input="ignore"):
        function([x, y], x * 2)


def test_output_needing_an_input_not_given_names_it():
    x, z = T.vector("x"), T.vector("z")
    with pytest.raises(MissingInputError, match="'z'.*inputs list") as info:
        function([x], x + z)
    assert info.value.variable is z


def test_shared_variable_as_explicit_input_is_refused():
    s = shared(np.zeros(2), "s")
    with pytest.raises(TypeError, match=r"Cannot use a shared variable \(s\) as explicit input.*givens"):
        function([s], s * 2)


def test_input_listed_twice_is_refused():
    x = T.vector("x")
    with pytest.raises(UnusedInputError, match="given twice"):  # Theano's class (a ValueError)
        function([x, x], x)


def test_an_intermediate_input_cuts_the_graph():
    m = T.matrix("m")
    mt = m.T
    f = function([mt], mt * 2)
    np.testing.assert_array_equal(f(np.ones((2, 3), dtype=config.floatX)), np.full((2, 3), 2))
    with pytest.raises(UnusedInputError, match="'m'"):
        function([m, mt], mt * 2)


def test_inputs_must_be_a_list_of_variables():
    x = T.vector("x")
    with pytest.raises(TypeError, match=r"list of inputs"):
        function(x, x)
    with pytest.raises(TypeError, match="symbolic"):
        function([np.zeros(2)], x)


def test_graph_that_overwrites_an_input_needs_accept_inplace():
    x = T.vector("x")
    with pytest.raises(TypeError, match="accept_inplace=True"):
        function([x], AddOneInplace()(x))


# -------------------------------------------------------- shared set_value
@pytest.mark.parametrize("bad", [np.zeros((3, 1)), np.zeros(3, dtype="complex128"), ["a", "b", "c"]],
                         ids=["ndim", "dtype", "strings"])
def test_set_value_refuses_a_wrong_value_and_keeps_the_old_one(bad):
    s = shared(np.arange(3.0), "s")
    before = s.get_value(borrow=True)
    with pytest.raises(TypeError, match="shared variable 's'"):
        s.set_value(bad)
    assert s.get_value(borrow=True) is before


def test_set_value_wrong_dtype_message_names_the_shared_fix():
    s = shared(np.zeros(3, dtype="float32"), "s")
    with pytest.raises(TypeError, match="float32 vector.*float64 array.*allow_downcast=True") as info:
        s.set_value(np.zeros(3))
    assert "allow_input_downcast" not in str(info.value)


def test_set_value_converts_lossless_values():
    s = shared(np.zeros(3), "s")
    s.set_value(np.ones(3, dtype="float32"))
    assert s.get_value().dtype == np.float64
    s.set_value([1, 2, 3])
    np.testing.assert_array_equal(s.get_value(), [1, 2, 3])


def test_strict_shared_accepts_only_the_exact_dtype():
    s = shared(np.zeros(3), "s", strict=True)
    with pytest.raises(TypeError, match="strict"):
        s.set_value(np.zeros(3, dtype="float32"))
    with pytest.raises(TypeError, match="strict"):
        s.set_value([1.0, 2.0, 3.0])
    s.set_value(np.ones(3))
    np.testing.assert_array_equal(s.get_value(), [1, 1, 1])


def test_shared_allow_downcast_accepts_a_wider_value():
    s = shared(np.zeros(2, dtype="float32"), "s", allow_downcast=True)
    s.set_value(np.array([0.1, 0.2]))
    assert s.get_value().dtype == np.float32


def test_shared_of_other_values_is_generic_and_refused_in_expressions():
    """Theano's rule: a value that is not an array is held as it is (type generic)."""
    from arignote.graph.types import generic
    s = shared([1, 2], "s")
    assert s.type is generic and s.get_value() == [1, 2] and s.get_value() is not s.storage[0]
    s.set_value("text")
    assert s.get_value() == "text"
    with pytest.raises(TypeError, match="expected a tensor, got s of type generic"):
        T.exp(s)
    assert shared(np.array([object()])).type is generic
    with pytest.raises(TypeError, match="no constructor accepts int with arguments \\['bad_kw'\\]"):
        shared(7, bad_kw=False)


def test_allow_input_downcast_does_not_drop_an_imaginary_part():
    f = identity(T.vector("x"), allow_input_downcast=True)
    for value in (1 + 2j, np.array([1 + 2j])):
        with pytest.raises(TypeError, match=r"would drop the imaginary part; take numpy.real\(v\)"):
            f(value)
