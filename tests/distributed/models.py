"""Small models for the distributed tests, and the single-process training they must equal."""
import numpy as np

from arignote import function, grad, shared, tensor as T


def logistic_regression(seed: int = 1, n_in: int = 5, n_out: int = 3):
    """Softmax regression with weight decay: (params, inputs, cost), cost a mean over rows."""
    rng = np.random.default_rng(seed)
    W = shared(rng.normal(size=(n_in, n_out)) * 0.1, name="W")
    b = shared(np.zeros(n_out), name="b")
    x, y = T.matrix("x"), T.ivector("y")
    p = T.nnet.softmax(T.dot(x, W) + b)
    cost = -T.mean(T.log(p)[T.arange(y.shape[0]), y]) + 0.01 * (W ** 2).sum()
    return [W, b], [x, y], cost


def mlp(seed: int = 2, n_in: int = 6, n_hidden: int = 8, n_out: int = 3):
    """A 2-layer perceptron (tanh hidden layer, softmax output), mean negative log-likelihood."""
    rng = np.random.default_rng(seed)
    W1 = shared(rng.normal(size=(n_in, n_hidden)) / np.sqrt(n_in), name="W1")
    b1 = shared(np.zeros(n_hidden), name="b1")
    W2 = shared(rng.normal(size=(n_hidden, n_out)) / np.sqrt(n_hidden), name="W2")
    b2 = shared(np.zeros(n_out), name="b2")
    x, y = T.matrix("x"), T.ivector("y")
    h = T.tanh(T.dot(x, W1) + b1)
    p = T.nnet.softmax(T.dot(h, W2) + b2)
    cost = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
    return [W1, b1, W2, b2], [x, y], cost


def data(rows: int, n_in: int, n_out: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(rows, n_in)), rng.integers(0, n_out, rows).astype("int32")


def train_single_process(build, rule, X, Y, steps: int, batch: int, between=None):
    """The reference: the same model trained in this process on whole minibatches.

    Returns the values of every updated variable (the parameters and the rule's own,
    in the rule's order) and the cost of each step; ``between(k, params)`` runs before
    step ``k``."""
    params, inputs, cost = build()
    pairs = rule(params, grad(cost, params))
    step = function(inputs, cost, updates=pairs)
    costs = []
    for k in range(steps):
        if between is not None:
            between(k, params)
        costs.append(float(step(*minibatch(X, Y, k, batch))))
    return [target.get_value() for target, _ in pairs], costs


def minibatch(X, Y, k: int, batch: int):
    start = k * batch % len(X)
    return X[start:start + batch], Y[start:start + batch]
