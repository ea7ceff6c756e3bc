"""Typed lists: the type, each op against Python's list, aliasing, the in-place rewrite, scan."""
import numpy as np
import pytest

from arignote import In, function, scan, tensor as T
from arignote import typed_list as tl
from arignote.typed_list import TypedListType


def rand(*shape, dtype="float64", seed=0):
    return np.random.RandomState(seed).uniform(-5, 5, shape).astype(dtype)


DTYPES = ["float32", "float64", "int32"]


def vectors(dtype):
    return TypedListType(T.TensorType(dtype, (False,)))("lst")


def values(dtype, n=3):
    return [rand(k + 1, dtype=dtype, seed=k) for k in range(n)]


def same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)


def test_type_filters_each_element_and_names_it():
    t = TypedListType(T.fvector)
    got = t.filter([[1, 2], (3,)])
    assert [g.dtype for g in got] == ["float32", "float32"]
    with pytest.raises(TypeError, match=r"lst\[1\]"):
        t.filter([[1.0], [[2.0]]], name="lst")
    with pytest.raises(TypeError, match="a Python list"):
        t.filter(np.zeros(3))
    with pytest.raises(TypeError, match="a Python list"):
        t.filter(([1.0],), strict=True)
    nested = TypedListType(T.dvector, depth=2)
    assert nested.get_depth() == 2 and nested == TypedListType(TypedListType(TypedListType(T.dvector)))
    assert str(TypedListType(T.fvector)) == "TypedList <TensorType(float32, vector)>"
    assert hash(t) == hash(TypedListType(T.fvector)) and t != TypedListType(T.dvector)
    with pytest.raises(TypeError, match="type of its elements"):
        TypedListType("float32")
    with pytest.raises(ValueError, match="depth"):
        TypedListType(T.fvector, depth=-1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ops_match_pythons_list(dtype):
    lst, other = vectors(dtype), vectors(dtype)
    v = T.TensorType(dtype, (False,))("v")
    i = T.lscalar("i")
    data, more, elem = values(dtype), values(dtype, 2)[::-1], rand(4, dtype=dtype, seed=9)
    cases = [
        (lst.append(v), [lst, v], (data, elem), data + [elem]),
        (lst.extend(other), [lst, other], (data, more), data + more),
        (lst.insert(i, v), [lst, i, v], (data, 1, elem), data[:1] + [elem] + data[1:]),
        (lst.remove(v), [lst, v], (data, data[1].copy()), data[:1] + data[2:]),
        (lst.reverse(), [lst], (data,), data[::-1]),
        (lst[1:], [lst], (data,), data[1:]),
        (lst[::-2], [lst], (data,), data[::-2]),
    ]
    for out, ins, args, want in cases:
        same(function(ins, out)(*args), want)
    f = function([lst, i], lst[i])
    assert np.array_equal(f(data, -1), data[-1]) and np.array_equal(f(data, 0), data[0])
    g = function([lst, v], [lst.ind(v), lst.count(v), tl.length(lst), lst.__len__()])
    assert [int(r) for r in g(data + [data[1].copy()], data[1].copy())] == [1, 2, 4, 4]
    assert all(r.dtype == "int64" for r in g(data, data[0]))


def test_errors_at_build_and_run_time_say_what_is_wrong():
    lst = vectors("float64")
    with pytest.raises(TypeError, match="the list holds TensorType\\(float64, vector\\)"):
        lst.append(T.dmatrix("m"))
    with pytest.raises(TypeError, match="integer scalar"):
        lst[T.dscalar("x")]
    with pytest.raises(TypeError, match="takes a typed list"):
        tl.append(T.dvector(), T.dvector())
    with pytest.raises(TypeError, match="one type"):
        lst.extend(vectors("float32"))
    i = T.lscalar("i")
    with pytest.raises(IndexError, match="position 5 is outside a typed list of 3"):
        function([lst, i], lst[i])(values("float64"), 5)
    v = T.dvector("v")
    with pytest.raises(ValueError, match="not in the typed list"):
        function([lst, v], lst.remove(v))(values("float64"), np.zeros(7))
    with pytest.raises(ValueError, match="not in the typed list"):
        function([lst, v], lst.ind(v))(values("float64"), np.zeros(7))


def test_make_list():
    a, b = T.dvectors("a", "b")
    f = function([a, b], tl.make_list([a, b, a]))
    x, y = rand(2), rand(3)
    got = f(x, y)
    same(got, [x, y, x])
    assert got[0] is not x and got[0] is not got[2]
    with pytest.raises(TypeError, match="one type"):
        tl.make_list([a, T.fvector()])
    with pytest.raises(TypeError, match="non-empty list"):
        tl.make_list([])
    const = function([], tl.make_list([T.ones((2,)), T.zeros((2,))]))()
    same(const, [np.ones(2), np.zeros(2)])


def test_no_op_changes_its_inputs_and_outputs_own_their_memory():
    lst, v = vectors("float64"), T.dvector("v")
    data, elem = values("float64"), rand(2, seed=5)
    kept = [d.copy() for d in data]
    out = function([lst, v], lst.append(v))(data, elem)
    same(data, kept)
    out[0][:] = 0  # the output's elements are not the caller's arrays
    out[-1][:] = 0
    same(data, kept)
    assert not np.all(elem == 0)


def test_in_place_rewrite_applies_where_the_input_may_be_destroyed():
    lst, v = vectors("float64"), T.dvector("v")
    for op in (lst.append(v), lst.reverse(), lst.insert(0, v)):
        ins = [In(lst, mutable=True)] + ([v] if v in op.owner.inputs else [])
        f = function(ins, op)
        assert f.maker.fgraph.toposort()[-1].op.inplace
        plain = function([lst] + ins[1:], op)
        assert not any(getattr(n.op, "inplace", False) for n in plain.maker.fgraph.toposort())
        data, elem = values("float64"), rand(2)
        args = [data] + ([elem] if len(ins) == 2 else [])
        assert f.maker.fgraph.toposort()[-1].op.destroy_map == {0: [0]}
        same(f(*[list(a) if isinstance(a, list) else a for a in args]),
             plain(*args))


def test_a_typed_list_as_a_scan_non_sequence():
    lst = TypedListType(T.fvector)("lst")
    sums, _ = scan(lambda i, xs: xs[i].sum(), sequences=[T.arange(tl.length(lst), dtype="int64")],
                   non_sequences=[lst])
    f = function([lst], sums)
    got = f([[1, 2, 3], [4, 5]])
    assert got.dtype == "float32" and np.array_equal(got, [6, 9])
