"""Neural-network ops under the names Theano users import (``tensor.nnet``).

``basic`` holds the activations, softmax and the cross-entropy losses; further
families (convolution, batch normalisation, ...) get a module each here.
"""
from arignote.tensor.nnet.basic import *  # noqa: F401,F403
from arignote.tensor.nnet.basic import __all__
