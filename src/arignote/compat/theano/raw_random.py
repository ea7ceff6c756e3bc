"""``theano.tensor.raw_random``: draws built on an explicit generator state.

Each distribution returns Theano's ``[new_state, sample]``; ``permutation_helper``
is the numpy-side function of ``permutation`` (``fn(rng, n, shape)``), which
Theano exported for building a ``RandomFunction`` by hand.
"""
from arignote.tensor.random.basic import (binomial, choice, multinomial, normal, permutation, poisson,
                                          random_integers, uniform)
from arignote.tensor.random.op import RandomFunction
from arignote.tensor.random.samplers import permutation as permutation_helper
from arignote.tensor.random.type import RandomStateType, random_state_type

__all__ = ["RandomFunction", "RandomStateType", "random_state_type", "uniform", "normal",
           "binomial", "poisson", "random_integers", "choice", "permutation", "multinomial",
           "permutation_helper"]
