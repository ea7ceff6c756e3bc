"""Experimental modules, where Theano kept them (``sandbox.rng_mrg`` arrives with random streams)."""
