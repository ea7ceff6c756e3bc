"""function(): outputs, calling conventions, implicit state, givens, updates, copy, errors."""
import re

import numpy as np
import pytest

from arignote import In, Out, config, function, shared
from arignote import tensor as T
from arignote.compile import Function
from arignote.graph.basic import Apply


# ---------------------------------------------------------------- outputs
def test_single_output_returns_an_array():
    x = T.vector("x")
    out = function([x], x * 2)([1.0, 2.0])
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, [2, 4])


def test_list_outputs_return_a_list():
    x = T.vector("x")
    out = function([x], [x + 1, x * 3])([1.0])
    assert isinstance(out, list) and len(out) == 2
    np.testing.assert_array_equal(out[1], [3])
    assert function([x], (x,))([1.0])[0][0] == 1


def test_dict_outputs_return_a_dict():
    x = T.vector("x")
    out = function([x], {"plus": x + 1, "times": Out(x * 3)})([1.0])
    assert set(out) == {"plus", "times"}
    np.testing.assert_array_equal(out["times"], [3])


@pytest.mark.parametrize("key", [1, ("a", 0), None])
def test_dict_outputs_need_string_keys(key):
    # Theano refuses them (they name the results); this compiled and returned {1: ...}.
    x = T.vector("x")
    with pytest.raises(TypeError, match=f"keys of an outputs dict.*must be strings.*{type(key).__name__}"):
        function([x], {key: x * 2})


@pytest.mark.parametrize("outputs", [None, []])
def test_no_outputs_return_an_empty_list(outputs):
    s = shared(np.float64(0))
    f = function([], outputs, updates={s: s + 1})
    assert f() == []
    assert s.get_value() == 1


def test_python_value_as_output_is_a_constant():
    assert function([], 3)() == 3


# ---------------------------------------------------------------- calling
def test_call_by_position_and_by_name():
    x, y = T.vector("x"), T.vector("y")
    f = function([In(x, name="a"), y], x - y)
    np.testing.assert_array_equal(f([3.0], [1.0]), [2])
    np.testing.assert_array_equal(f(y=[1.0], a=[3.0]), [2])
    np.testing.assert_array_equal(f([3.0], y=[1.0]), [2])
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        f(x=[3.0], y=[1.0])


def test_a_function_is_named_after_the_line_that_compiled_it():
    x = T.vector("x")
    f = function([x], x + 1.0)
    assert f.name == f"{__file__}:{test_a_function_is_named_after_the_line_that_compiled_it.__code__.co_firstlineno + 2}"
    with pytest.raises(TypeError, match=re.escape(f"function {f.name!r}")):
        f([1.0], [2.0], [3.0])
    assert function([x], x, name="step").name == "step"


def test_in_value_is_a_default_that_a_call_overrides_only_once():
    x, c = T.vector("x"), T.scalar("c")
    f = function([x, In(c, value=2.0)], x * c)
    np.testing.assert_array_equal(f([1.0]), [2])
    np.testing.assert_array_equal(f([1.0], 3.0), [3])
    np.testing.assert_array_equal(f([1.0]), [2])


def test_in_value_is_copied_from_the_callers_array():
    x, c = T.vector("x"), T.vector("c")
    v = np.array([2.0])
    f = function([x, In(c, value=v)], x * c)
    v[0] = 100
    np.testing.assert_array_equal(f([1.0]), [2])


def test_in_value_update_is_implicit_state():
    inc, acc = T.scalar("inc"), T.scalar("acc")
    f = function([inc, In(acc, value=0.0, update=acc + inc, name="acc")], acc)
    assert f(1.0) == 0 and f(2.0) == 1
    assert f["acc"] == 3
    f["acc"] = 10.0
    assert f(1.0) == 10 and f["acc"] == 11
    with pytest.raises(KeyError, match="'inc'"):
        f["inc"]
    with pytest.raises(TypeError, match="'acc'"):
        f["acc"] = np.zeros(3)


def test_in_update_without_a_value_is_a_required_argument_until_updated():
    x = T.dscalar("x")
    f = function([In(x, update=x + 1)], x * 2)
    with pytest.raises(TypeError, match="missing"):
        f()
    assert f(3.0) == 6.0
    assert f() == 8.0 and f[x] == 5.0  # the update stored 4, then 5
    with pytest.raises(TypeError, match="type"):
        In(x, update=T.dvector("v"))


# ----------------------------------------------------------------- givens
def test_givens_replace_an_input():
    x, y = T.vector("x"), T.vector("y")
    f = function([y], x * 2, givens={x: y + 1})
    np.testing.assert_array_equal(f([1.0]), [4])


def test_givens_replace_a_shared_variable():
    s = shared(np.ones(2), "s")
    y = T.vector("y")
    f = function([y], s * 2, givens=[(s, y)])
    np.testing.assert_array_equal(f([3.0, 4.0]), [6, 8])


def test_givens_replacing_an_explicit_input_is_refused():
    # Theano refuses it; this compiled and computed with the replacement (8 for 3).
    s, y = T.scalar("s"), T.scalar("y")
    with pytest.raises(ValueError, match="givens replaces 's', which is an explicit input.*"
                                         r"function\(\[y\], f\(x\), givens=\{x: g\(y\)\}\)"):
        function([s], s * 2, givens={s: s + 1})
    with pytest.raises(ValueError, match="explicit input"):
        function([In(s, name="s")], s * 2, givens=[(s, y)])
    assert function([y], s * 2, givens={s: y + 1})(3.0) == 8.0  # the recipe


def test_givens_type_mismatch_is_refused():
    x = T.vector("x")
    with pytest.raises(TypeError, match="givens: 'x'.*float64 vector.*int32.*cast"):
        function([], x * 2, givens={x: T.ivector("i")})
    with pytest.raises(TypeError, match="givens"):
        function([], x * 2, givens={x: T.matrix("m")})


# ---------------------------------------------------------------- updates
@pytest.mark.parametrize("as_list", [False, True])
def test_updates_as_dict_or_list_of_pairs(as_list):
    a, b = shared(np.float64(1), "a"), shared(np.float64(2), "b")
    updates = {a: a + b, b: b * 10}
    f = function([], [], updates=list(updates.items()) if as_list else updates)
    f()
    assert (a.get_value(), b.get_value()) == (3, 20)


def test_update_with_wrong_type_is_refused():
    s = shared(np.zeros(2), "s")
    with pytest.raises(TypeError, match="update of 's'.*float64 vector"):
        function([], [], updates={s: T.cast(s, "float32")})
    with pytest.raises(TypeError, match="not a shared variable"):
        function([], [], updates={T.vector("v"): s})


@pytest.mark.parametrize("pattern, value, update", [
    ((False, False), np.ones((3, 3)), lambda m: T.alloc(np.float64(0), 1, 1)),  # would become 1x1
    ((False, False), np.ones((3, 3)), lambda m: m.sum(keepdims=True)),
    ((True, False), np.ones((1, 3)), lambda m: T.unbroadcast(m, 0) * 2),  # loses the promise
])
def test_an_update_that_changes_the_broadcast_pattern_is_refused(pattern, value, update):
    m = shared(value, "m", broadcastable=pattern)
    with pytest.raises(TypeError, match=r"update of 'm' has broadcastable pattern .*the variable's is "
                                        + re.escape(str(pattern)) + ".*patternbroadcast"):
        function([], [], updates={m: update(m)})
    np.testing.assert_array_equal(m.get_value(), value)


def test_an_update_of_the_right_shape_can_say_so_with_patternbroadcast():
    m = shared(np.ones((1, 3)), "m")  # (False, False): a 1x3 value of a matrix
    f = function([], [], updates={m: T.patternbroadcast(T.alloc(np.float64(2), 1, 3), (False, False))})
    f()
    np.testing.assert_array_equal(m.get_value(), np.full((1, 3), 2.0))


def test_update_listed_twice_is_refused():
    s = shared(np.zeros(2), "s")
    with pytest.raises(ValueError, match="updated twice"):
        function([], [], updates=[(s, s + 1), (s, s + 2)])


def test_default_update_runs_unless_disabled():
    s = shared(np.float64(0), "s")
    s.default_update = s + 1
    f = function([], s * 1)
    assert f() == 0 and f() == 1 and s.get_value() == 2
    function([], s * 1, no_default_updates=True)()
    function([], s * 1, no_default_updates=[s])()
    assert s.get_value() == 2
    function([], [], updates={s: s + 10})()  # an explicit update wins
    assert s.get_value() == 12


def test_no_default_updates_list_keeps_other_default_updates():
    a, b = shared(np.float64(0), "a"), shared(np.float64(0), "b")
    a.default_update = a + 1
    b.default_update = b + 1
    function([], a + b, no_default_updates=[a])()
    assert (a.get_value(), b.get_value()) == (0, 1)


# ------------------------------------------------------------------- copy
def test_copy_runs_the_same_graph_and_shares_shared_variables():
    s = shared(np.float64(0), "s")
    f = function([], s * 1, updates={s: s + 1})
    g = f.copy()
    assert isinstance(g, Function) and g is not f
    f()
    g()
    assert s.get_value() == 2


def test_copy_swap_uses_another_shared_variable():
    s, other = shared(np.float64(0), "s"), shared(np.float64(100), "other")
    f = function([], s * 1, updates={s: s + 1})
    g = f.copy(swap={s: other})
    assert g() == [100]  # Theano 1.0: a copy with swap returns a list
    assert other.get_value() == 101 and s.get_value() == 0
    with pytest.raises(TypeError, match="replacement"):
        f.copy(swap={s: shared(np.zeros(2))})


def test_copy_delete_updates_drops_every_update():
    s = shared(np.float64(0), "s")
    s.default_update = s + 5
    acc = T.scalar("acc")
    f = function([In(acc, value=0.0, update=acc + 1, name="acc")], acc + s, updates={s: s + 1})
    g = f.copy(delete_updates=True)
    g()
    assert g() == [0]  # Theano 1.0: a list
    assert s.get_value() == 0 and g["acc"] == 0
    # An input that only fed an update is kept, unused (Theano).
    w = T.dscalar("w")
    h = function([acc, w], acc * 2, updates={s: s + w}).copy(delete_updates=True)
    assert h(1.0, 5.0) == [2.0] and s.get_value() == 0


def test_copy_has_its_own_stored_values():
    acc = T.scalar("acc")
    f = function([In(acc, value=0.0, update=acc + 1, name="acc")], acc)
    f()
    g = f.copy()
    g()
    assert f["acc"] == 1 and g["acc"] == 2
    h = f.copy()
    f["acc"][...] = 7  # the stored value itself, not a copy
    assert f() == 7 and h["acc"] == 1


# -------------------------------------------------------- introspection
def test_maker_fgraph_toposort_lists_the_nodes_in_execution_order():
    x = T.vector("x")
    f = function([x], T.exp(x) + T.log(x), mode="FAST_COMPILE")  # unfused: three nodes
    nodes = f.maker.fgraph.toposort()
    assert all(isinstance(n, Apply) for n in nodes)
    assert str(nodes[-1].op) == "Elemwise{add,no_inplace}"
    position = {n: i for i, n in enumerate(nodes)}
    assert all(position[i.owner] < position[n] for n in nodes for i in n.inputs if i.owner)


# ------------------------------------------------------------ trust_input
def test_trust_input_skips_checking():
    x = T.ivector("x")
    f = function([x], x + 1, trust_input=True)
    np.testing.assert_array_equal(f(np.array([1, 2], dtype="int32")), [2, 3])
    f(np.array([1, 2], dtype="int64"))  # not checked: no TypeError
    g = function([x], x + 1)
    g.trust_input = True
    g(np.array([1, 2], dtype="int64"))


# ------------------------------------------------------------------ errors
def test_error_inside_a_thunk_names_the_node_and_input_shapes():
    x, y = T.vector("x"), T.vector("y")
    f = function([x, y], x + y)
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4))
    note = "\n".join(getattr(info.value, "__notes__", []))
    assert "Elemwise{add,no_inplace}" in note
    assert "(3,)" in note and "(4,)" in note
    assert "test_function.py" in note  # where the node was built
    assert "exception_verbosity" not in note
    with config.change_flags(exception_verbosity="high"):
        with pytest.raises(ValueError) as info:
            f(np.ones(3), np.ones(4))
    note = "\n".join(info.value.__notes__)
    assert "graph of its inputs (exception_verbosity=high)" in note and "x [id A] <TensorType(float64" in note


def test_error_inside_a_thunk_does_not_keep_the_callers_arrays():
    x, y = T.vector("x"), T.vector("y")
    f = function([x, y], x + y)
    with pytest.raises(ValueError):
        f(np.ones(3), np.ones(4))
    assert all(cell[0] is None for cell in (f.storage_map[v] for v in f.maker.fgraph.inputs))


# --------------------------------------------------------------- allow_gc
@pytest.mark.parametrize("allow_gc", [False, True])
def test_allow_gc_frees_intermediate_buffers(allow_gc):
    x = T.vector("x")
    with config.change_flags(allow_gc=allow_gc):
        f = function([x], T.exp(x) * 2, mode="FAST_COMPILE")  # unfused: exp(x) is a buffer
    f(np.ones(3))
    intermediate = f.maker.fgraph.toposort()[0].outputs[0]  # exp(x)
    assert (f.storage_map[intermediate][0] is None) == allow_gc
    np.testing.assert_allclose(f(np.ones(3)), 2 * np.e)


def test_kept_intermediate_buffers_are_reused_and_results_stay_right():
    x = T.vector("x")
    f = function([x], (T.exp(x) * 2) + 1)
    for n in (3, 3, 5, 1):
        value = np.arange(n, dtype="float64")
        np.testing.assert_allclose(f(value), np.exp(value) * 2 + 1)


def test_free_drops_intermediate_buffers():
    x = T.vector("x")
    f = function([x], T.exp(x) * 2)
    f(np.ones(3))
    f.free()
    assert all(f.storage_map[v][0] is None for n in f.maker.fgraph.toposort() for v in n.outputs)
    np.testing.assert_allclose(f(np.ones(3)), 2 * np.e)
