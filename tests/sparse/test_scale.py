"""col_scale and row_scale as ColScaleCSC / RowScaleCSC (a csr matrix through its csc
transpose): values against scipy, dtypes, shapes, errors and structured gradients."""
import numpy as np
import pytest

import arignote
from arignote import sparse as S
from arignote import tensor as T
from tests.sparse.cases import FORMATS, matrices, random_sparse

RNG = np.random.RandomState(3)
# function -> (the csc op computing it for csc / csr input, the axis the scales run along)
SCALES = {S.col_scale: ((S.ColScaleCSC, S.RowScaleCSC), 1), S.row_scale: ((S.RowScaleCSC, S.ColScaleCSC), 0)}


@pytest.mark.parametrize("fn", list(SCALES), ids=lambda f: f.__name__)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float32"), ("float32", "float64"),
                                    ("int32", "float32")])
def test_scaling_against_scipy(fn, fmt, dtypes):
    (csc_op, csr_op), axis = SCALES[fn]
    x, s = S.SparseType(fmt, dtypes[0])("x"), T.TensorType(dtypes[1], (False,))("s")
    out = fn(x, s)
    assert out.type.format == fmt and out.dtype == np.result_type(*dtypes).name
    f = arignote.function([x, s], out)
    assert any(type(n.op) is (csc_op if fmt == "csc" else csr_op) for n in f.maker.fgraph.toposort())
    assert not any(isinstance(n.op, S.MulSD) for n in f.maker.fgraph.toposort())
    for m in matrices(fmt, dtypes[0], (5, 4)):
        sv = RNG.uniform(0.5, 2, m.shape[axis]).astype(dtypes[1])
        got = f(m, sv)
        want = m.toarray() * (sv[None, :] if axis else sv[:, None])
        assert got.format == fmt and got.dtype == out.dtype and got.nnz == m.nnz
        np.testing.assert_allclose(got.toarray(), want, rtol=1e-6)


def test_scaling_shape_is_inferred_without_scaling():
    x, s = S.csc_dmatrix("x"), T.dvector("s")
    f = arignote.function([x, s], S.col_scale(x, s).shape)
    assert not any(isinstance(n.op, (S.ColScaleCSC, S.RowScaleCSC)) for n in f.maker.fgraph.toposort())
    assert tuple(f(random_sparse("csc", "float64", (6, 3)), np.ones(3))) == (6, 3)


def test_scaling_errors_name_the_operands():
    with pytest.raises(TypeError, match="'x' is csr; it scales a csc matrix"):
        S.ColScaleCSC()(S.csr_dmatrix("x"), T.dvector("s"))
    with pytest.raises(TypeError, match="the scales 'm' must be a vector"):
        S.RowScaleCSC()(S.csc_dmatrix("x"), T.dmatrix("m"))
    x, s = S.csc_dmatrix("x"), T.dvector("s")
    f = arignote.function([x, s], S.row_scale(x, s))
    with pytest.raises(ValueError, match="'x' has 5 rows but 's' 3 scales; give one per row"):
        f(random_sparse("csc", "float64", (5, 4)), np.ones(3))


@pytest.mark.parametrize("fn", list(SCALES), ids=lambda f: f.__name__)
@pytest.mark.parametrize("fmt", FORMATS)
def test_scaling_gradients_are_structured(fn, fmt):
    axis = SCALES[fn][1]
    m = random_sparse(fmt, "float64", (5, 4), seed=2)
    S.verify_grad_sparse(fn, [m, RNG.uniform(0.5, 1.5, m.shape[axis])], structured=True)
    # through a dense cost as well, with a float32 scale vector
    x, s = S.SparseType(fmt, "float64")("x"), T.fvector("s")
    gs = arignote.grad(S.sp_sum(fn(x, s) * 2.0), s)
    assert gs.dtype == "float32"
    sv = RNG.uniform(0.5, 1.5, m.shape[axis]).astype("float32")
    np.testing.assert_allclose(arignote.function([x, s], gs)(m, sv), 2 * np.asarray(m.sum(axis=1 - axis)).ravel(),
                               rtol=1e-6)
