"""Theano's Prepend_scalar_constant_to_each_row / Prepend_scalar_to_each_row against numpy:
values, dtypes, infer_shape, gradients, errors."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor import nnet
from tests.utils import assert_matches, check_infer_shape, run, value


def _prepended(val, m):
    return np.concatenate([np.full((m.shape[0], 1), val, dtype=m.dtype), m], axis=1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape", [(3, 5), (1, 1), (0, 2), (4, 0)])
def test_prepend_constant_and_scalar(shape, dtype):
    mv = value(shape, dtype)
    m = T.matrix("m", dtype=dtype)
    for val in (4.0, 0, -2):
        out = nnet.Prepend_scalar_constant_to_each_row(val)(m)
        assert out.dtype == dtype
        assert_matches(run([m], out, mv), _prepended(val, mv))
        check_infer_shape([m], out, [mv])
        out = nnet.Prepend_scalar_to_each_row()(val, m)
        assert out.dtype == dtype
        assert_matches(run([m], out, mv), _prepended(val, mv))
        check_infer_shape([m], out, [mv])
    s = T.scalar("s", dtype=dtype)
    out = nnet.prepend_scalar_to_each_row(s, m)
    sv = np.asarray(7, dtype=dtype)
    assert_matches(run([s, m], out, sv, mv), _prepended(7, mv))
    check_infer_shape([s, m], out, [sv, mv])


def test_theano_instances():
    m = T.matrix("m")
    mv = value((2, 3))
    assert_matches(run([m], nnet.prepend_0_to_each_row(m), mv), _prepended(0, mv))
    assert_matches(run([m], nnet.prepend_1_to_each_row(m), mv), _prepended(1, mv))
    assert nnet.Prepend_scalar_constant_to_each_row(2.0) != nnet.Prepend_scalar_constant_to_each_row(3.0)
    op = nnet.Prepend_scalar_constant_to_each_row(2.5)
    assert pickle.loads(pickle.dumps(op)) == op and str(op) == "Prepend_scalar_constant_to_each_row{2.5}"
    assert pickle.loads(pickle.dumps(nnet.prepend_scalar_to_each_row)) == nnet.Prepend_scalar_to_each_row()


def test_gradients():
    verify_grad(nnet.Prepend_scalar_constant_to_each_row(3.0), [value((3, 4))], n_tests=1)
    verify_grad(nnet.Prepend_scalar_to_each_row(), [np.array(0.5), value((3, 4))], n_tests=1)


def test_errors_name_the_input():
    with pytest.raises(TypeError, match="Prepend_scalar_constant_to_each_row: expected a matrix, got 'v'"):
        nnet.Prepend_scalar_constant_to_each_row(1.0)(T.vector("v"))
    with pytest.raises(TypeError, match="val must be a number"):
        nnet.Prepend_scalar_constant_to_each_row(T.scalar("s"))
    with pytest.raises(TypeError, match="Prepend_scalar_to_each_row: val must be a scalar, got 'w'"):
        nnet.Prepend_scalar_to_each_row()(T.vector("w"), T.matrix("m"))
