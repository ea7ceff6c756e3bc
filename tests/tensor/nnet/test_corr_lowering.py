"""The CPU lowering of the abstract convolutions to CorrMM / Corr3dMM (corr_lowering.py):
compiled graphs hold the correlation ops (of reversed filters when ``filter_flip``), the
values and gradients still match the scipy references, the given shapes are still checked,
and a mode without the rewrite keeps the abstract ops."""
from __future__ import annotations

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.compile.mode import Mode, get_default_mode
from arignote.gradient import verify_grad
from arignote.tensor.nnet import abstract_conv as ac
from arignote.tensor.nnet import corr
from arignote.tensor.nnet.corr_lowering import CORRELATION
from arignote.tensor.shape import ShapeMismatchError
from tests.tensor.nnet.test_abstract_conv import (CASES, conv, reference_conv, reference_grad_inputs,
                                                  reference_grad_weights, tensor_of, values)
from tests.utils import assert_matches

LOWERED_CASES = [c for c in CASES if c.name in ("valid", "half", "asymmetric", "stride-full",
                                                "dilation-half-stride", "groups-pad-stride",
                                                "correlation-everything", "3d-half-stride",
                                                "3d-dilation-groups")]


def _op_types(f) -> set:
    return {type(n.op) for n in f.maker.fgraph.toposort()}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", LOWERED_CASES, ids=lambda c: c.name)
def test_compiled_graphs_hold_the_correlation_ops_and_match_scipy(case, dtype):
    img, kern, top = values(case, dtype)
    nd = case.nd + 2
    x, w, g = tensor_of(nd, dtype, "x"), tensor_of(len(case.kern), dtype, "w"), tensor_of(nd, dtype, "g")
    y = conv(case, x, w)
    grad_x, grad_w = arignote.grad(None, [x, w], known_grads={y: g})
    f = arignote.function([x, w, g], [y, grad_x, grad_w])
    expected = {CORRELATION[type(v.owner.op)] for v in (y, grad_x, grad_w)}
    assert expected <= _op_types(f)
    assert not _op_types(f) & set(CORRELATION), "an abstract op was left in the CPU graph"
    out, gx, gw = f(img, kern, top)
    assert out.dtype == gx.dtype == gw.dtype == dtype
    rtol = 1e-4 if dtype == "float32" else None
    assert_matches(out, reference_conv(case, img, kern).astype(dtype), rtol)
    assert_matches(gx, reference_grad_inputs(case, kern, top).astype(dtype), rtol)
    assert_matches(gw, reference_grad_weights(case, img, top).astype(dtype), rtol)


@pytest.mark.parametrize("case", [LOWERED_CASES[1], LOWERED_CASES[6], LOWERED_CASES[7]], ids=lambda c: c.name)
def test_verify_grad_through_the_lowered_ops(case):
    img, kern, _ = values(case, "float64", seed=4)
    verify_grad(lambda x, w: conv(case, x, w), [img, kern], n_tests=1, mode=get_default_mode())


def test_lowered_ops_carry_the_parameters_and_the_given_shapes():
    x, w = T.tensor4("x"), T.tensor4("w")
    y = T.nnet.conv2d(x, w, input_shape=(2, 4, 7, 7), filter_shape=(6, 2, 3, 3), border_mode=(1, 2),
                      subsample=(2, 1), filter_dilation=(1, 2), num_groups=2)
    f = arignote.function([x, w], y)
    [node] = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, corr.CorrMM)]
    op = node.op
    assert (op.border_mode, op.subsample, op.filter_dilation, op.num_groups, op.filter_flip) == \
        ((1, 2), (2, 1), (1, 2), 2, False)
    assert op.imshp == (2, 4, 7, 7) and op.kshp == (6, 2, 3, 3)
    rng = np.random.default_rng(0)
    with pytest.raises(ShapeMismatchError, match="input_shape"):
        f(rng.standard_normal((3, 4, 7, 7)), rng.standard_normal((6, 2, 3, 3)))


def test_unshared_convolution_is_lowered():
    rng = np.random.default_rng(1)
    img, kern = rng.standard_normal((2, 2, 5, 4)), rng.standard_normal((3, 3, 2, 2, 3, 3))
    x, w = T.tensor4("x"), tensor_of(6, "float64", "w")
    y = T.nnet.conv2d(x, w, unshared=True)
    f = arignote.function([x, w], y)
    assert corr.CorrMM in _op_types(f)
    plain = arignote.function([x, w], y, mode=Mode(optimizer=None))
    assert ac.AbstractConv2d in _op_types(plain) and corr.CorrMM not in _op_types(plain)
    flipped = kern[..., ::-1, ::-1]
    # Each output position has its own filter: a correlation of that window alone.
    windows = np.lib.stride_tricks.sliding_window_view(img, (3, 3), axis=(2, 3))  # (B, C, 3, 2, 3, 3)
    expected = np.einsum("bcopij,fopcij->bfop", windows, flipped)
    assert_matches(f(img, kern), expected)
    assert_matches(plain(img, kern), expected)


def test_a_mode_without_the_rewrites_keeps_the_abstract_ops():
    x, w = T.tensor4("x"), T.tensor4("w")
    y = T.nnet.conv2d(x, w)
    excluded = arignote.function([x, w], y, mode=get_default_mode().excluding("conv_gemm"))
    assert ac.AbstractConv2d in _op_types(excluded)
    assert corr.CorrMM not in _op_types(excluded)


@pytest.mark.parametrize("shape", [T.lvector(), T.ones(4, dtype="int64"), T.ftensor4().shape,
                                   T.constant([3, 5, 7, 11])], ids=["vector", "alloc", "shape", "constant"])
@pytest.mark.parametrize("op", [ac.AbstractConv2d, ac.AbstractConv2d_gradInputs, ac.AbstractConv2d_gradWeights])
def test_a_shape_vector_is_refused_as_imshp_or_kshp(op, shape):
    with pytest.raises(ValueError, match="tuple of constant int values"):
        op(imshp=shape)
    with pytest.raises(ValueError, match="tuple of constant int values"):
        op(kshp=shape)
    constant_entries = tuple(T.constant(n, dtype="int64") for n in (3, 5, 7, 11))
    assert op(imshp=constant_entries).imshp == (3, 5, 7, 11)
    assert op(kshp=[3, 5, 7, 11]).kshp == (3, 5, 7, 11)
