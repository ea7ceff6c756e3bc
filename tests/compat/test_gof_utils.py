"""theano.gof.utils, theano.gof.toolbox and the gof.link / gof.vm / gof.sched modules under the alias."""
from __future__ import annotations

import pytest


def test_give_variables_names_makes_names_distinct_once(theano):
    from theano.gof.utils import give_variables_names, unique
    x = theano.tensor.matrix("x")
    y = x + 1
    z = theano.tensor.dot(x, y)
    twin = theano.tensor.matrix("x")
    variables = [x, y, z, twin]
    give_variables_names(variables)
    names = [v.name for v in variables]
    assert all(names) and unique(names) and names[:3] == ["x_0", "_0", "_1"] and names[3] == "x_1"
    give_variables_names(variables)
    assert [v.name for v in variables] == names
    lone = theano.tensor.vector("w")
    give_variables_names([lone])
    assert lone.name == "w"


def test_small_helpers(theano):
    from theano.gof import utils
    assert utils.remove(lambda v: v % 2 == 0, range(6)) == [1, 3, 5]
    assert utils.unique([1, 2, 3]) and not utils.unique([1, 2, 1])
    assert utils.uniq([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert utils.difference([1, 2, 3, 4], [2, 4]) == [1, 3]
    assert utils.difference([[1], [2]], [[2]]) == [[1]]
    assert utils.flatten([1, (2, [3, 4]), [[5]]]) == [1, 2, 3, 4, 5] and utils.flatten(7) == [7]
    assert utils.hash_from_code("abc") == utils.hash_from_code(b"abc") != utils.hash_from_code("abd")
    assert utils.hash_from_code("x").startswith("m")
    order = utils.toposort({"c": ["a", "b"], "b": ["a"]})
    assert order.index("a") < order.index("b") < order.index("c")
    with pytest.raises(ValueError, match="cycle"):
        utils.toposort({"a": ["b"], "b": ["a"]})
    calls = []
    square = utils.memoize(lambda v: calls.append(v) or v * v)
    assert square(3) == square(3) == 9 and calls == [3]
    pad = utils.scratchpad()
    pad.a = 1
    assert "a" in repr(pad) and utils.D(b=2).b == 2
    assert issubclass(utils.MethodNotDefined, NotImplementedError)
    assert "test_gof_utils.py" in utils.get_variable_trace_string(theano.tensor.vector())


def test_gof_modules_resolve(theano):
    from theano.gof import link, sched, toolbox, vm
    from theano.gof.cc import CLinker, OpWiseCLinker
    from theano.gof.op import debug_error_message, get_debug_values
    assert vm.VM_Linker is link.VM_Linker and callable(sched.sort_schedule_fn)
    assert toolbox.NodeFinder and toolbox.ReplaceValidate and callable(get_debug_values)
    assert callable(debug_error_message)
    assert theano.OpWiseCLinker is OpWiseCLinker and issubclass(CLinker, link.PerformLinker)


def test_opwise_linker_in_a_mode_orders_by_its_schedule(theano):
    from theano.gof.sched import key_to_cmp, sort_schedule_fn
    x = theano.tensor.matrix("x")
    y = theano.tensor.dot(x[:2] * 2, x.T + 1).T
    schedule = sort_schedule_fn(key_to_cmp(str))
    f = theano.function([x], y, mode=theano.Mode(linker=theano.OpWiseCLinker(schedule=schedule)))
    assert f.maker.linker.make_all()[-1] == schedule(f.maker.fgraph)
