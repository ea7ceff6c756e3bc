"""Shape inference: ``x.shape`` computed from the inputs' lengths, without computing ``x``."""
import numpy as np
import pytest

from arignote import function
from arignote import tensor as T
from arignote.graph.fg import FunctionGraph
from arignote.tensor.rewrites.shape_feature import ShapeFeature, ShapeMismatchError, shape_feature
from tests.rewriting.rewrite_utils import check_same_values, op_names, phase_mode
from tests.utils import AddOneInplace

CANON = phase_mode("canonicalize")
rng = np.random.default_rng(0)


def test_shape_of_a_dot_computes_neither_the_dot_nor_the_elemwise():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    f = check_same_values([x, y], (x * 2).dot(y).shape, "FAST_RUN",
                          [rng.standard_normal((2, 3)), rng.standard_normal((3, 5))])
    names = op_names(f)
    assert "Dot" not in names and not {"mul", "add", "exp"} & set(names), names
    np.testing.assert_array_equal(f(np.ones((4, 3)), np.ones((3, 7))), [4, 7])


@pytest.mark.parametrize("build, shapes", [
    (lambda x, y: T.exp(x).shape[0], [(3, 4), (3, 4)]),
    (lambda x, y: T.concatenate([T.exp(x), y], axis=0).shape, [(3, 4), (2, 4)]),
    (lambda x, y: T.exp(x)[1:, ::2].shape, [(5, 6), (1, 1)]),
    (lambda x, y: T.exp(x).reshape((-1,)).shape, [(3, 4), (1, 1)]),
    (lambda x, y: T.sum(T.exp(x), axis=0).shape, [(3, 4), (1, 1)]),
    (lambda x, y: (T.exp(x) + y).T.shape, [(3, 4), (3, 4)]),
    (lambda x, y: T.nnet.softmax(T.exp(x)).shape, [(3, 4), (1, 1)]),
], ids=["shape_i", "join", "slice", "reshape", "sum", "transpose", "softmax"])
def test_shapes_of_computed_values_do_not_compute_them(build, shapes):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    f = check_same_values([x, y], build(x, y), "FAST_RUN", [rng.standard_normal(s) for s in shapes])
    assert not any("exp" in name for name in op_names(f)), op_names(f)


def test_shape_of_an_input_is_read_directly():
    x = T.dmatrix("x")
    f = check_same_values([x], x.shape, CANON, [np.ones((2, 3))])
    assert op_names(f) == ["Shape"]


def test_fixed_lengths_become_constants():
    x = T.drow("x")
    c = T.constant(np.ones((1, 4)))
    f = check_same_values([x], (T.exp(x) * c).shape, CANON, [np.ones((1, 4))])
    assert op_names(f) == ["DeepCopyOp"]  # a constant output is copied


def test_feature_gives_ints_for_fixed_lengths_and_int64_scalars_otherwise():
    x = T.dcol("x")
    y = T.exp(x) + T.constant(np.ones((1, 3)))
    fgraph = FunctionGraph([x], [y], clone=False)
    feature = shape_feature(fgraph)
    assert isinstance(feature, ShapeFeature) and shape_feature(fgraph) is feature
    rows, cols = feature.shape(y)
    assert cols == 3 and rows.dtype == "int64" and rows.ndim == 0
    assert feature.is_own_length(rows, x)


def test_fixed_lengths_that_cannot_meet_fail_at_compile_time():
    v = T.dvector("v")
    three, four = T.constant(np.ones(3)), T.constant(np.ones(4))
    with pytest.raises(ShapeMismatchError, match="length 3 .* length 4|length 4 .* length 3"):
        function([v], ((v + three) * four).shape)


def test_an_op_without_infer_shape_reads_its_own_length():
    class NoShape(AddOneInplace):
        destroy_map = {}

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] + 1

    x = T.dvector("x")
    out = T.exp(NoShape()(x)).shape
    f = check_same_values([x], out, CANON, [np.ones(3)])
    assert "NoShape" in op_names(f) and "exp" not in op_names(f)


def test_mlp_gradient_shapes_need_no_forward_pass():
    x, w = T.dmatrix("x"), T.dmatrix("w")
    h = T.tanh(x.dot(w))
    f = check_same_values([x, w], [h.shape, T.sum(h, axis=1).shape], "FAST_RUN",
                          [np.ones((4, 3)), np.ones((3, 2))])
    assert op_names(f).count("Dot") == 0


def test_same_shape_says_what_the_graph_proves():
    x, y, s = T.dvector("x"), T.dvector("y"), T.dscalar("s")
    fg = FunctionGraph([x, y, s], [x + 1, x + y, s + 1, T.alloc(s, 3), T.alloc(s, 3)], clone=False)
    feature = ShapeFeature()
    fg.attach_feature(feature)
    plus_one, total, scalar, three, three_again = fg.outputs
    assert feature.same_shape(x, plus_one) and feature.same_shape(s, scalar)
    assert feature.same_shape(x, total) and not feature.same_shape(y, total)  # the sum's length is x's
    assert feature.same_shape(three, three_again) and not feature.same_shape(x, three)
    assert feature.same_shape(x, total, 0, 0) and not feature.same_shape(x, scalar)
    with pytest.raises(IndexError):
        feature.same_shape(x, total, 1, 0)
