"""The generic IR: Op identity from __props__, Variable, Constant, Apply."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.graph.basic import Apply, Constant, Op, Variable
from tests.graph._ops import Combine, Thing, f, g, two, var


class WithArray(Op):
    __props__ = ("weights", "axis")

    def __init__(self, weights, axis=None):
        self.weights = weights
        self.axis = axis


class NoProps(Op):
    pass


class EmptyProps(Op):
    __props__ = ()


def test_op_equality_and_hash_follow_props():
    assert Combine("f") == Combine("f") and hash(Combine("f")) == hash(Combine("f"))
    assert Combine("f") != Combine("g")
    assert Combine("f", nout=2) != Combine("f")
    assert len({Combine("f"), Combine("f"), Combine("g")}) == 2


def test_props_holding_arrays_lists_and_dicts_hash_by_content():
    a, b = WithArray(np.arange(3)), WithArray(np.arange(3))
    assert hash(a) == hash(b)
    assert hash(WithArray([1, [2, 3]], {"k": [1]})) == hash(WithArray([1, [2, 3]], {"k": [1]}))
    assert hash(a) != hash(WithArray(np.arange(3.0)))  # same values, other dtype


def test_an_op_hash_is_kept_until_an_attribute_changes_and_never_pickled_or_copied():
    import copy
    import pickle
    op = Combine("f")
    first = hash(op)
    assert op.__dict__["_hash"] == first  # computed once, then reused
    op.label = "g"  # assigning any attribute drops it
    assert hash(op) == hash(Combine("g")) != first and op == Combine("g")
    for twin in (pickle.loads(pickle.dumps(op)), copy.copy(op), copy.deepcopy(op)):
        assert "_hash" not in twin.__dict__  # another process's hash differs
        assert twin == op and hash(twin) == hash(op)


def test_ops_of_different_classes_never_compare_equal():
    class Other(Combine):
        pass
    assert Combine("f") != Other("f")
    assert EmptyProps() == EmptyProps() and hash(EmptyProps()) == hash(EmptyProps())


def test_an_op_whose_class_declares_no_props_is_equal_only_to_itself():
    """Theano's rule: without __props__ (or an __eq__ of its own), two instances are two ops,
    so nodes of a user's Scale(2) and Scale(3) are never merged into one."""
    op = NoProps()
    assert op == op and NoProps() != NoProps() and len({NoProps(), NoProps()}) == 2
    assert hash(op) == hash(op)

    class Scale(Op):
        def __init__(self, k):
            self.k = k

        def make_node(self, x):
            x = T.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, outputs):
            outputs[0][0] = inputs[0] * self.k

    x = T.dvector("x")
    f = function([x], [Scale(2)(x), Scale(3)(x)])
    doubled, tripled = f(np.ones(2))
    np.testing.assert_array_equal(doubled, [2, 2])
    np.testing.assert_array_equal(tripled, [3, 3])


def test_op_str_and_repr_from_props():
    assert str(Combine("f")) == "Combine{label=f, nout=1}" == repr(Combine("f"))
    assert str(NoProps()) == "NoProps"


def test_op_call_returns_the_output_or_the_list_of_outputs():
    x = var("x")
    out = f(x)
    assert isinstance(out, Variable) and out.owner.op == f and out.owner.inputs == [x]
    outs = two(x)
    assert isinstance(outs, list) and [o.index for o in outs] == [0, 1]


def test_op_without_perform_infer_shape_or_grad_says_so():
    node = Apply(NoProps(), [], [Thing()()])
    with pytest.raises(NotImplementedError, match="NoProps has no perform"):
        NoProps().perform(node, [], [[None]])
    with pytest.raises(NotImplementedError, match="infer_shape"):
        NoProps().infer_shape(None, node, [])
    with pytest.raises(NotImplementedError, match="gradient"):
        NoProps().grad([], [])


class OnlyTheanoC(Op):
    __props__ = ()

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def c_code(self, node, name, inputs, outputs, sub):
        return f"{outputs[0]} = {inputs[0]} + 1;"


def test_an_op_with_only_theanos_c_code_says_it_needs_a_perform():
    x = T.dvector("x")
    f = function([x], OnlyTheanoC()(x))
    with pytest.raises(NotImplementedError, match=r"OnlyTheanoC has no perform\(\): its c_code\(\) is C for "
                       r"Theano's C linker, which arignote does not compile; give the op a perform\(\)"):
        f(np.ones(2))


def test_apply_links_its_outputs():
    x, y = var("x"), var("y")
    node = f.make_node(x, y)
    out = node.outputs[0]
    assert out.owner is node and out.index == 0 and node.out is out
    assert node.nin == 2 and node.nout == 1
    assert node.default_output() is out
    assert str(node) == "Combine{label=f, nout=1}(x, y)"


def test_an_output_cannot_belong_to_two_nodes():
    out = f(var("x"))
    with pytest.raises(ValueError, match="already belongs"):
        Apply(g, [var("y")], [out])


def test_default_output_of_a_multi_output_node_needs_an_index():
    node = two.make_node(var("x"))
    with pytest.raises(ValueError, match="pick one by index"):
        node.default_output()


def test_clone_with_new_inputs_same_types_keeps_the_op():
    x, y = var("x"), var("y")
    node = f.make_node(x)
    new = node.clone_with_new_inputs([y])
    assert new is not node and new.op is f and new.inputs == [y]
    assert new.outputs[0] is not node.outputs[0]
    assert new.outputs[0].type == node.outputs[0].type


def test_clone_with_new_inputs_of_other_types():
    node = f.make_node(var("x"))
    other = var("z", kind="other")
    with pytest.raises(TypeError, match="types differ"):
        node.clone_with_new_inputs([other])
    rebuilt = node.clone_with_new_inputs([other], strict=False)
    assert rebuilt.inputs == [other]


def test_variable_str_names_and_describe():
    x = var("x")
    assert str(x) == "x" and x.describe() == "'x'"
    anonymous = Thing()()
    assert str(anonymous) == "<thing>"
    assert "test_basic.py" in anonymous.describe()
    assert str(f(x)) == "Combine{label=f, nout=1}.0"
    assert str(two(x)[1]) == "Combine{label=two, nout=2}.1"
    assert x.auto_name != var("x").auto_name


def test_variable_clone_is_ownerless_with_the_same_type_and_name():
    out = f(var("x"))
    out.name = "out"
    out.tag.note = 1
    copy = out.clone()
    assert copy.owner is None and copy.type == out.type and copy.name == "out"
    assert copy.tag.note == 1
    copy.tag.note = 2
    assert out.tag.note == 1


def test_constants():
    c = Constant(Thing(), (1, 2), name=None)
    assert c.data == (1, 2) and c.owner is None
    assert c.signature() == Constant(Thing(), (1, 2)).signature()
    assert str(c) == "(1, 2)"
    long = Constant(Thing(), "x" * 50)
    assert len(str(long)) < 25
    assert c.clone().data == c.data and c.clone() is not c


def test_variable_parents():
    x = var("x")
    out = f(x)
    assert out.get_parents() == [out.owner]
    assert x.get_parents() == []


def _line_of(marker: str) -> str:
    """``file:line`` of the line of this file holding ``marker`` (in a comment)."""
    lines = open(__file__).read().splitlines()
    return f"{__file__}:{next(k for k, text in enumerate(lines, 1) if text.endswith('# ' + marker))}"


def test_a_variable_is_traced_to_the_line_that_made_it_and_a_compile_to_its_call(monkeypatch):
    """Variables the rewrites make inside function() are traced, found once, to the user's
    function() call; outside it, and in another thread meanwhile, each to its own line."""
    import threading

    from arignote import function, tensor as T
    from arignote.graph import basic
    from arignote.graph.basic import traced_to_caller

    x = T.vector("x")  # made here
    assert x.tag.trace == _line_of("made here")
    y = T.exp(x) * 2 + 1  # the expression
    made = []
    tag = basic.testvalue.Tag
    monkeypatch.setattr(basic.testvalue, "Tag", lambda *a, trace: made.append(trace) or tag(*a, trace=trace))
    function([x], y)  # compiled here
    monkeypatch.undo()
    # clones keep their original's line; what the rewrites make is the call's
    assert set(made) <= {_line_of("made here"), _line_of("the expression"), _line_of("compiled here")}
    assert _line_of("compiled here") in made
    seen = {}
    with traced_to_caller():  # entered here
        seen["inside"] = Variable(x.type).tag.trace
        worker = threading.Thread(target=lambda: seen.update(thread=Variable(x.type).tag.trace))
        worker.start()
        worker.join()
    seen["after"] = Variable(x.type).tag.trace  # after the block
    assert seen["inside"] == _line_of("entered here")
    assert seen["thread"].startswith(f"{__file__}:") and seen["thread"] != seen["inside"]
    assert seen["after"] == _line_of("after the block")


def test_an_op_call_with_return_list_gives_the_list_of_outputs():
    """Theano's ``op(*inputs, return_list=True)``: a list even for one output."""
    from arignote import function, tensor as T
    from arignote.tensor.extra_ops import RepeatOp, Unique

    x = T.vector("x")
    values, counts = Unique(return_counts=True)(x, return_list=True)
    listed = RepeatOp()(x, 2, return_list=True)  # axis None by default, as Theano's
    assert isinstance(listed, list) and len(listed) == 1
    got = function([x], [values, counts, listed[0]])(np.array([3.0, 1.0, 3.0]))
    np.testing.assert_array_equal(got[0], [1.0, 3.0])
    np.testing.assert_array_equal(got[1], [1, 2])
    np.testing.assert_array_equal(got[2], [3.0, 3.0, 1.0, 1.0, 3.0, 3.0])
