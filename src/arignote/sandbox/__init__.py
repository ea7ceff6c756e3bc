"""Experimental modules, where Theano kept them: ``sandbox.rng_mrg`` (MRG31k3p random streams)."""
from arignote.sandbox import rng_mrg  # noqa: F401
from arignote.sandbox.rng_mrg import MRG_RandomStreams  # noqa: F401
