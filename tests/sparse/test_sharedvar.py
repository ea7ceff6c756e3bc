"""Shared sparse matrices: shared() dispatches here, and the aliasing promises hold."""
import copy
import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import arignote
from arignote import sparse as S
from arignote.compile.sharedvalue import shares_memory
from tests.sparse.cases import FORMATS, random_sparse


@pytest.mark.parametrize("fmt", FORMATS)
def test_shared_dispatches_and_copies(fmt):
    m = random_sparse(fmt, "float64")
    s = arignote.shared(m, name="s")
    assert isinstance(s, S.SparseSharedVariable) and s.type == S.SparseType(fmt, "float64")
    assert not shares_memory(s.get_value(borrow=True), m)  # copied by default
    got = s.get_value()
    assert not shares_memory(got, s.get_value(borrow=True))  # a copy the caller owns
    assert s.get_value(borrow=True) is s.get_value(borrow=True)
    borrowed = arignote.shared(m, borrow=True)
    assert borrowed.get_value(borrow=True) is m
    assert isinstance(S.shared(m), S.SparseSharedVariable)
    with pytest.raises(TypeError, match="needs a scipy.sparse matrix"):
        S.shared(np.ones((2, 2)))


def test_shared_converts_other_formats():
    coo = sp.coo_matrix(np.eye(3))
    assert arignote.shared(coo).type.format == "csr"
    assert arignote.shared(sp.csr_matrix(np.eye(3)), format="csc").type.format == "csc"


def test_two_shared_variables_never_alias():
    m = random_sparse("csr", "float64")
    a = arignote.shared(m, borrow=True)
    b = arignote.shared(m, borrow=True)  # m's arrays are a's: b gets a copy
    assert a.get_value(borrow=True) is m and not shares_memory(b.get_value(borrow=True), m)
    dense = arignote.shared(m.data, borrow=True)  # a dense variable borrowing a's data copies too
    assert not np.may_share_memory(dense.get_value(borrow=True), m.data)
    c = arignote.shared(random_sparse("csr", "float64", seed=3))
    c.set_value(m, borrow=True)
    assert not shares_memory(c.get_value(borrow=True), m)


def test_set_value_copies_checks_and_keeps_the_old_value_on_error():
    s = arignote.shared(random_sparse("csr", "float32"))
    new = random_sparse("csr", "float32", seed=5)
    s.set_value(new)
    assert not shares_memory(s.get_value(borrow=True), new)
    np.testing.assert_array_equal(s.get_value().toarray(), new.toarray())
    s.set_value(new, borrow=True)
    assert s.get_value(borrow=True) is new
    before = s.get_value()
    with pytest.raises(TypeError, match="lose precision"):
        s.set_value(random_sparse("csr", "float64"))
    np.testing.assert_array_equal(s.get_value().toarray(), before.toarray())
    s.zero()
    assert s.get_value().nnz == 0 and s.get_value().shape == before.shape


def test_updates_of_a_sparse_shared_variable():
    m = random_sparse("csr", "float64")
    s = arignote.shared(m)
    step = arignote.function([], S.sp_sum(s), updates=[(s, s * 2.0)])
    assert np.isclose(step(), m.sum())
    np.testing.assert_allclose(s.get_value().toarray(), 2 * m.toarray())
    # an update that fails part way leaves every shared variable as it was
    d = arignote.shared(np.zeros(2))
    x = S.csr_matrix("x", dtype="float64")
    f = arignote.function([x], [], updates=[(d, d + 1), (s, s + x)])
    with pytest.raises(ValueError, match="shape"):
        f(random_sparse("csr", "float64", shape=(2, 2)))
    np.testing.assert_array_equal(d.get_value(), [0, 0])
    np.testing.assert_allclose(s.get_value().toarray(), 2 * m.toarray())


def test_pickling_a_function_holding_a_sparse_shared_variable():
    m = random_sparse("csc", "float64")
    s = arignote.shared(m, name="s")
    x = arignote.tensor.dmatrix("x")
    f = arignote.function([x], S.structured_dot(s, x), updates=[(s, s * 3.0)])
    g = pickle.loads(pickle.dumps(f))
    v = np.arange(8.0).reshape(4, 2)
    np.testing.assert_allclose(g(v), m @ v)
    np.testing.assert_allclose(g(v), 3 * (m @ v))
    np.testing.assert_allclose(s.get_value().toarray(), m.toarray())  # the original is untouched
    h = copy.deepcopy(f)
    h(v)
    np.testing.assert_allclose(f(v), m @ v)


def test_shared_needs_no_import_of_the_sparse_package():
    code = ("import arignote, scipy.sparse as sp, sys; s = arignote.shared(sp.eye(3, format='csr'));"
            "print(type(s).__name__, 'arignote.sparse' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["SparseSharedVariable", "True"]
