"""Theano's names of rewrites (``theano.tensor.opt.local_dimshuffle_lift``...) are local
optimizers made of ours: a Theano program walks a graph with them, and modes take the names."""
import numpy as np
import pytest

from arignote import function
from arignote import tensor as T
from arignote.compat.theano import opt as gof_opt
from arignote.compat.theano import tensor_opt
from arignote.compile.mode import FAST_RUN
from arignote.graph import FunctionGraph
from tests.rewriting.rewrite_utils import op_names

x = T.dmatrix("x")


def test_every_theano_name_is_a_local_optimizer():
    for name in tensor_opt._THEANO_REWRITES:
        found = getattr(tensor_opt, name)
        assert isinstance(found, gof_opt.LocalOptimizer) and repr(found) == name


def test_a_walk_with_dimshuffle_lift_cancels_transposes():
    fg = FunctionGraph([x], [(T.exp(x).T + 1).T])
    gof_opt.out2in(tensor_opt.local_dimshuffle_lift).optimize(fg)
    ops = [str(n.op) for n in fg.toposort() if n.inputs[0].owner is not None or n.inputs[0] in fg.inputs]
    assert ops == ["Elemwise{exp,no_inplace}", "Elemwise{add,no_inplace}"]  # the constant's broadcast aside
    fg = FunctionGraph([x], [x.T.T])
    gof_opt.out2in(tensor_opt.local_dimshuffle_lift).optimize(fg)
    assert fg.outputs == fg.inputs


def test_a_walk_with_useless_alloc_reads_shapes_from_the_graph():
    fg = FunctionGraph([x], [T.alloc(x, x.shape[0], x.shape[1]) * 2])
    gof_opt.in2out(tensor_opt.local_useless_alloc).optimize(fg)
    assert "Alloc" not in [type(n.op).__name__ for n in fg.toposort()]


def test_transform_alone_applies_what_needs_no_shapes():
    fg = FunctionGraph([x], [T.switch(1, x, x * 2)])
    node = fg.outputs[0].owner
    (out,) = tensor_opt.local_useless_switch.transform(node) or [None]
    assert out is fg.inputs[0]


@pytest.mark.parametrize("theano_name, build", [
    ("local_zero_div", lambda: T.zeros_like(x) / x),
    ("local_op_of_op", lambda: x.sum(0).sum(0)),
    ("local_setsubtensor_of_constants", lambda: T.set_subtensor(T.zeros_like(x)[:1], 0.0)),
])
def test_modes_exclude_rewrites_by_theano_name(theano_name, build):
    on = function([x], build(), mode=FAST_RUN.excluding("fusion"))
    off = function([x], build(), mode=FAST_RUN.excluding("fusion", theano_name))
    assert op_names(on) != op_names(off)
    value = np.arange(6.0).reshape(2, 3) + 1
    np.testing.assert_allclose(on(value), off(value))
