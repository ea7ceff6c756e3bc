"""arignote.testing (Theano's ``theano.tests.unittest_tools``): seeds, assert_allclose, verify_grad."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import config, gradient, tensor as T, testing
from arignote.graph.basic import Apply, Op


def test_fetch_seed_and_seed_rng_follow_the_flag():
    with config.change_flags(**{"unittests.rseed": 1234}):
        assert testing.fetch_seed() == 1234 and testing.fetch_seed(7) == 7
        assert testing.seed_rng() == 1234
        first = np.random.rand(3)
        testing.seed_rng()
        np.testing.assert_array_equal(np.random.rand(3), first)
    with config.change_flags(**{"unittests.rseed": "random"}):
        assert testing.fetch_seed() is None


@pytest.mark.parametrize("dtype, close, far", [("float64", 5e-6, 2e-5), ("float32", 1.5e-5, 1e-4),
                                               ("float16", 5e-4, 1e-2)])
def test_assert_allclose_tolerances_follow_the_less_precise_dtype(dtype, close, far):
    """float64 1e-5 relative (+1e-8), float32 1e-5 + 1e-5, float16 1e-3 + 1e-3: 1.5e-5 off
    passes against a float32 value and fails against a float64 one."""
    expected = np.ones(4)
    testing.assert_allclose(expected, (expected + close).astype(dtype))
    value = expected.copy()
    value[2] += far
    with pytest.raises(testing.WrongValue, match=r"largest difference .* at \(2,\)"):
        testing.assert_allclose(expected, value.astype(dtype))


def test_assert_allclose_broadcasts_as_numpy_allclose_and_theano_did():
    a = np.arange(6.0).reshape(2, 3)
    testing.assert_allclose([a], a)  # (1, 2, 3) against (2, 3)
    testing.assert_allclose(np.full(4, 2.0), 2.0)
    testing.assert_allclose(np.array([1.0, np.nan]), np.array([1.0, np.nan]))  # NaN equals NaN
    with pytest.raises(testing.WrongValue, match=r"largest difference 1\.0 at \(1,\)"):
        testing.assert_allclose(np.array([2.0, 3.0]), 2.0)
    with pytest.raises(testing.WrongValue, match="the shapes do not broadcast"):
        testing.assert_allclose(np.ones(3), np.ones(4))


def test_verify_grad_passes_a_right_gradient_and_raises_on_a_wrong_one():
    point = [np.array([0.1, -0.4, 0.7])]
    testing.verify_grad(T.tanh, point)
    # zero_grad hides one factor from the gradient: x * x differentiates as x, not 2 x
    with pytest.raises(testing.verify_grad.E_grad):
        testing.verify_grad(lambda x: x * gradient.zero_grad(x), point)


class _Outer(Op):
    """outer(u, v) as a host op with an infer_shape, for InferShapeTester's own test."""

    def make_node(self, u, v):
        u, v = T.as_tensor_variable(u), T.as_tensor_variable(v)
        return Apply(self, [u, v], [T.TensorType(u.dtype, (False, False))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.outer(*inputs)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[0][0], input_shapes[1][0])]


class _SwappedOuter(_Outer):
    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[1][0], input_shapes[0][0])]


class _ShapelessOuter(_Outer):
    infer_shape = None


class _Tester(testing.InferShapeTester):
    def runTest(self):  # unittest needs one to instantiate the case
        pass


@pytest.mark.parametrize("op, error", [(_Outer, None), (_SwappedOuter, "infer_shape gives \\(4, 3\\)"),
                                       (_ShapelessOuter, "still runs")])
def test_infer_shape_tester(op, error):
    """Theano's utt.InferShapeTester._compile_and_check: infer_shape against computed shapes."""
    case = _Tester()
    case.setUp()
    u, v = T.dvector("u"), T.dvector("v")
    args = ([u, v], [op()(u, v)], [np.ones(3), np.ones(4)], op)
    if error is None:
        case._compile_and_check(*args)
    else:
        with pytest.raises(AssertionError, match=error):
            case._compile_and_check(*args)
    with pytest.raises(AssertionError, match="no _Outer node"):
        case._compile_and_check([u, v], [u + v], [np.ones(3), np.ones(3)], _Outer, warn=False)
    m = T.dmatrix("m")
    with pytest.warns(UserWarning, match="repeated lengths"):
        case._compile_and_check([m, v], [_Outer()(m[0], v)], [np.ones((3, 3)), np.ones(4)], _Outer)
    _ShapelessOuter_ok = _Tester()
    _ShapelessOuter_ok.setUp()
    _ShapelessOuter_ok._compile_and_check([u, v], [_ShapelessOuter()(u, v)], [np.ones(3), np.ones(4)],
                                          _ShapelessOuter, check_topo=False)


def test_optimization_mixin_counts_the_nodes_a_function_runs():
    from arignote import function
    from arignote.ifelse import IfElse, ifelse

    x, y = T.dvectors("x", "y")
    c = T.dscalar("c")
    f = function([c, x, y], ifelse(c, x, y) * 2)
    case = testing.TestOptimizationMixin()
    case.assertFunctionContains1(f, IfElse(1, as_view=True))
    case.assertFunctionContainsN(f, IfElse(1), 1)
    case.assertFunctionContains0(f, IfElse(2))
    case.assertFunctionContainsClass(f, IfElse)
    case.assertFunctionContainsClassN(f, IfElse, 1)
    with pytest.raises(AssertionError, match=r"runs 1 node\(s\) of if\{\}, expected 0"):
        case.assertFunctionContains0(f, IfElse(1))
    with pytest.raises(AssertionError, match="expected between 2 and"):
        case.assertFunctionContainsClass(f, IfElse, min=2)


def test_assert_failure_fast_leaves_the_test_as_it_is():
    def test():
        return 42

    assert testing.assertFailure_fast(test) is test


def test_parameterized_cases_are_named_by_their_arguments():
    parameterized = pytest.importorskip("parameterized").parameterized
    assert testing.parameterized is parameterized

    class Case:
        @parameterized.expand([(2, "a"), (3, "b c")], name_func=testing.custom_name_func)
        def test_pow(self, n, tag):
            pass

    names = sorted(name for name, value in vars(Case).items() if name.startswith("test_pow") and value)
    assert names == ["test_pow_0_2_a", "test_pow_1_3_b_c"]


def test_attr_sets_nose_style_attributes():
    from arignote.testing import attr

    @attr("slow", speed="fast")
    def case():
        return 1

    assert case.slow is True and case.speed == "fast" and case() == 1
