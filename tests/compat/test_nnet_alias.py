"""Theano's nnet.sigm names under the alias: the scalar op classes tell arignote's table ops
(in a compiled graph too), and the in-place Elemwise ops compute in place."""
import numpy as np


def test_sigm_scalar_classes_and_inplace_ops(theano):
    import theano.tensor as T
    from theano.tensor.nnet import sigm

    x = T.vector("x")
    f = theano.function([x], T.log(1 + T.exp(x)))
    (node,) = f.maker.fgraph.toposort()
    assert isinstance(node.op.scalar_op, sigm.ScalarSoftplus)
    assert not isinstance(node.op.scalar_op, sigm.ScalarSigmoid)
    assert sigm.ScalarSigmoid() is sigm.scalar_sigmoid and sigm.ScalarSoftplus() is sigm.scalar_softplus
    assert isinstance(sigm.ultra_fast_scalar_sigmoid, sigm.UltraFastScalarSigmoid)
    xv = np.array([-30.0, 0.0, 2.0])
    assert np.allclose(f(xv), np.logaddexp(0, xv))
    for op, ref in ((sigm.sigmoid_inplace, 1 / (1 + np.exp(-xv))),
                    (sigm.softplus_inplace, np.logaddexp(0, xv))):
        assert op.destroy_map == {0: [0]}
        y = T.vector("y")
        g = theano.function([y], op(y * 1), accept_inplace=True)
        assert np.allclose(g(xv), ref)
