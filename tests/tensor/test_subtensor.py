"""Indexing against numpy: basic, integer-array and mask indexing, set/inc_subtensor,
their infer_shape, and the errors bad indices give."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from arignote import function
from arignote import tensor as T
from arignote.tensor.shape import Shape_i
from arignote.gradient import verify_grad
from arignote.tensor.subtensor import (AdvancedBooleanIncSubtensor, AdvancedBooleanSubtensor,
                                       AdvancedIncSubtensor, AdvancedIncSubtensor1, AdvancedSubtensor,
                                       AdvancedSubtensor1, IncSubtensor, Subtensor, advanced_inc_subtensor,
                                       advanced_inc_subtensor1, advanced_set_subtensor,
                                       advanced_set_subtensor1, advanced_subtensor, advanced_subtensor1,
                                       get_canonical_form_slice, slice_length)
from arignote.tensor.variable import as_tensor_variable
from tests.utils import assert_matches, check_infer_shape, run, value, var_for

DTYPES = ["bool", "int8", "int64", "float32", "float64", "complex64"]


def symbolize(index):
    """The index with each int and slice bound replaced by an int64 scalar input."""
    inputs, values = [], []

    def sym(item):
        if isinstance(item, (int, np.integer)):
            var = T.lscalar(f"i{len(inputs)}")
            inputs.append(var)
            values.append(int(item))
            return var
        if isinstance(item, slice):
            return slice(*(None if v is None else sym(v) for v in (item.start, item.stop, item.step)))
        return item
    items = index if isinstance(index, tuple) else (index,)
    return tuple(sym(i) for i in items), inputs, values


# ------------------------------------------------------------- basic indexing
shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)


@given(st.data())
def test_basic_indexing_matches_numpy(data):
    shape = data.draw(shapes)
    index = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    v = value(shape)
    x = var_for(v)
    expected = v[index]
    y = x[index]
    assert_matches(run([x], y, v), np.asarray(expected))
    if y is not x:
        check_infer_shape([x], y, [v])
    sym_index, inputs, values = symbolize(index)
    y = x[sym_index]
    assert_matches(run([x] + inputs, y, v, *values), np.asarray(expected))
    if y is not x:
        check_infer_shape([x] + inputs, y, [v] + values)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index", [0, -1, (1, 2), (slice(None, None, -1), 1), (slice(3, 0, -2),),
                                   (slice(5, 1),), (slice(-100, 100),), (Ellipsis, 0),
                                   (None, 0, None), (slice(1, None), None, Ellipsis)])
def test_basic_indexing_dtypes(dtype, index):
    v = value((4, 3), dtype)
    x = var_for(v)
    assert_matches(run([x], x[index], v), np.asarray(v[index]))


def test_subtensor_output_is_a_view_and_declares_it():
    v = value((4, 3))
    x = var_for(v)
    y = x[1:, ::-1]
    assert isinstance(y.owner.op, Subtensor) and y.owner.op.view_map == {0: [0]}
    cell = [None]
    y.owner.op.perform(y.owner, [v], [cell])
    assert np.shares_memory(cell[0], v)
    scalar = x[1, 2]
    scalar.owner.op.perform(scalar.owner, [v, ], [cell])
    assert type(cell[0]) is np.ndarray and cell[0].shape == () and cell[0] == v[1, 2]


def test_zero_dimensional_and_trivial_indices():
    v = np.asarray(2.5)
    x = T.scalar("x")
    # trivial indexings are Subtensor{} nodes, as in Theano (set_subtensor(m[:, :], y) needs
    # the indexing); compiling removes them
    for trivial in (x[()], x[...]):
        assert isinstance(trivial.owner.op, Subtensor) and trivial.owner.op.idx_list == ()
        assert_matches(run([x], trivial, v), v)
    assert_matches(run([x], x[None], v), v[None])
    m = T.matrix("m")
    assert m[:, :].owner.op == m[:].owner.op == m[...].owner.op


def test_equal_indexings_build_equal_ops():
    x = T.matrix("x")
    i = T.lscalar("i")
    assert x[1:, i].owner.op == x[2:, i].owner.op.__class__(x[1:, i].owner.op.idx_list)
    assert x[0].owner.op == x[0, :].owner.op
    assert x[T.constant(1)].owner.op == x[1].owner.op and len(x[T.constant(1)].owner.inputs) == 1
    assert hash(x[1:3].owner.op) == hash(x[1:3].owner.op)


def test_broadcastable_pattern_of_results():
    x = T.tensor("float64", (True, False, True), name="x")
    assert x[0].broadcastable == (False, True)
    assert x[:, 1:].broadcastable == (True, False, True)
    assert x[None, :, 0].broadcastable == (True, True, True)
    assert x[1:].broadcastable == (False, False, True)


@pytest.mark.parametrize("n", [0, 1, 5, 7])
def test_slice_length_symbolic_and_static_agree(n):
    cases = [(None, None, 1), (2, None, None), (-3, 100, 2), (None, -1, -1), (10, -10, -3),
             (-100, None, -2), (3, 3, None), (1, None, 3)]
    length = T.lscalar("n")
    for start, stop, step in cases:
        expected = len(range(n)[start:stop:step])
        assert slice_length(n, start, stop, step) == expected
        sym = [None if v is None else T.constant(v, dtype="int64") + T.lscalar("zero")
               for v in (start, stop, step)]
        zero = [v.owner.inputs[1] for v in sym if v is not None]
        out = as_tensor_variable(slice_length(length, *sym))
        assert int(run([length] + zero, out, n, *[0] * len(zero))) == expected


# ---------------------------------------------------------- advanced indexing
def test_integer_vector_on_first_axis_is_advanced_subtensor1():
    v = value((5, 3))
    x = var_for(v)
    idx = T.lvector("idx")
    for index in ([4, 0, 0, -1], np.array([1, 1], dtype="int32"), idx):
        y = x[index]
        assert isinstance(y.owner.op, AdvancedSubtensor1)
        iv = np.array([3, -5, 0]) if index is idx else np.asarray(index)
        assert_matches(run([x, idx], y, v, iv), v[iv])
        check_infer_shape([x, idx], y, [v, iv])
    assert_matches(run([x], x[[]], v), v[np.array([], dtype=int)])


@given(st.data())
def test_integer_array_indexing_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    index = data.draw(hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(
        min_dims=0, max_dims=2, max_side=3)))
    v = value(shape)
    x = var_for(v)
    # Each array becomes a symbolic input; a slice in the middle checks numpy's placement rule.
    arrays = [T.tensor("int64", (False,) * a.ndim, name=f"a{k}") for k, a in enumerate(index)]
    values = [a.astype("int64") for a in index]
    y = x[tuple(arrays)]
    assert_matches(run([x] + arrays, y, v, *values), v[index])
    check_infer_shape([x] + arrays, y, [v] + values)
    if len(shape) >= 2:
        mixed = (arrays[0], slice(None, None, -1)) + tuple(arrays[2:]) if len(arrays) > 2 else \
            (arrays[0], slice(None, None, -1))
        expected = v[(values[0], slice(None, None, -1)) + tuple(values[2:])]
        y = x[mixed]
        assert_matches(run([x] + arrays, y, v, *values), expected)
        check_infer_shape([x] + arrays, y, [v] + values)


@pytest.mark.parametrize("index", [
    ([0, 2], [1, 1]), (slice(None), [2, 0]), (0, slice(1, None), [0, 1]), ([0, 1], None, [2, 1]),
    (None, [1], slice(None), 0), ([[0, 1], [1, 1]], ...), (..., [0, 0, 1]),
    (np.array([[0], [2]]), np.array([0, 1, 2])), (1, [0, 1], 2), ([0, 1], slice(None), [1, 2])])
def test_mixed_advanced_indexing(index):
    v = value((3, 4, 3))
    x = var_for(v)
    y = x[index]
    assert isinstance(y.owner.op, AdvancedSubtensor)
    assert_matches(run([x], y, v), v[index])
    check_infer_shape([x], y, [v])


@pytest.mark.parametrize("dtype", DTYPES)
def test_boolean_masks_constant_and_symbolic(dtype):
    v = value((3, 4), dtype)
    x = var_for(v)
    mask = T.tensor("bool", (False, False), name="mask")
    row_mask = T.bvector("rows").astype("bool")
    m = np.abs(value((3, 4))) > 3
    rows = np.array([1, 0, 1], dtype="int8")
    cases = [(x[mask], v[m]), (x[m], v[m]), (x[[True, False, True]], v[[True, False, True]]),
             (x[row_mask, 1:], v[rows.astype(bool), 1:]), (x[:, m[0]], v[:, m[0]]),
             (x[T.neq(x, 0)], v[v != 0])]
    rows_var = row_mask.owner.inputs[0]
    for y, expected in cases:
        assert_matches(run([x, mask, rows_var], y, v, m, rows), expected)
        check_infer_shape([x, mask, rows_var], y, [v, m, rows])


# ------------------------------------------------------------ x.shape[i]
def test_indexing_a_shape_reads_it():
    x = T.tensor3("x")
    v = np.zeros((2, 3, 4))
    assert isinstance(x.shape[1].owner.op, Shape_i)
    assert_matches(run([x], x.shape[0], v), np.array(2, dtype="int64"))
    assert_matches(run([x], x.shape[-1], v), np.array(4, dtype="int64"))
    assert_matches(run([x], x.shape[1:], v), np.array([3, 4], dtype="int64"))
    i = T.lscalar("i")
    assert_matches(run([x, i], x.shape[i], v, 1), np.array(3, dtype="int64"))
    with pytest.raises(IndexError, match="index 3 is out of range for the shape of 'x'"):
        x.shape[3]


# --------------------------------------------------------- set and increment
@given(st.data())
def test_set_and_inc_basic_match_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    index = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    v = value(shape)
    target_shape = v[index].shape
    y_shape = data.draw(hnp.broadcastable_shapes(target_shape, max_dims=len(target_shape), min_side=0))
    assume(np.broadcast_shapes(y_shape, target_shape) == target_shape)
    w = value(y_shape)
    x, y = var_for(v), var_for(w, "y")
    sym_index, inputs, values = symbolize(index)
    if x[sym_index] is x:
        return
    for fn, write in ((T.set_subtensor, np.ndarray.__setitem__), (T.inc_subtensor, None)):
        expected = v.copy()
        if write is None:
            expected[index] += w
        else:
            expected[index] = w
        out = fn(x[sym_index], y)
        assert isinstance(out.owner.op, IncSubtensor) and out.type == x.type
        before = v.copy()
        assert_matches(run([x, y] + inputs, out, v, w, *values), expected)
        np.testing.assert_array_equal(v, before)
        check_infer_shape([x, y] + inputs, out, [v, w] + values)


def test_inc_with_repeated_indices_accumulates():
    v = np.zeros((4, 2))
    x = var_for(v)
    idx = T.lvector("idx")
    out = T.inc_subtensor(x[idx], 1.0)
    assert isinstance(out.owner.op, AdvancedIncSubtensor1)
    expected = v.copy()
    np.add.at(expected, [0, 0, 3, 0], 1.0)
    assert_matches(run([x, idx], out, v, np.array([0, 0, 3, 0])), expected)
    check_infer_shape([x, idx], out, [v, np.array([0, 0, 3, 0])])
    out = T.inc_subtensor(x[[1, 1], [0, 0]], np.array([2.0, 3.0]))
    assert isinstance(out.owner.op, AdvancedIncSubtensor) and not isinstance(out.owner.op, IncSubtensor)
    assert run([x], out, v)[1, 0] == 5.0
    out = T.set_subtensor(x[[2, 2]], np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(run([x], out, v)[2], [3.0, 4.0])


@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "complex64"])
def test_set_and_inc_advanced_and_masks(dtype):
    v = value((3, 4), dtype)
    x = var_for(v)
    m = np.abs(value((3, 4))) > 3
    mask = T.tensor("bool", (False, False), name="mask")
    cases = [(x[mask], (m,)), (x[:, [3, 0, 3]], (slice(None), [3, 0, 3])),
             (x[[0, 2], 1:3], ([0, 2], slice(1, 3))), (x[None, [1, 1]], (None, [1, 1]))]
    for indexed, index in cases:
        for fn in (T.set_subtensor, T.inc_subtensor):
            expected = v.copy()
            if fn is T.set_subtensor:
                expected[index] = 7
            else:
                np.add.at(expected, tuple(np.nonzero(i)[0] if isinstance(i, np.ndarray) else i
                                          for i in index) if index[0] is not m else m.nonzero(), 7)
            out = fn(indexed, 7)
            before = v.copy()
            assert_matches(run([x, mask], out, v, m), expected)
            np.testing.assert_array_equal(v, before)
            check_infer_shape([x, mask], out, [v, m])


def test_set_subtensor_reuses_its_buffer_but_never_the_input():
    v = value((3, 3))
    x = var_for(v)
    out = T.set_subtensor(x[0], 0.0)
    fn = function([x], out)
    first = fn(v).copy()
    second = fn(v)
    np.testing.assert_array_equal(first, second)
    assert v[0, 0] != 0.0


# ------------------------------------------------------------------- errors
def test_out_of_range_index_names_the_variable():
    x = T.vector("x")
    i = T.lscalar("i")
    with pytest.raises(IndexError, match=r"'x'\[5\] with 'x' of shape \(3,\): index 5 is out of bounds"):
        run([x, i], x[i], np.zeros(3), 5)
    with pytest.raises(IndexError, match="'x'.*out of bounds"):
        run([x], x[[0, 7]], np.zeros(3))
    with pytest.raises(IndexError, match="'x'.*out of bounds"):
        run([x], x[[[0, 7]]], np.zeros(3))
    with pytest.raises(IndexError, match="'x'.*boolean index did not match"):
        run([x], x[np.array([True, False])], np.zeros(3))
    with pytest.raises(IndexError, match="index 2 is out of range for dimension 0 of 'r'"):
        T.row("r")[2]


@pytest.mark.parametrize("index, error, message", [
    (T.dscalar("f"), TypeError, "must be integer scalars, got 'f'.*cast it"),
    (slice(T.fscalar("f"), None), TypeError, "slice bounds of 'x' must be integer scalars"),
    (1.5, TypeError, "cannot index 'x' with float"),
    (slice(1.5, None), TypeError, "slice bounds of 'x' must be ints"),
    (True, TypeError, "boolean True is not supported"),
    (T.dvector("fv"), TypeError, "index arrays of 'x' must be integer or boolean"),
    ([0.5, 1.0], TypeError, "index arrays of 'x' must be integer or boolean"),
    ((0, 0, 0), IndexError, "too many indices for 'x': it has 2 dimensions"),
    ((Ellipsis, 0, Ellipsis), IndexError, "only one Ellipsis"),
    (slice(None, None, 0), ValueError, "slice step of 'x'.*cannot be zero"),
    ("a", TypeError, "cannot index 'x' with str"),
])
def test_bad_indices_fail_clearly(index, error, message):
    x = T.matrix("x")
    with pytest.raises(error, match=message):
        x[index]


def test_bad_set_and_inc_fail_clearly():
    x = T.fmatrix("x")
    with pytest.raises(TypeError, match="expects an indexed expression such as set_subtensor"):
        T.set_subtensor(x, 1.0)
    for write in (T.inc_subtensor, T.set_subtensor):
        with pytest.raises(TypeError, match="'i' is int32 but the value 'y' is float64, a kind of number "
                                            "int32 cannot hold: cast it"):
            write(T.imatrix("i")[0], T.dvector("y"))
    with pytest.raises(TypeError, match="has 2 dimensions but the indexed part of 'x' has 1"):
        T.set_subtensor(x[0], T.fmatrix("y"))
    with pytest.raises(TypeError, match="does not fit 'x'"):
        T.set_subtensor(T.bmatrix("x")[0], 1000)
    y = T.fvector("y")
    out = T.set_subtensor(x[0], y)
    with pytest.raises(ValueError, match="could not broadcast"):
        run([x, y], out, np.zeros((2, 3), "float32"), np.zeros(4, "float32"))
    v = np.zeros((2, 3), "float32")
    assert_matches(run([x], T.set_subtensor(x[0], 0.5), v), np.where([[1], [0]], 0.5, v).astype("float32"))


@pytest.mark.parametrize("narrow, wide", [("float32", "float64"), ("int8", "int64"), ("complex64", "complex128")])
def test_a_wider_value_of_the_same_kind_is_rounded_into_the_tensor(narrow, wide):
    """As Theano's numpy assignment did (floatX=float32 code writes float64 terms into float32
    buffers); the result keeps the tensor's dtype and the gradient reaches the value."""
    x, y = T.vector("x", dtype=narrow), T.vector("y", dtype=wide)
    vx, vy = np.zeros(3, narrow), (np.array([1 / 3, 2.0]) * 10).astype(wide)
    for write, expected in ((T.set_subtensor, vx.copy()), (T.inc_subtensor, vx.copy())):
        expected[1:] = vy  # numpy's own rounding
        out = write(x[1:], y)
        assert out.dtype == narrow
        assert_matches(run([x, y], out, vx, vy), expected)
    if narrow == "float32":
        g = T.grad(T.set_subtensor(x[[0, 2]], y).sum(), y)
        assert g.dtype == wide and np.array_equal(run([x, y], g, vx, vy), [1.0, 1.0])


# ------------------------------------------------------- Theano's index forms
def test_a_list_of_slices_is_a_tuple_of_index_items():
    """Theano (and numpy before 1.23) read a list holding slices, None or ... as a tuple."""
    v = np.arange(100).reshape(5, 5, 4)
    x = var_for(v)
    assert_matches(run([x], x[[slice(1, -1)] * 3], v), v[1:-1, 1:-1, 1:-1])
    assert_matches(run([x], x[[1, Ellipsis, None]], v), v[1, ..., None])
    assert_matches(run([x], x[[0, 2]], v), v[[0, 2]])  # a list of ints is still an index array


def test_an_index_past_int64_is_refused():
    x = T.matrix("x")
    for index in (2 ** 63, np.uint64(2 ** 63), -2 ** 63 - 1):
        for item in (index, slice(None, index), slice(index, None, 2)):
            with pytest.raises(IndexError, match=f"index {int(index)} of 'x' does not fit in int64"):
                x[item]
    assert_matches(run([x], x[: 2 ** 63 - 1], np.ones((2, 3))), np.ones((2, 3)))


LENGTHS = [0, 1, 5]
BOUNDS = [None, -8, -5, -4, -1, 0, 1, 4, 5, 8]
STEPS = [None, -6, -3, -1, 1, 2, 5]


def _canonical_matches(a, canonical, direction, original):
    got = a[canonical][::direction]
    assert canonical.step > 0 and 0 <= canonical.start <= canonical.stop <= len(a)
    assert_matches(got, a[original])


def test_get_canonical_form_slice_of_ints():
    for n in LENGTHS:
        a = np.arange(n)
        for start in BOUNDS:
            for stop in BOUNDS:
                for step in STEPS:
                    s = slice(start, stop, step)
                    canonical, direction = get_canonical_form_slice(s, n)
                    assert all(isinstance(v, int) for v in (canonical.start, canonical.stop,
                                                            canonical.step, direction))
                    _canonical_matches(a, canonical, direction, s)
    assert get_canonical_form_slice(-2, 5) == (3, 1) and get_canonical_form_slice(2, 5) == (2, 1)


@pytest.mark.parametrize("symbolic", ["start", "stop", "step", "length", "all"])
def test_get_canonical_form_slice_symbolic(symbolic):
    """With symbolic bounds (of any sign), the int64 results select numpy's elements."""
    names = ["start", "stop", "step", "length"] if symbolic == "all" else [symbolic]
    scalars = {name: T.lscalar(name) for name in names}
    for n in LENGTHS:
        a = np.arange(n)
        for start in BOUNDS:
            for stop in BOUNDS[::3]:
                for step in [s for s in STEPS if s is not None]:
                    given = {"start": start, "stop": stop, "step": step, "length": n}
                    if any(given[k] is None for k in names):
                        continue
                    parts = {k: scalars.get(k, given[k]) for k in given}
                    canonical, direction = get_canonical_form_slice(
                        slice(parts["start"], parts["stop"], parts["step"]), parts["length"])
                    outs = [as_tensor_variable(v) for v in (canonical.start, canonical.stop,
                                                            canonical.step, direction)]
                    used = [scalars[k] for k in names]
                    values = [int(v) for v in function(used, outs, on_unused_input="ignore")(
                        *[given[k] for k in names])]
                    _canonical_matches(a, slice(*values[:3]), values[3], slice(start, stop, step))
    index, length = T.lscalar("i"), T.lscalar("n")
    canonical, direction = get_canonical_form_slice(index, length)
    assert direction == 1 and run([index, length], canonical, -2, 5) == 3


def test_advanced_inc_and_set_subtensor_functions():
    """Theano's advanced_{inc,set}_subtensor(x, y, *index) and their 1-d forms."""
    rng = np.random.RandomState(5)
    xv, yv = rng.rand(5, 5), rng.rand(2)
    x, y = var_for(xv), var_for(yv)
    expected = xv.copy()
    np.add.at(expected, ([1, 3], [2, 4]), yv)
    assert_matches(run([x, y], advanced_inc_subtensor(x, y, [1, 3], [2, 4]), xv, yv), expected)
    expected = xv.copy()
    expected[[1, 3], [2, 4]] = yv
    assert_matches(run([x, y], advanced_set_subtensor(x, y, [1, 3], [2, 4]), xv, yv), expected)
    verify_grad(lambda a, b: advanced_inc_subtensor(a, b, [1, 3], [2, 4]), [xv, yv], rng=rng)
    verify_grad(lambda a, b: advanced_set_subtensor(a, b, [1, 3], [2, 4]), [xv, yv], rng=rng)
    rows = rng.rand(3, 5)
    r = var_for(rows)
    expected = xv.copy()
    np.add.at(expected, [1, 3, 1], rows)
    out = advanced_inc_subtensor1(x, r, [1, 3, 1])
    assert isinstance(out.owner.op, AdvancedIncSubtensor1)
    assert_matches(run([x, r], out, xv, rows), expected)
    expected = xv.copy()
    expected[[1, 3]] = rows[:2]
    assert_matches(run([x, r], advanced_set_subtensor1(x, r[:2], [1, 3]), xv, rows), expected)
    verify_grad(lambda a, b: advanced_inc_subtensor1(a, b, [1, 3, 1]), [xv, rows], rng=rng)
    assert_matches(run([x], advanced_subtensor1(x, [4, 0]), xv), xv[[4, 0]])
    assert_matches(run([x], advanced_subtensor(x, [4, 0], slice(1, 3)), xv), xv[[4, 0], 1:3])
    assert T.advanced_inc_subtensor is advanced_inc_subtensor


@pytest.mark.parametrize("write", ["set", "inc"])
def test_writing_through_a_full_slice(write):
    # x[:] is a Subtensor node (removed when compiled), so set_subtensor(x[:], y) is the whole of x
    a, v = T.dcol("a"), T.dvector("v")
    op = T.set_subtensor if write == "set" else T.inc_subtensor
    f = function([a, v], op(a[:], v))
    base = np.arange(3.0).reshape(3, 1)
    np.testing.assert_array_equal(f(base, np.array([5.0])), np.full((3, 1), 5.0) + (base if write == "inc" else 0))
    with pytest.raises(ValueError):
        f(base, np.ones(2))
    m = T.dmatrix("m")
    g = function([m], [m[:] * 2, m[...] + 1])
    assert [str(n.op) for n in g.maker.fgraph.toposort()].count("Subtensor{}") == 0
    np.testing.assert_array_equal(g(np.ones((2, 2)))[0], np.full((2, 2), 2.0))


@pytest.mark.parametrize("index", [(slice(None), None), (None,), (None, slice(None), None),
                                   (Ellipsis, None), (slice(None), None, slice(None), None, None)])
def test_new_axes_between_whole_axes_are_a_dimshuffle(index):
    x = T.dmatrix("x")
    v = value((2, 3))
    y = x[index]
    assert isinstance(y.owner.op, T.DimShuffle) and y.owner.inputs == [x]
    assert y.broadcastable == tuple(n == 1 for n in v[index].shape)  # the new axes, and only they
    assert_matches(run([x], y, v), v[index])
    z = T.dmatrix("z")
    assert_matches(run([x, z], T.set_subtensor(x[index], z.reshape(v[index].shape)), v, v + 1), v + 1)
    assert_matches(run([x], T.inc_subtensor(x[index], 2.0), v), v + 2)
    assert isinstance(x[0, None].owner.op, Subtensor)  # an index among them: still a Subtensor


def test_boolean_masks_build_the_boolean_classes():
    x = T.dmatrix("x")
    v = value((3, 4))
    mask = v > 0.5
    y = x[x > 0.5]
    assert isinstance(y.owner.op, AdvancedBooleanSubtensor) and isinstance(y.owner.op, AdvancedSubtensor)
    assert_matches(run([x], y, v), v[mask])
    inc = T.inc_subtensor(x[x > 0.5], 1.0)
    assert isinstance(inc.owner.op, AdvancedBooleanIncSubtensor)
    expected = v.copy()
    expected[mask] += 1
    assert_matches(run([x], inc, v), expected)
    assert type(x[[0, 2]].owner.op) is AdvancedSubtensor1
    assert type(x[[0, 2], 1:].owner.op) is AdvancedSubtensor
    verify_grad(lambda t: t[t > 0.5].sum(), [v])


def test_inc_at_an_index_matrix_broadcasts_the_value_along_its_rows():
    """numpy 2.4's add.at reads past a value it broadcasts along the index's leading
    dimensions (garbage sums, out-of-bounds reads): the op broadcasts the value first."""
    x, y, i = T.vector("x"), T.vector("y"), T.matrix("i", dtype="int64")
    index, value = np.array([[1, 1, 2], [0, 4, 4]]), np.array([2.5, -1.0, 4.0])
    expected = np.arange(5.0)
    for row in index:
        np.add.at(expected, row, value)
    assert_matches(run([x, i, y], T.inc_subtensor(x[i], y), np.arange(5.0), index, value), expected)
