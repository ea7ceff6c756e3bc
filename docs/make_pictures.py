"""Draw the README's pictures and print explain() for them: the seed note's graph and one
training step of the tutorial's MLP, compiled for the first OpenCL device.

    ARIGNOTE_FLAGS=device=opencl0:0,floatX=float32 python docs/make_pictures.py
"""
from __future__ import annotations

import os

import numpy as np

import arignote
from arignote import function, shared, tensor as T
from arignote.printing import pydotprint

HERE = os.path.dirname(os.path.abspath(__file__))


def seed() -> arignote.compile.Function:
    x = shared(np.asarray(np.random.RandomState(22).rand(230400), arignote.config.floatX), name="x")
    return function([], T.exp(x), name="seed")


def mlp_step() -> arignote.compile.Function:
    """The MLP of the Deep Learning Tutorials (784-500-10, tanh, softmax, L1 and L2 terms)."""
    rng = np.random.RandomState(1234)
    floatX = arignote.config.floatX
    x, y = T.matrix("x"), T.ivector("y")
    bound = np.sqrt(6.0 / (784 + 500))
    W1 = shared(rng.uniform(-bound, bound, (784, 500)).astype(floatX), name="W1")
    b1 = shared(np.zeros(500, floatX), name="b1")
    W2 = shared(np.zeros((500, 10), floatX), name="W2")
    b2 = shared(np.zeros(10, floatX), name="b2")
    hidden = T.tanh(T.dot(x, W1) + b1)
    p_y = T.nnet.softmax(T.dot(hidden, W2) + b2)
    nll = -T.mean(T.log(p_y)[T.arange(y.shape[0]), y])
    cost = nll + 0.0001 * (abs(W1).sum() + abs(W2).sum()) + 0.0001 * ((W1 ** 2).sum() + (W2 ** 2).sum())
    params = [W1, b1, W2, b2]
    lr = np.asarray(0.01, floatX)
    updates = [(p, p - lr * g) for p, g in zip(params, arignote.grad(cost, params))]
    return function([x, y], cost, updates=updates, name="train_model")


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    for name, fn, args in [("seed_graph", seed(), ()),
                           ("training_step", mlp_step(), (rng.rand(20, 784).astype(arignote.config.floatX),
                                                           rng.randint(0, 10, 20).astype("int32")))]:
        fn(*args)  # one call, so explain() knows the transfers' sizes
        arignote.explain(fn)
        print()
        pydotprint(fn, os.path.join(HERE, f"{name}.svg"), format="svg")
