"""Random draws in graphs: generator-state types, the draw op, and the streams.

``RandomStreams`` (Theano's ``shared_randomstreams``) draws from numpy's
legacy ``RandomState``; the MRG31k3p generator behind
``sandbox.rng_mrg.MRG_RandomStreams`` lives in ``mrg31k3p`` and ``mrg_ops``.
"""
from arignote.tensor.random.type import (RandomStateSharedVariable, RandomStateType,
                                         RandomStateVariable, random_state_type)
from arignote.tensor.random.op import RandomFunction
from arignote.tensor.random.streams import RandomStreams

__all__ = ["RandomStateType", "RandomStateVariable", "RandomStateSharedVariable",
           "random_state_type", "RandomFunction", "RandomStreams"]
