"""The debugging tools as Theano code drives them: the attributes of DebugMode's errors (the
rewrite's name in ``BadOptimization.reason``), Theano's names of rewrites in ``excluding``, the
shared predefined modes and the flags their defaults read."""
from __future__ import annotations

import io

import numpy as np
import pytest

from arignote import config, function, tensor as T
from arignote.compile.debugmode import (BadDestroyMap, BadOptimization, BadThunkOutput, BadViewMap,
                                        DebugMode, InvalidValueError, StochasticOrder)
from arignote.compile.mode import Mode, get_mode, predefined_modes
from arignote.compile.nanguardmode import NanGuardMode
from arignote.compile.profiling import ProfileStats
from arignote.graph.basic import Apply, Op
from arignote.graph.rewriting.basic import in_to_out, node_rewriter
from arignote.tensor.type import TensorType


class AddOffByHalf(Op):
    """Adds, plus 0.5: a wrong replacement for ``a + b``."""

    __props__ = ()

    def make_node(self, a, b):
        a, b = T.as_tensor_variable(a), T.as_tensor_variable(b)
        return Apply(self, [a, b], [a.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + inputs[1] + 0.5


@node_rewriter([T.add])
def add_off_by_half(fgraph, node):
    if node.op == T.add and len(node.inputs) == 2:
        return [AddOffByHalf()(*node.inputs)]
    return None


def test_debug_mode_names_the_wrong_rewrite_in_reason():
    a, b = T.dvectors("a", "b")
    f = function([a, b], a + b, mode=DebugMode(optimizer=in_to_out(add_off_by_half)))
    with pytest.raises(BadOptimization, match="rewrite add_off_by_half replaced") as info:
        f([1.0, 2.0], [3.0, 4.0])
    err = info.value
    assert err.reason == "add_off_by_half"
    assert err.old_r.owner.op == T.add and isinstance(err.new_r.owner.op, AddOffByHalf)
    np.testing.assert_allclose(err.new_r_val - err.old_r_val, [0.5, 0.5])


def test_a_rewrite_that_fires_every_other_time_is_a_stochastic_order():
    state = [False]

    @node_rewriter([T.add])
    def sometimes(fgraph, node):
        state[0] = not state[0]
        return [AddOffByHalf()(*node.inputs)] if state[0] else None

    a, b = T.dvectors("a", "b")
    with pytest.raises(StochasticOrder):
        function([a, b], a + b, mode=DebugMode(optimizer=in_to_out(sometimes), stability_patience=2))


def test_an_error_in_a_node_a_rewrite_made_names_the_rewrite():
    @node_rewriter([T.add])
    def doubles_b(fgraph, node):
        a, b = node.inputs
        if b.owner is None:
            return [node.op(a, T.concatenate([b, b]))]
        return None

    a, b = T.dvectors("a", "b")
    f = function([a, b], a + b, mode=DebugMode(optimizer=in_to_out(doubles_b), stability_patience=1))
    with pytest.raises(ValueError) as info:
        f([1.0, 2.0], [3.0, 4.0])
    assert "the node was made by the rewrite doubles_b" in "\n".join(info.value.__notes__)


class _Vector(Op):
    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])


class Overwrites(_Vector):
    def perform(self, node, inputs, out):
        inputs[0] *= 2
        out[0][0] = inputs[0].copy()


class Aliases(_Vector):
    def perform(self, node, inputs, out):
        out[0][0] = inputs[0]


class MakesNaN(_Vector):
    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * np.nan


class PerformDisagrees(_Vector):
    """Its first run gives one answer, every later run another: what perform (run again as the
    reference) is compared with then differs."""

    def __init__(self):
        self.runs = 0

    def perform(self, node, inputs, out):
        self.runs += 1
        out[0][0] = inputs[0] * (1 if self.runs == 1 else 2)


@pytest.mark.parametrize("op, error, attributes", [
    (Overwrites(), BadDestroyMap, {"idx": 0}),
    (Aliases(), BadViewMap, {"output_idx": 0, "in_alias_idx": [0]}),
    (MakesNaN(), InvalidValueError, {}),
])
def test_each_error_carries_theanos_attributes(op, error, attributes):
    x = T.dvector("x")
    f = function([x], op(x), mode=DebugMode(optimizer=None, check_c_code=False))
    with pytest.raises(error) as info:
        f(np.ones(3))
    for name, value in attributes.items():
        assert getattr(info.value, name) == value
    if error is InvalidValueError:
        assert info.value.r is f.maker.fgraph.outputs[0] and np.isnan(info.value.v).all()
    else:
        assert info.value.node.op is op


def test_bad_thunk_output_carries_the_variable_and_both_values():
    x = T.dvector("x")
    op = PerformDisagrees()
    f = function([x], op(x), mode=DebugMode(optimizer=None, check_c_code=False))
    with pytest.raises(BadThunkOutput) as info:
        f(np.ones(2))
    assert info.value.r.owner.op is op
    np.testing.assert_array_equal(info.value.val1, [2.0, 2.0])
    np.testing.assert_array_equal(info.value.val2, [1.0, 1.0])


def test_check_py_code_false_skips_the_comparison_with_perform():
    x = T.dvector("x")
    f = function([x], PerformDisagrees()(x), mode=DebugMode(optimizer=None, check_c_code=False,
                                                               check_py_code=False))
    np.testing.assert_array_equal(f(np.ones(2)), [1.0, 1.0])


def test_check_isfinite_false_lets_nan_and_inf_through():
    x = T.dvector("x")
    f = function([x], (x + 2) * 5, mode=DebugMode(check_isfinite=False))
    assert np.isnan(f(np.log([3.0, -4.0, 5.0]))[1])
    assert np.isinf(f(np.array([1.0, 1.0]) / 0)).all()
    g = function([x], (x + 2) * 5, mode=DebugMode())
    with pytest.raises(InvalidValueError, match="holds NaN"):
        g(np.log([3.0, -4.0, 5.0]))


def test_predefined_debug_mode_is_one_instance_whose_settings_apply():
    mode = predefined_modes["DEBUG_MODE"]
    assert isinstance(mode, DebugMode) and get_mode("DEBUG_MODE") is mode
    assert isinstance(predefined_modes["NanGuardMode"], NanGuardMode)
    x = T.dvector("x")
    f = function([x], T.log(x), mode="DEBUG_MODE")
    old = mode.check_isfinite
    try:
        mode.check_isfinite = False
        assert np.isnan(f(np.array([-1.0]))[0])
        mode.check_isfinite = True
        with pytest.raises(InvalidValueError):
            f(np.array([-1.0]))
    finally:
        mode.check_isfinite = old


def test_filter_checks_isfinite_refuses_nan_inputs():
    x = T.dvector("x")
    f = function([x], x * 2)
    assert TensorType.filter_checks_isfinite is False
    assert np.isnan(f(np.array([np.nan]))[0])
    try:
        TensorType.filter_checks_isfinite = True
        with pytest.raises(ValueError, match="holds NaN or inf.*filter_checks_isfinite"):
            x.type.filter(np.array([np.inf]))
        g = function([x], x * 2)  # made while the switch is on: its inputs are filtered
        with pytest.raises(ValueError, match="holds NaN or inf"):
            g(np.array([np.inf]))
        np.testing.assert_array_equal(g(np.array([1.0])), [2.0])
    finally:
        TensorType.filter_checks_isfinite = False


def test_the_modes_defaults_are_the_theano_flags():
    with config.change_flags({"DebugMode.patience": 3, "DebugMode.check_finite": False,
                              "DebugMode.check_py": False, "NanGuardMode.big_is_error": False}):
        mode = DebugMode()
        assert (mode.stability_patience, mode.check_isfinite, mode.check_py_code) == (3, False, False)
        assert NanGuardMode().errors == (True, True, False)
    assert DebugMode().stability_patience == 10 and NanGuardMode().errors == (True, True, True)


def test_profile_summary_rows_follow_the_profiling_flags():
    x = T.dvector("x")
    prof = ProfileStats(atexit_print=False)
    f = function([x], T.exp(x) + T.log(x) * T.sin(x), profile=prof, mode=Mode(optimizer=None))
    f(np.ones(3))
    with config.change_flags({"profiling.n_ops": 1, "profiling.n_apply": 2}):
        out = io.StringIO()
        prof.summary(out)
    text = out.getvalue()
    # five nodes of five ops of one class: 1 op row shown of 5, 2 node rows of 5
    assert "remaining 4 account for" in text and "remaining 3 account for" in text


def _fused_and_inplace(mode=None):
    x = T.dmatrix("x")
    out = T.log(T.dot(x, x)) * T.dot(x, x)  # a product's buffer, which the fused op may overwrite
    nodes = function([x], out, mode=mode).maker.fgraph.apply_nodes
    return (any("Composite" in str(n.op) for n in nodes),
            any(n.op.destroy_map for n in nodes if "DimShuffle" not in str(n.op)))


@pytest.mark.parametrize("theano_names, left", [
    (("local_elemwise_fusion", "inplace_elemwise_optimizer"), (False, False)),
    (("fusion", "inplace"), (False, False)),
    (("local_elemwise_fusion",), (False, True)),
    (("inplace_opt",), (True, False)),
])
def test_theanos_rewrite_names_exclude_our_rewrites(theano_names, left):
    assert _fused_and_inplace() == (True, True)
    assert _fused_and_inplace(get_mode("FAST_RUN").excluding(*theano_names)) == left


def test_the_optimizer_flags_adjust_the_default_mode_only():
    with config.change_flags(optimizer_excluding="local_elemwise_fusion:inplace"):
        assert _fused_and_inplace() == (False, False)
        assert _fused_and_inplace("FAST_RUN") == (True, True)  # a mode named is left as it is
    with config.change_flags(optimizer="fast_compile", optimizer_including="fusion"):
        assert _fused_and_inplace() == (True, False)
    with config.change_flags(optimizer_requiring="no_rewrite_has_this_tag"):
        assert _fused_and_inplace() == (False, False)
