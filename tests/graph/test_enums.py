"""Enumeration types and op params: EnumType, EnumList, CEnumType, get_params/params_type."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function
from arignote import scalar
from arignote.graph.basic import Apply, Op
from arignote.graph.enums import CEnumType, EnumList, EnumType


@pytest.mark.parametrize("bad", ["a", "_A", "0", "Ab"])
def test_constant_names_must_be_upper_case_identifiers(bad):
    with pytest.raises(AttributeError, match="upper-case"):
        EnumType(**{bad: 1})
    with pytest.raises(AttributeError, match="upper-case"):
        EnumList(bad)


def test_values_must_be_numbers_and_aliases_not_names():
    with pytest.raises(TypeError, match="bool, int or float"):
        EnumType(BAD="text")
    with pytest.raises(TypeError, match="also a constant's name"):
        EnumList(("A", "a"), ("B", "B"))
    with pytest.raises(TypeError, match="given twice"):
        EnumList("A", "A")


def test_equality_by_value_and_aliases():
    e1 = EnumType(C1=True, C2=12, C4=-1, C5=False)
    e2 = EnumType(C1=1, C2=12, C4=-1.0, C5=0.0)
    assert e1 == e2 and hash(e1) == hash(e2) and not e1 != e2
    assert e1.C2 == 12 and e1.ctype == "double"
    with pytest.raises(AttributeError, match="no constant 'C9'"):
        assert e1.C9 is None
    a = EnumType(A=("alpha", 0), B=("beta", 1), C=2)
    assert a == EnumType(A=("alpha", 0), B=("beta", 1), C=2)
    assert a != EnumType(A=("a", 0), B=("beta", 1), C=2)
    assert a.filter("beta") == a.fromalias("beta") == a.B == 1
    assert a.filter("C") == 2 and a.filter(np.int64(1)) == 1
    assert a.has_alias("alpha") and a.has_alias("A") and not a.has_alias("gamma")
    assert a.get_aliases() == ("alpha", "beta") and a.keys() == ["A", "B", "C"] and len(a) == 3
    with pytest.raises(TypeError, match="not a value"):
        a.filter(7)
    with pytest.raises(KeyError, match="gamma"):
        a.fromalias("gamma")


def test_enum_list_numbers_in_order_and_cenum_is_one():
    ops = EnumList(("ADD", "+"), ("SUB", "-"), "MUL", ctype="unsigned long long")
    assert (ops.ADD, ops.SUB, ops.MUL) == (0, 1, 2) and ops.fromalias("-") == 1
    assert ops.ctype == "unsigned long long" and EnumList("X").ctype == "int"
    c = CEnumType(("MILLION", "million"), "BILLION", ctype="size_t")
    assert c.fromalias("million") == 0 and c.BILLION == 1 and isinstance(c, EnumList)


class Arith(Op):
    """An op whose choice of operation is its params, given by alias."""

    __props__ = ("choice",)
    params_type = EnumList(("ADD", "+"), ("SUB", "-"))

    def __init__(self, choice):
        self.choice = choice

    def get_params(self, node):
        return self.choice  # an alias: params_type.filter makes it the constant

    def make_node(self, a, b):
        return Apply(self, [scalar.as_scalar(a), scalar.as_scalar(b)], [scalar.float64()])

    def perform(self, node, inputs, outputs, which):
        a, b = inputs
        outputs[0][0] = np.float64(a + b if which == self.params_type.ADD else a - b)


def test_perform_gets_the_ops_params():
    a, b = scalar.int32("a"), scalar.int32("b")
    f = function([a, b], [Arith("+")(a, b), Arith("-")(a, b)])
    assert f(12, 15) == [27.0, -3.0]


def test_test_values_use_the_params_too():
    from arignote import config
    a, b = scalar.float64("a"), scalar.float64("b")
    a.tag.test_value, b.tag.test_value = 5.0, 2.0
    with config.change_flags(compute_test_value="raise"):
        assert Arith("-")(a, b).tag.test_value == 3.0


class NoPerform(Op):
    def get_params(self, node):
        return 1

    def make_node(self):
        return Apply(self, [], [scalar.float64()])


def test_an_op_with_params_but_no_perform_says_so():
    with pytest.raises(NotImplementedError, match="NoPerform has no perform"):
        function([], NoPerform()())()


def test_constant_folding_and_debugmode_give_perform_the_params():
    from arignote.compile.debugmode import DebugMode
    folded = function([], Arith("-")(scalar.constant(7.0), scalar.constant(2.0)))
    # folded at compile time, through perform: only the copy of the constant output is left
    assert [str(n.op) for n in folded.maker.fgraph.toposort()] == ["DeepCopyOp"]
    assert folded() == 5.0
    a, b = scalar.float64("a"), scalar.float64("b")
    checked = function([a, b], Arith("+")(a, b), mode=DebugMode())
    assert checked(1.5, 2.0) == 3.5
