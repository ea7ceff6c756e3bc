"""A Theano 1.0-era training script, written for arignote's tests in the style of the
DeepLearningTutorials: run unchanged by ``arignote run`` (tests/compat/test_run.py)."""
from __future__ import print_function

import sys

import numpy
import theano
import theano.tensor as T
from theano.sandbox.rng_mrg import MRG_RandomStreams


class Layer(object):
    def __init__(self, rng, input, n_in, n_out, W=None):
        if not W:  # Theano: a variable is true, so a W passed in is kept
            W = theano.shared(numpy.asarray(rng.uniform(-0.1, 0.1, (n_in, n_out)),
                                            dtype=theano.config.floatX), name='W', borrow=True)
        self.W = W
        self.b = theano.shared(numpy.zeros((n_out,), dtype=theano.config.floatX), name='b')
        self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
        self.params = [self.W, self.b]


def main(n_epochs):
    rng = numpy.random.RandomState(1234)
    x, y = T.matrix('x'), T.ivector('y')
    first = Layer(rng, x, 4, 3)
    layer = Layer(rng, x, 4, 3, W=first.W)
    assert layer.W is first.W
    cost = -T.mean(T.log(layer.p_y_given_x)[T.arange(y.shape[0]), y])
    grads = T.grad(cost, layer.params)
    lr = numpy.asarray(0.5, dtype=theano.config.floatX)
    train = theano.function([x, y], cost,
                            updates=[(p, p - lr * g) for p, g in zip(layer.params, grads)])
    data = numpy.asarray(rng.rand(30, 4), dtype=theano.config.floatX)
    labels = numpy.asarray(data.argmax(axis=1) % 3, dtype='int32')
    costs = [float(train(data, labels)) for _ in range(n_epochs)]

    # An Elman step whose softmax of a vector is a 1xN row (Theano 1.0), indexed [:, 0, :].
    h0 = T.vector('h0')

    def step(x_t, h_tm1):
        h_t = T.tanh(T.dot(x_t, layer.W) + h_tm1)
        return [h_t, T.nnet.softmax(h_t)]

    [h, s], _ = theano.scan(step, sequences=x, outputs_info=[h0, None])
    probs = theano.function([x, h0], s[:, 0, :])(data[:5], numpy.zeros(3, theano.config.floatX))

    srng = MRG_RandomStreams(seed=12)
    noise = theano.function([], srng.uniform((2,)))
    print('argv', sys.argv[1:])
    print('name', __name__)
    print('floatX', theano.config.floatX, probs.dtype, probs.shape)
    print('costs', costs[0] > costs[-1], costs[-1])
    print('noise', noise().shape)
    return costs


if __name__ == '__main__':
    main(int(sys.argv[1]))
    if len(sys.argv) > 2:
        sys.exit(int(sys.argv[2]))
