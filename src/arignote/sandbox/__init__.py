"""Experimental modules, where Theano kept them: ``sandbox.rng_mrg`` (MRG31k3p random streams),
``sandbox.multinomial`` (its categorical draws from uniforms)."""
from arignote.sandbox import rng_mrg  # noqa: F401
from arignote.sandbox.rng_mrg import MRG_RandomStreams  # noqa: F401
