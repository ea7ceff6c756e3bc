"""``theano.sparse`` under the alias: arignote's sparse module in Theano's layout."""
import importlib

import numpy as np
import pytest
import scipy.sparse as sp

import arignote.sparse


def test_theano_sparse_is_arignote_sparse(theano):
    import theano.sparse
    from theano.sparse.basic import CSM, structured_dot
    from theano.sparse.sharedvar import SparseTensorSharedVariable
    assert theano.sparse.enable_sparse
    assert CSM is arignote.sparse.CSM and structured_dot is arignote.sparse.structured_dot
    assert importlib.import_module("theano.sparse.type").SparseType is arignote.sparse.SparseType
    assert SparseTensorSharedVariable is arignote.sparse.SparseSharedVariable
    s = theano.shared(sp.csr_matrix(np.eye(2)))
    assert isinstance(s, SparseTensorSharedVariable)
    assert theano.sparse.Usmm is arignote.sparse.Usmm
    from theano.sparse.opt import UsmmCscDense, local_usmm
    assert UsmmCscDense is importlib.import_module("arignote.sparse.usmm").UsmmCscDense
    assert local_usmm.name == "local_usmm"
    with pytest.raises(AttributeError, match="theano.sparse.GetItemListGrad"):
        _ = theano.sparse.GetItemListGrad


def test_theano_sparse_grad(theano):
    m = theano.tensor.dmatrix("m")
    v = theano.tensor.ivector("v")
    g = theano.grad(theano.sparse_grad(m[v]).sum(), m)
    assert isinstance(g.owner.op, arignote.sparse.ConstructSparseFromList)


def test_private_helpers_and_hash(theano):
    import theano.sparse
    from theano.misc.may_share_memory import may_share_memory
    from theano.sparse.utils import hash_from_sparse
    m = sp.csc_matrix(np.arange(6.0).reshape(2, 3))
    assert theano.sparse._is_sparse(m) and theano.sparse._is_dense(np.ones(2))
    assert theano.sparse._is_sparse_variable(arignote.sparse.csr_matrix())
    assert not theano.sparse._is_sparse_variable(theano.tensor.matrix())
    with pytest.raises(NotImplementedError):
        theano.sparse._is_sparse(3)
    assert may_share_memory(m, m.data) and not may_share_memory(m, m.copy())
    digests = {hash_from_sparse(x) for x in (m, m.tocsr(), m[:, 1:], sp.csc_matrix((2, 3)),
                                             sp.csc_matrix((3, 2)), m.astype("float32"))}
    assert len(digests) == 6 and hash_from_sparse(m[:, 1:]) == hash_from_sparse(m[:, 1:].copy())
