"""Theano's nnet.sigm names under the alias: the scalar op classes tell arignote's table ops
(in a compiled graph too), and the in-place Elemwise ops compute in place."""
import numpy as np
import pytest


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


def test_compile_mode_holds_theano_s_optdb_and_queries(theano):
    import arignote.compile.mode as ours
    from arignote.compat.theano.optdb import optdb

    mode = theano.compile.mode
    assert mode.optdb is optdb and mode.OPT_FAST_RUN is ours.OPT_FAST_RUN
    assert mode.get_default_mode is ours.get_default_mode and mode.Mode is ours.Mode
    assert mode.OPT_STABILIZE.position_cutoff == 1.5000001 and "inplace" in mode.OPT_O3.exclude
    x = theano.tensor.matrix()
    fgraph = theano.gof.FunctionGraph([x], [theano.tensor.log(theano.tensor.nnet.softmax(x))])
    mode.optdb.query(mode.OPT_STABILIZE).optimize(fgraph)
    assert [type(n.op).__name__ for n in fgraph.toposort()] == ["LogSoftmax"]


def test_the_tutorials_negative_log_likelihood_compiles_to_log_softmax_and_trains(theano):
    # DeepLearningTutorials' mlp.py (a tanh layer, logistic_sgd's loss), trained with and without the rewrite.
    T = theano.tensor
    rng = np.random.RandomState(1)
    xv = rng.randn(40, 5)
    yv = ((xv[:, 0] + xv[:, 1] > 0).astype("int64") + (xv[:, 2] > 1)).astype("int64")
    costs = {}
    for mode in (None, theano.compile.mode.get_default_mode().excluding("local_log_softmax")):
        x, y = T.matrix("x"), T.lvector("y")
        hidden = theano.shared(np.random.RandomState(2).uniform(-0.5, 0.5, (5, 8)), name="hidden")
        W = theano.shared(np.zeros((8, 3)), name="W")
        b = theano.shared(np.zeros(3), name="b")
        p_y_given_x = T.nnet.softmax(T.dot(T.tanh(T.dot(x, hidden)), W) + b)
        cost = -T.mean(T.log(p_y_given_x)[T.arange(y.shape[0]), y])
        params = [hidden, W, b]
        updates = [(p, p - 0.5 * g) for p, g in zip(params, T.grad(cost, params))]
        train = theano.function([x, y], cost, updates=updates, mode=mode)
        loss_only = theano.function([x, y], cost, mode=mode)
        ops = [type(n.op).__name__ for n in loss_only.maker.fgraph.toposort()]
        assert ("LogSoftmax" in ops) == (mode is None) and ("Softmax" in ops) == (mode is not None)
        costs[mode is None] = [float(train(xv, yv)) for _ in range(30)]
    np.testing.assert_allclose(costs[True], costs[False], rtol=1e-10)
    assert costs[True][0] == pytest.approx(np.log(3)) and costs[True][-1] < 0.5 * costs[True][0]
    # Logits of 1e4 (a diverged model): the rewritten loss and its gradient stay finite.
    x, y = T.matrix("x"), T.lvector("y")
    cost = -T.mean(T.log(T.nnet.softmax(x))[T.arange(y.shape[0]), y])
    value, g = theano.function([x, y], [cost, T.grad(cost, x)])(np.array([[1e4, -1e4, 0.0]]), np.array([1]))
    assert value == pytest.approx(2e4) and np.all(np.isfinite(g))
