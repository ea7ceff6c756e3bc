"""DebugMode: correct graphs run as in FAST_RUN; deliberately wrong ops and rewrites are
caught, on the CPU and on OpenCL, with errors naming the node, the rewrite and the inputs."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import arignote
from arignote import config, function, shared, tensor as T
from arignote.backends.cpu import make_thunk
from arignote.backends.gpu import ops as gpu_ops, placement
from arignote.compile.debugmode import (BadDestroyMap, BadInferShape, BadOptimization, BadThunkOutput,
                                        BadViewMap, DebugMode, DebugModeError, InvalidValueError,
                                        StochasticOrder)
from arignote.compile.mode import get_mode
from arignote.graph.basic import Apply, Op
from arignote.graph.rewriting.basic import GraphRewriter, in_to_out, node_rewriter
from arignote.scalar.ops import TABLE
from arignote.tensor.elemwise import Elemwise
from tests.gpu.conftest import DEVICES, use



class _Unary(Op):
    """A vector op whose perform doubles its input; subclasses break one promise each."""

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def infer_shape(self, fgraph, node, input_shapes):
        return input_shapes


class OverwritesInput(_Unary):
    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        x *= 2  # writes the input, with an empty destroy_map
        output_storage[0][0] = x.copy()


class ReturnsAView(_Unary):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0][:]  # a view, with an empty view_map


class WrongInferShape(_Unary):
    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[0][0] + 1,)]


class BackendDiffers(_Unary):
    """perform doubles; the CPU thunk registered below and the GPU lowering do otherwise."""


@make_thunk.register(BackendDiffers)
def _backend_differs_thunk(op, node, input_cells, output_cells):
    def thunk():
        output_cells[0][0] = input_cells[0][0] * 2 + 1e-3
    return thunk


def _lower_to_triple(node, ctx, on_gpu):
    three = T.constant(np.full(1, 3, node.inputs[0].dtype))  # broadcastable, like the vector
    return [gpu_ops.GpuElemwise(TABLE["mul"])(on_gpu(node.inputs[0]), on_gpu(three))]


def _values(where):
    return np.arange(1, 5, dtype="float32" if where == "opencl" else "float64")


@pytest.fixture(params=["cpu", "opencl"])
def where(request):
    """Each test on the CPU and on OpenCL (float32 there, as PoCL may lack nothing but GPUs do)."""
    with use(DEVICES[request.param]), np.errstate(invalid="ignore"), \
            config.change_flags(floatX="float32" if request.param == "opencl" else "float64"):
        yield request.param


def _compile(build, mode=None):
    x = T.vector("x")
    return function([x], build(x), mode=mode or DebugMode(stability_patience=2))


def test_a_correct_training_step_runs_as_in_fast_run(where):
    def train(mode):
        with use(DEVICES[where]), config.change_flags(floatX="float32"):
            rng = np.random.default_rng(0)
            X, y = T.fmatrix("X"), T.ivector("y")
            w = shared(np.zeros((5, 3), "float32"), name="w")
            b = shared(np.zeros(3, "float32"), name="b")
            p = T.nnet.softmax(T.dot(X, w) + b)
            cost = T.nnet.categorical_crossentropy(p, y).mean()
            gw, gb = arignote.grad(cost, [w, b])
            lr = np.float32(0.5)
            step = function([X, y], cost, updates=[(w, w - lr * gw), (b, b - lr * gb)], mode=mode)
            data = rng.normal(size=(8, 5)).astype("float32")
            labels = rng.integers(0, 3, 8).astype("int32")
            return [step(data, labels) for _ in range(3)], w.get_value()
    costs, w = train(DebugMode(stability_patience=2))
    expected_costs, expected_w = train("FAST_RUN")
    np.testing.assert_allclose(costs, expected_costs, rtol=1e-5)
    np.testing.assert_allclose(w, expected_w, rtol=1e-5, atol=1e-7)


def test_the_mode_names_resolve_and_derived_modes_keep_the_checks():
    assert isinstance(get_mode("DebugMode"), DebugMode) and isinstance(get_mode("DEBUG_MODE"), DebugMode)
    with config.change_flags(mode="DebugMode"):
        assert isinstance(get_mode(None), DebugMode)
    derived = DebugMode(check_isfinite=False).excluding("fusion")
    assert isinstance(derived, DebugMode) and not derived.check_isfinite
    assert derived.exclude == ("fusion",)
    with pytest.raises(ValueError, match="require_matching_strides"):
        DebugMode(require_matching_strides=3)


def test_an_op_writing_an_undeclared_input_is_caught(where):
    f = _compile(lambda x: OverwritesInput()(T.exp(x)))
    with pytest.raises(BadDestroyMap, match=r"OverwritesInput.*changed input 0.*destroy_map \{\}") as info:
        f(_values(where))
    assert "input 0: " in str(info.value) and "shape (4,)" in str(info.value)


def test_an_op_returning_an_undeclared_view_is_caught():
    f = _compile(lambda x: ReturnsAView()(T.exp(x)))
    with pytest.raises(BadViewMap, match=r"ReturnsAView.*shares memory with input 0.*view_map \{\}"):
        f(_values("cpu"))


class OverlappingOutputs(Op):
    """Two outputs that are overlapping slices of one new array: an in-place op on one
    would change the other, and no view_map can say so."""

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type(), x.type()])

    def perform(self, node, inputs, output_storage):
        r = inputs[0] * 1
        output_storage[0][0], output_storage[1][0] = r[:-1], r[1:]


def test_outputs_sharing_memory_are_caught():
    def graph(x):
        first, second = OverlappingOutputs()(x)
        return first * 2 + second * 2
    f = _compile(graph)
    with pytest.raises(BadViewMap, match=r"OverlappingOutputs.*outputs 0 and 1 share memory"):
        f(_values("cpu"))
    # as in Theano: outputs of the function alone, or one output nothing reads, may share
    both_returned = _compile(lambda x: list(OverlappingOutputs()(x)))
    first, second = both_returned(_values("cpu"))
    np.testing.assert_array_equal(first[1:], second[:-1])
    one_read = _compile(lambda x: OverlappingOutputs()(x)[0] * 2)
    np.testing.assert_array_equal(one_read(_values("cpu")), _values("cpu")[:-1] * 2)
    assert DebugMode(check_preallocated_output=["f_contiguous"]).stability_patience == 10  # Theano's keyword


def test_a_wrong_infer_shape_is_caught(where):
    f = _compile(lambda x: WrongInferShape()(x) + 1)
    with pytest.raises(BadInferShape, match=r"WrongInferShape.*shape \(5,\), but it has shape \(4,\)"):
        f(_values(where))


def test_a_cpu_thunk_that_differs_from_perform_is_caught():
    f = _compile(lambda x: BackendDiffers()(x))
    with pytest.raises(BadThunkOutput, match=r"BackendDiffers.*differs from perform's.*expected 2\.0"):
        f(_values("cpu"))
    # check_c_code=False runs perform itself, so the backend's thunk is never used
    g = _compile(lambda x: BackendDiffers()(x), DebugMode(check_c_code=False, stability_patience=1))
    np.testing.assert_array_equal(g(_values("cpu")), _values("cpu") * 2)


def test_a_gpu_kernel_that_differs_from_the_cpu_reference_is_caught(monkeypatch):
    monkeypatch.setitem(placement._LOWERINGS, BackendDiffers, _lower_to_triple)
    monkeypatch.setitem(placement._LOWERINGS, _Unary, _lower_to_triple)  # a correct op lowered wrongly
    with use("opencl"), config.change_flags(floatX="float32"):
        f = _compile(lambda x: _Unary()(x))
        assert any("Gpu" in type(n.op).__name__ for n in f.maker.fgraph.toposort())
        with pytest.raises(BadThunkOutput, match=r"GPU node GpuElemwise\{mul\}.*gpu_placement.*_Unary"):
            f(_values("opencl"))


@node_rewriter([Elemwise], name="local_wrong_exp")
def local_wrong_exp(fgraph, node):
    if node.op.scalar_op.name == "exp":
        return [T.exp(node.inputs[0]) * 1.001]
    return None


def test_a_wrong_rewrite_is_named(where):
    mode = DebugMode(optimizer=in_to_out(local_wrong_exp), stability_patience=1).including("gpu")
    f = _compile(lambda x: T.exp(x) + 1, mode)
    with pytest.raises(BadOptimization, match=r"rewrite local_wrong_exp replaced .*differ") as info:
        f(_values(where))
    assert "x" in str(info.value)


def test_a_rewrite_that_changes_a_node_behind_the_graphs_back_is_caught():
    class SwapExpForLog(GraphRewriter):
        name = "swap_exp_for_log"

        def apply(self, fgraph):
            for node in fgraph.toposort():
                if isinstance(node.op, Elemwise) and node.op.scalar_op.name == "exp":
                    node.op = Elemwise(TABLE["log"])  # not through fgraph.replace: no record
            return 1

    f = _compile(T.exp, DebugMode(optimizer=SwapExpForLog(), stability_patience=1))
    with pytest.raises(BadOptimization, match="output 0 of the rewritten graph .* differs from the graph "
                                              "before rewriting"):
        f(_values("cpu"))


def test_a_rewrite_that_depends_on_chance_is_caught():
    counter = itertools.count()

    @node_rewriter([Elemwise], name="local_flip")
    def local_flip(fgraph, node):
        if node.op.scalar_op.name == "exp" and next(counter) % 2:
            return [T.exp(node.inputs[0]) + 0]
        return None

    x = T.vector("x")
    with pytest.raises(StochasticOrder, match="different result on attempt 2"):
        function([x], T.exp(x), mode=DebugMode(optimizer=in_to_out(local_flip), stability_patience=3))


def test_nan_and_wrong_dtypes_are_invalid_values(where):
    f = _compile(T.log)
    with pytest.raises(InvalidValueError, match="holds NaN"):
        f(-_values(where))
    relaxed = _compile(T.log, DebugMode(check_isfinite=False, stability_patience=1))
    assert np.isnan(relaxed(-_values(where))).all()

    class WrongDtype(_Unary):
        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0].astype("int32")

    g = _compile(lambda x: WrongDtype()(x))
    with pytest.raises(InvalidValueError, match="int32 with 1 dimensions for"):
        g(_values(where))


def test_every_error_is_a_debug_mode_error_naming_the_user_variable():
    x = T.vector("x")
    y = OverwritesInput()(T.exp(x))
    y.name = "y"
    f = function([x], y * 3, mode=DebugMode(stability_patience=1))
    with pytest.raises(DebugModeError, match=r"computing 'y' \(built at .*test_debugmode.py"):
        f(_values("cpu"))
    z = T.log(x) * 2  # fused into one node: an error there names the rewrite that made it
    g = function([x], z, mode=DebugMode(stability_patience=1))
    with pytest.raises(InvalidValueError, match="made by the rewrite elemwise_fusion.*holds NaN"), \
            np.errstate(invalid="ignore"):
        g(-_values("cpu"))
