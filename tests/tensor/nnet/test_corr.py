"""Theano's CorrMM / Corr3dMM names (``tensor.nnet.corr``, ``corr3d``): cross-correlations
(no filter flip) that are the abstract ops, checked against the scipy references of
test_abstract_conv.py; grouped correlation against the per-group correlations
concatenated; the gradient ops' omitted ``shape`` and its refusals."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.nnet import abstract_conv as ac
from arignote.tensor.nnet import corr, corr3d
from tests.tensor.nnet.test_abstract_conv import (Case, reference_conv, reference_grad_inputs,
                                                  reference_grad_weights)
from tests.utils import assert_matches, run

CASES = [
    Case("valid", (2, 3, 7, 6), (4, 3, 3, 2), flip=False),
    Case("full-dilation", (1, 2, 6, 7), (3, 2, 2, 3), "full", (1, 1), (2, 1), flip=False),
    Case("pad-stride-groups", (2, 4, 7, 7), (6, 2, 3, 3), (1, 2), (2, 1), (1, 1), 2, False),
    Case("asymmetric-groups", (1, 6, 6, 5), (3, 2, 2, 3), ((2, 0), (1, 1)), (1, 1), (1, 1), 3, False),
    Case("3d-half-groups", (1, 4, 5, 5, 4), (2, 2, 3, 3, 2), "half", (1, 1, 1), (1, 1, 1), 2, False),
    Case("3d-full-stride", (2, 2, 4, 5, 4), (3, 2, 2, 2, 2), "full", (2, 1, 1), (1, 1, 1), 1, False),
]


def _classes(case: Case):
    if len(case.img) == 4:
        return corr.CorrMM, corr.CorrMM_gradWeights, corr.CorrMM_gradInputs
    return corr3d.Corr3dMM, corr3d.Corr3dMM_gradWeights, corr3d.Corr3dMM_gradInputs


def _make(cls, case: Case):
    return cls(case.border_mode, case.subsample, case.dilation, num_groups=case.groups)


def _tensor(ndim: int, name: str):
    return T.tensor("float64", (False,) * ndim, name=name)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_correlation_and_its_gradient_ops_match_the_references(case):
    forward, grad_w, grad_i = (_make(cls, case) for cls in _classes(case))
    rng = np.random.default_rng(5)
    img, kern = rng.standard_normal(case.img), rng.standard_normal(case.kern)
    x, w, g = _tensor(len(case.img), "x"), _tensor(len(case.kern), "w"), _tensor(len(case.img), "g")
    out = run([x, w], forward(x, w), img, kern)
    assert_matches(out, reference_conv(case, img, kern))
    top = rng.standard_normal(out.shape)
    assert_matches(run([x, g], grad_w(x, g, case.kern[2:]), img, top),
                   reference_grad_weights(case, img, top))
    assert_matches(run([w, g], grad_i(w, g, case.img[2:]), kern, top),
                   reference_grad_inputs(case, kern, top))


@pytest.mark.parametrize("case", CASES[2::2], ids=lambda c: c.name)
def test_verify_grad_through_the_correlation(case):
    rng = np.random.default_rng(8)
    img, kern = rng.standard_normal(case.img), rng.standard_normal(case.kern)
    verify_grad(_make(_classes(case)[0], case), [img, kern], rng=np.random.RandomState(0))


@pytest.mark.parametrize("case", [CASES[2], CASES[3], CASES[4]], ids=lambda c: c.name)
def test_grouped_correlation_is_the_groups_correlated_apart(case):
    """Theano's definition: split channels and filters into num_groups, correlate each
    pair with one group, concatenate along the filters."""
    grouped = _make(_classes(case)[0], case)
    single = _classes(case)[0](case.border_mode, case.subsample, case.dilation)
    rng = np.random.default_rng(6)
    img, kern = rng.standard_normal(case.img), rng.standard_normal(case.kern)
    x, w = _tensor(len(case.img), "x"), _tensor(len(case.kern), "w")
    expected = np.concatenate([run([x, w], single(x, w), i, k) for i, k in
                               zip(np.split(img, case.groups, 1), np.split(kern, case.groups, 0))], 1)
    assert_matches(run([x, w], grouped(x, w), img, kern), expected)


def test_gradient_shapes_may_be_omitted_where_the_arrays_determine_them():
    x, w, g = T.tensor4("x"), T.tensor4("w"), T.tensor4("g")
    rng = np.random.default_rng(7)
    for mode, dilation in [("valid", (1, 1)), ("full", (2, 1)), ((1, 2), (1, 2)), (((2, 0), 1), (1, 1))]:
        case = Case("omitted", (2, 3, 8, 7), (2, 3, 3, 2), mode, (1, 1), dilation, flip=False)
        img, kern = rng.standard_normal(case.img), rng.standard_normal(case.kern)
        top = run([x, w], corr.CorrMM(mode, (1, 1), dilation)(x, w), img, kern)
        assert_matches(run([x, g], corr.CorrMM_gradWeights(mode, (1, 1), dilation)(x, g), img, top),
                       reference_grad_weights(case, img, top))
        assert_matches(run([w, g], corr.CorrMM_gradInputs(mode, (1, 1), dilation)(w, g), kern, top),
                       reference_grad_inputs(case, kern, top))
    half = corr.CorrMM_gradInputs("half")(w, g)
    assert run([w, g], half, np.ones((2, 3, 3, 3)), np.ones((1, 2, 5, 4))).shape == (1, 3, 5, 4)
    with pytest.raises(ValueError, match="shape must be given if border_mode == 'half'"):
        corr.CorrMM_gradWeights("half")(x, g)
    with pytest.raises(ValueError, match=r"shape must be given if subsample != \(1, 1\)"):
        corr.CorrMM_gradInputs(subsample=(2, 1))(w, g)
    with pytest.raises(ValueError, match=r"shape must be given if subsample != \(1, 1, 1\)"):
        corr3d.Corr3dMM_gradWeights(subsample=(1, 1, 2))(T.tensor5("x"), T.tensor5("g"))


def test_the_names_are_the_abstract_ops_without_flip():
    op = corr.CorrMM((1, 2), (2, 1), (1, 2), num_groups=2, openmp=True)
    assert isinstance(op, ac.AbstractConv2d) and not op.filter_flip and op.num_groups == 2
    again = pickle.loads(pickle.dumps(op))
    assert again == op and hash(again) == hash(op)
    assert op != corr.CorrMM((1, 2), (2, 1), (1, 2))
    assert corr.CorrMM(unshared=True).unshared
    assert corr3d.Corr3dMM("half", num_groups=3).num_groups == 3
    with pytest.raises(TypeError, match="'w' must be a 4D tensor"):
        corr.CorrMM()(T.tensor4("x"), T.tensor5("w"))
    assert arignote.tensor.nnet.corr is corr
