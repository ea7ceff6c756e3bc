"""Theano's function-state API: f[key], f.value, f.container shared between functions,
implicit inputs, In's defaults and checks, f.outputs, f.fn, copies; and the call-time
rules that come with it (aliased arguments, mutable inputs overwritten in place,
updates that swap shared values without copies, constants handed out under borrow)."""
import copy

import numpy as np
import pytest

from arignote import In, Out, function, shared, tensor as T
from arignote.compile.sharedvalue import Container


def test_keys_and_values():
    a = T.dscalar()
    x, s = T.dscalars("x", "s")
    f = function([x, In(a, value=1.0, name="a"), In(s, value=0.0, update=s + a * x)], s + a * x)
    assert f[a] == 1.0 and f["a"] == 1.0 and f[1] == 1.0 and f.value[s] == 0.0
    assert f(3.0) == 3.0 and f(3.0, a=2.0) == 9.0
    assert f[a] == 1.0 and f[s] == 9.0  # a passed value does not stay; the update does
    f.value[a] = 5.0
    assert f(3.0) == 24.0
    with pytest.raises(KeyError, match="no stored value"):
        f[x]
    with pytest.raises(KeyError, match="no input 'q'"):
        f["q"]
    assert isinstance(f.container[s], Container) and f.container[s] is f.container["s"]
    assert x in f.container and T.dscalar() not in f.container


def test_theanos_input_shortcuts():
    x, y, w = T.dscalars("x", "y", "w")
    c = T.dscalar("s")
    fn = function([x, ("why", y), ((c, c + x + y), 10.0), ("w", (w, w + x), 0.0)], c + w)
    assert fn["s"] == 10.0 and fn["w"] == 0.0
    assert fn(1, why=2) == 10.0 and fn["s"] == 13.0 and fn["w"] == 1.0
    g = function([x, (y, 5.0), ("zed", c, 7.0)], x + y + c)
    assert g(1) == 13.0 and g(1, 2, zed=0) == 3.0 and g["zed"] == 7.0


@pytest.mark.parametrize("spec", [(), ("x",), ("name", 3.0), (1.0, 2.0), ("n", T.dscalar(), 1.0, 2.0),
                                  ((T.dscalar(), T.dscalar()),)])
def test_bad_input_shortcuts_say_what_is_allowed(spec):
    with pytest.raises(TypeError, match=r"Theano's shortcuts \(name, x\), \(x, value\)"):
        function([spec], [])


def test_a_container_shared_between_functions():
    a = T.dscalar()
    x, s = T.dscalars("x", "s")
    f = function([x, In(a, value=1.0, name="a"), In(s, value=0.0, update=s + a * x)], s + a * x)
    g = function([x, In(a, value=1.0, name="a"), In(s, value=f.container[s], update=s - a * x)],
                 s + a * x)
    f(1, 2)
    assert f[s] == 2 and g[s] == 2
    g(1, 2)  # s is implicit in g: (x, a) = (1, 2)
    assert f[s] == 0 and g[s] == 0
    with pytest.raises(TypeError, match="at most 2 arguments"):
        g(1, 2, 3)
    reader = function([x, In(s, value=f.container[s], implicit=False)], s + x)
    f(1, 5)
    assert reader(1) == 6 and reader(1, 100) == 101


def test_in_defaults_and_checks():
    x = T.dvector("x")
    assert In(x).mutable is False and In(x).borrow is False
    upd = In(x, value=np.zeros(2), update=x + 1)
    assert upd.mutable is True and upd.borrow is True  # an updated input may be overwritten
    assert In(x, update=x + 1, mutable=False).mutable is False
    with pytest.raises(AssertionError, match="mutable=True with borrow=False"):
        In(x, mutable=True, borrow=False)
    with pytest.raises(TypeError, match="name must be a string"):
        In(x, name=["x"])
    with pytest.raises(TypeError, match="must have the variable's type"):
        In(T.dscalar("a"), update=x)
    with pytest.raises(TypeError, match="implicit input needs a value"):
        In(x, implicit=True)
    assert In(x, value=np.zeros(2), update=[1.5, 2]).update.type == x.type  # a constant of its type


def test_outputs_in_sorted_key_order_and_fn():
    x, y = T.dscalars("x", "y")
    f = function([x, y], {"y": y * 1, "1": x * 2, "a": x + y})
    assert len(f.outputs) == 3 and all(isinstance(o, Out) for o in f.outputs)
    assert list(f(1.0, 2.0)) == ["1", "a", "y"]
    s = shared(np.float64(3.0), "s")
    g = function([x], x + s, updates={s: s + 1})
    g(0.0)
    cells = g.fn.storage_map
    assert any(cell is s.storage for cell in cells.values())  # a shared variable's own storage
    assert len(g.fn.nodes) == len(g.fn.thunks)


def test_copies_copy_only_mutable_stored_values():
    a = T.dscalar()
    x, s = T.dscalars("x", "s")
    f = function([x, In(a, value=1.0, name="a"), In(s, value=0.0, update=s + a * x, mutable=True)],
                 s + a * x)
    g = copy.copy(f)
    assert g.container[x].storage is not f.container[x].storage
    assert g.value[a] is f.value[a] and g.value[s] is not f.value[s]
    assert f(2, 1) == g(2)
    f(1, 2)
    assert f(1, 2) != g(1, 2)


def test_mutable_inputs_may_be_overwritten_and_aliased_arguments_are_separated():
    a = T.dvector("a")
    f = function([In(a, mutable=True)], a * 2)
    v = np.arange(3.0)
    np.testing.assert_array_equal(f(v), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(v, [0.0, 2.0, 4.0])  # mutable=True let it work in place
    assert f._check_for_aliased_inputs
    keep = function([In(a, mutable=False)], a * 2)
    w = np.arange(3.0)
    keep(w)
    np.testing.assert_array_equal(w, np.arange(3.0))
    assert not keep._check_for_aliased_inputs
    # The same array given twice to inputs that may be overwritten: computed as if distinct.
    x, y, m1, m2 = T.dvector(), T.dvector(), T.dmatrix(), T.dmatrix()
    g = function([In(v_, mutable=True) for v_ in (x, y, m1, m2)], T.dot(x * 2, m1) + T.dot(y * 3, m2))
    vec, eye = np.arange(1.0, 6.0), np.eye(5)
    np.testing.assert_array_equal(g(vec, vec, eye, eye), 5 * np.arange(1.0, 6.0))


def test_swapping_updates_take_each_others_buffers():
    a, b = shared(np.full((2, 2), 0.5), "a"), shared(np.full((2, 2), -0.5), "b")
    old_a, old_b = a.get_value(borrow=True), b.get_value(borrow=True)
    function([], [], updates=[(a, b), (b, a)])()
    assert (a.get_value() == -0.5).all() and (b.get_value() == 0.5).all()
    assert a.get_value(borrow=True) is old_b and b.get_value(borrow=True) is old_a
    c = shared(np.ones(2), "c")
    function([], [], updates=[(a, c[0] * np.ones((2, 2)))])()  # c keeps its buffer
    only = shared(np.ones(2), "only")
    d = shared(np.zeros(2), "d")
    function([], [], updates=[(d, only)])()  # only is not updated: d gets a copy
    assert not np.may_share_memory(d.get_value(borrow=True), only.get_value(borrow=True))


def test_constant_output_under_borrow_is_the_constant():
    f = function([], T.constant(np.array([4])))
    out = f()
    out[0] = 3
    assert f()[0] == 4 and f() is not out
    g = function([], Out(T.constant(np.array([4])), borrow=True))
    assert g() is g()  # Theano's contract: the caller holds the internal memory


def test_updates_and_givens_convert_numbers_to_the_variables_type():
    x = shared(0, "x")
    function([], [], updates={x: 3})()
    assert x.get_value() == 3 and x.get_value().dtype == np.int64
    assert function([], x * 1, givens={x: 7})() == 7


def test_rebuild_strict_false_lets_givens_change_the_type():
    w = T.imatrix("w")
    x, y = T.ivectors("x", "y")
    f = function([w, y], x * y, givens=[(x, w)], rebuild_strict=False)
    out = f(np.ones((3, 5), dtype="int32"), np.arange(5, dtype="int32"))
    assert out.shape == (3, 5) and (out == np.arange(5)).all()
    with pytest.raises(TypeError, match="cannot be replaced"):
        function([w, y], x * y, givens=[(x, w)])


def test_allow_downcast_wraps_out_of_range_ints_as_theano():
    a = T.wvector("a")
    f = function([In(a, allow_downcast=True)], a * 1)
    assert f([2 ** 20])[0] == np.asarray(2 ** 20).astype("int16")
    with pytest.raises(TypeError):
        function([a], a * 1)([2 ** 20])
    with pytest.raises(ValueError):  # numpy's (and Theano's) class for non-numbers too
        function([T.dvector("v")], T.dvector("v") * 1, on_unused_input="ignore")("adsf")


def test_shared_of_a_symbolic_variable_and_deleted_default_update():
    with pytest.raises(TypeError, match="symbolic variable"):
        shared(T.ones((2, 3)))
    s = shared(0, "s")
    s.default_update = s + 1
    del s.default_update
    function([], s * 1)()
    assert s.get_value() == 0


def test_functions_sharing_a_container_still_share_it_after_deepcopy_and_pickle():
    import pickle
    s, x = T.dscalars("s", "x")
    f = function([x, In(s, value=0.0, update=s + x)], s + x)
    g = function([x, In(s, value=f.container[s], update=s - x)], s * 1)
    assert f.defaults == [(True, False, None), (False, False, 0.0)]
    both = copy.deepcopy([f, g])
    fc, gc = both
    fc(5.0)
    assert gc[fc.maker.inputs[1].variable] == 5.0 and f[s] == 0.0  # shared with each other, not f
    fl, gl = pickle.loads(pickle.dumps([f, g]))
    fl(2.0)
    assert gl.container[1].storage is fl.container[1].storage and gl(1.0) == 2.0
    assert fl.container[1].value == 1.0


def test_theano_exception_classes_of_the_checks():
    x = T.dscalar("x")
    with pytest.raises(RuntimeError):  # Theano's class, a ValueError here too
        function([x], x * 2, givens={x: x + 1})
    with pytest.raises(AssertionError):  # Theano's class, a TypeError here too
        function([x], {1.0: x})


def test_a_user_type_with_theanos_filter_signature():
    """doc/extending's Types define filter(value, strict, allow_downcast), without name=."""
    from arignote.graph.basic import Apply, Op, Type

    class Double(Type):
        def filter(self, x, strict=False, allow_downcast=None):
            if strict and not isinstance(x, float):
                raise TypeError("Expected a float!")
            return float(x)

        def __eq__(self, other):
            return type(other) is Double

        def __hash__(self):
            return hash(Double)

    double = Double()

    class Add(Op):
        __props__ = ()

        def make_node(self, a, b):
            return Apply(self, [a, b], [double()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] + inputs[1]

    a, b = double("a"), double("b")
    f = function([a, In(b, value=1.5)], Add()(a, b))
    assert f(2) == 3.5 and f(2, 3) == 5.0
    f["b"] = 4
    assert f(1) == 5.0
