"""``theano.tensor.raw_random``: draws built on an explicit generator state."""
from arignote.tensor.random.basic import (binomial, choice, multinomial, normal, permutation, poisson,
                                          random_integers, uniform)
from arignote.tensor.random.op import RandomFunction
from arignote.tensor.random.type import RandomStateType, random_state_type

__all__ = ["RandomFunction", "RandomStateType", "random_state_type", "uniform", "normal",
           "binomial", "poisson", "random_integers", "choice", "permutation", "multinomial"]
