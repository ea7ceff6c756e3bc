"""``theano.tensor.raw_random``: draws built on an explicit generator state.

Each distribution returns Theano's ``[new_state, sample]``; ``permutation_helper``
is the numpy-side function of ``permutation`` (``fn(rng, n, shape)``), and
``_infer_ndim_bcast`` how a draw's ndim, size vector and broadcast pattern follow from
its arguments: Theano code building a ``RandomFunction`` by hand uses both.
"""
import numpy as np

from arignote.compat.theano.modules import lazy_modules
from arignote.tensor.random.basic import (binomial, choice, multinomial, normal, permutation, poisson,
                                          random_integers, uniform)
from arignote.tensor.random.op import RandomFunction
from arignote.tensor.random.op import infer_ndim_bcast as _infer_ndim_bcast
from arignote.tensor.random.samplers import permutation as permutation_helper
from arignote.tensor.random.type import RandomStateType, random_state_type

# Theano's raw_random had no __all__, so ``from theano.tensor.raw_random import *`` also bound
# numpy as ``np`` and the modules ``theano`` and ``tensor`` (its own test file relies on it).
_LAZY_MODULES = {"theano": "theano", "tensor": "theano.tensor"}

__all__ = ["RandomFunction", "RandomStateType", "random_state_type", "uniform", "normal",
           "binomial", "poisson", "random_integers", "choice", "permutation", "multinomial",
           "permutation_helper", "_infer_ndim_bcast", "np", *_LAZY_MODULES]

__getattr__ = lazy_modules(__name__, _LAZY_MODULES)
