"""Random sparse matrices: the draws' distributions, numpy's seed, never folded, no gradient."""
import numpy as np
import pytest
import scipy.sparse as sp

import arignote
from arignote import sparse as S
from arignote import tensor as T
from arignote.gradient import NullTypeGradError


def test_poisson_keeps_the_pattern_and_the_mean():
    x = S.csc_dmatrix("x")
    f = arignote.function([x], S.poisson(x))
    m = sp.csc_matrix(np.kron(np.eye(20), np.full((1, 50), 3.0)))  # 1000 stored values of mean 3
    np.random.seed(1)
    draw = f(m)
    assert draw.format == "csc" and draw.dtype == np.float64
    assert set(zip(*draw.nonzero())) <= set(zip(*m.nonzero()))  # zeros drawn are not stored
    assert abs(draw.sum() / m.nnz - 3.0) < 0.2 and 0 not in draw.data
    np.random.seed(1)
    np.testing.assert_array_equal(f(m).toarray(), draw.toarray())  # numpy's seed repeats it
    assert not np.array_equal(f(m).toarray(), draw.toarray())  # a second call draws again


def test_binomial_is_drawn_at_each_call_even_from_constants():
    f = arignote.function([], S.csr_dbinomial(10, 0.3, np.array([40, 50])))
    a, b = f(), f()
    assert a.shape == (40, 50) and a.format == "csr"
    assert abs(a.toarray().mean() - 3.0) < 0.3 and not np.array_equal(a.toarray(), b.toarray())
    with pytest.raises(TypeError, match="p must be a float"):
        S.csr_fbinomial(10, 1, np.array([2, 2]))


def test_multinomial_rows():
    p = sp.csr_matrix(np.array([[0.5, 0.5, 0.0], [0.0, 0.1, 0.9]]))
    n = T.lvector("n")
    draw = arignote.function([n], S.multinomial(n, S.as_sparse_variable(p)))(np.array([10, 1000]))
    np.testing.assert_array_equal(draw.toarray().sum(1), [10, 1000])
    assert draw.toarray()[0, 2] == 0 and abs(draw.toarray()[1, 2] - 900) < 60
    with pytest.raises(NotImplementedError, match="csr"):
        arignote.function([n], S.multinomial(n, S.as_sparse_variable(p.tocsc())))(np.array([1, 1]))


def test_no_gradient():
    x = S.csr_dmatrix("x")
    with pytest.raises(NullTypeGradError, match="Poisson draw"):
        arignote.grad(S.sp_sum(S.poisson(x)), x)
