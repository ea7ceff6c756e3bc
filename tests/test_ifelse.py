"""ifelse: values, laziness (only the branch taken runs, nested too), types, the constant
condition, gradients, aliasing of inputs passed through."""
import numpy as np
import pytest

from arignote import config, function, shared, tensor as T
from arignote.gradient import grad, verify_grad
from arignote.graph.basic import Apply, Op
from arignote.ifelse import IfElse, ifelse
from arignote.scan_module import scan

RUNS: list = []


class Counted(Op):
    """2x, recording each run under ``tag``."""

    __props__ = ("tag",)

    def __init__(self, tag):
        self.tag = tag

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        RUNS.append(self.tag)
        output_storage[0][0] = inputs[0] * 2

    def grad(self, inputs, output_grads):
        return [output_grads[0] * 2]


@pytest.fixture(autouse=True)
def fresh_runs():
    RUNS.clear()


def test_only_the_branch_taken_runs():
    a, b = T.dscalars("a", "b")
    x, y = T.dvectors("x", "y")
    z = ifelse(T.lt(a, b), T.mean(Counted("then")(x)), T.mean(Counted("else")(y)))
    f = function([a, b, x, y], z)
    assert f(1.0, 2.0, np.ones(3), np.full(3, 5.0)) == 2.0 and RUNS == ["then"]
    RUNS.clear()
    assert f(3.0, 2.0, np.ones(3), np.full(3, 5.0)) == 10.0 and RUNS == ["else"]
    # switch, by contrast, computes both sides.
    RUNS.clear()
    function([a, b, x, y], T.switch(T.lt(a, b), T.mean(Counted("t")(x)), T.mean(Counted("e")(y))))(
        1.0, 2.0, np.ones(3), np.ones(3))
    assert sorted(RUNS) == ["e", "t"]


def test_nested_and_shared_work():
    c1, c2 = T.iscalars("c1", "c2")
    x = T.dvector("x")
    common = Counted("common")(x)
    inner = ifelse(c2, Counted("inner-then")(common), Counted("inner-else")(x))
    out = ifelse(c1, inner.sum(), Counted("outer-else")(common).sum())
    f = function([c1, c2, x], out)
    expected = {(1, 1): ["common", "inner-then"], (1, 0): ["common", "inner-else"],
                (0, 1): ["common", "outer-else"], (0, 0): ["common", "outer-else"]}
    for (v1, v2), runs in expected.items():
        RUNS.clear()
        f(v1, v2, np.ones(2))
        assert RUNS == runs, (v1, v2)
    # A value needed outside the ifelse runs whatever the condition.
    RUNS.clear()
    g = function([c1, x], [ifelse(c1, Counted("only")(x), x), Counted("always")(x)])
    g(0, np.ones(2))
    assert RUNS == ["always"]


def test_several_outputs_and_types():
    c = T.bscalar("c")
    x, m = T.dvector("x"), T.dmatrix("m")
    r = T.drow("r")
    a, b = ifelse(c, [x, m], [x * 2, m * 3])
    f = function([c, x, m], [a, b])
    xv, mv = np.arange(3.0), np.ones((2, 3))
    np.testing.assert_array_equal(f(1, xv, mv)[1], mv)
    np.testing.assert_array_equal(f(0, xv, mv)[0], xv * 2)
    both = ifelse(c, r, m)  # a row and a matrix meet as a matrix
    assert both.broadcastable == (False, False)
    with pytest.raises(TypeError, match="same dtype and number of dimensions"):
        ifelse(c, x, m)
    with pytest.raises(TypeError, match="must be a scalar"):
        ifelse(x, x, x)
    with pytest.raises(ValueError, match="same number"):
        ifelse(c, [x, x], [x])
    assert str(IfElse(1, name="pick")) == "if{pick}"


def test_inputs_passed_through_are_not_aliased():
    c = T.iscalar("c")
    x, y = T.dvectors("x", "y")
    f = function([c, x, y], ifelse(c, x, y))
    xv = np.ones(2)
    out = f(1, xv, np.zeros(2))
    out[0] = 5.0
    assert xv[0] == 1.0
    s = shared(np.zeros(2))
    g = function([c, x], ifelse(c, s, x))
    g(1, xv)[0] = 7.0
    assert s.get_value()[0] == 0.0


def test_constant_condition_is_resolved_when_compiling():
    x = T.dvector("x")
    f = function([x], ifelse(T.constant(1), Counted("kept")(x), x * 2))
    assert not any(isinstance(n.op, IfElse) for n in f.maker.fgraph.toposort())
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])


def test_gradient_goes_to_the_branch_taken():
    c = T.iscalar("c")
    x, y = T.dvectors("x", "y")
    cost = ifelse(c, (x ** 2).sum(), (y ** 3).sum())
    gx, gy = grad(cost, [x, y])
    f = function([c, x, y], [gx, gy])
    xv, yv = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_allclose(f(1, xv, yv), [2 * xv, 0 * yv])
    np.testing.assert_allclose(f(0, xv, yv), [0 * xv, 3 * yv ** 2])
    for compare in (T.lt, T.gt):  # a condition computed at run time: then, else
        verify_grad(lambda x, y, compare=compare: ifelse(compare(x.sum(), 100.0), x * y, y ** 2), [xv, yv])


def test_ifelse_in_a_scan_step():
    x = T.dvector("x")
    out, _ = scan(lambda v: ifelse(T.gt(v, 0), v * 2, -v), sequences=[x])
    np.testing.assert_array_equal(function([x], out)(np.array([1.0, -2.0, 3.0])), [2.0, 2.0, 6.0])


def test_ifelse_and_its_gradient_get_test_values():
    """With compute_test_value on, an ifelse's outputs (and its gradient's) get the taken
    branch's test value, as any other node's do."""
    with config.change_flags(compute_test_value="raise"):
        c = T.iscalar("c")
        c.tag.test_value = 1
        x, y = T.vector("x"), T.vector("y")
        x.tag.test_value = np.array([1.0, 2.0])
        y.tag.test_value = np.array([3.0, 4.0])
        np.testing.assert_array_equal(ifelse(c, x, y).tag.test_value, [1.0, 2.0])
        np.testing.assert_array_equal(ifelse(c - 1, [x], [y])[0].tag.test_value, [3.0, 4.0])
        g = grad((ifelse(0, x, y) * x).sum(), x)
        np.testing.assert_array_equal(g.tag.test_value, [3.0, 4.0])


def test_ifelse_keeps_theanos_constructor_flags_without_changing_equality():
    op = IfElse(2, as_view=True, gpu=False, name="pick")
    assert (op.as_view, op.gpu, op.n_outs) == (True, False, 2)
    assert op == IfElse(2, name="pick") and hash(op) == hash(IfElse(2, name="pick"))
