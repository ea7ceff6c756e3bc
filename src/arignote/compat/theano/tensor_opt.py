"""``theano.tensor.opt``: the ops Theano defined beside its graph rewrites (MakeVector, Shape_i)."""
from arignote.tensor.join import MakeVector, make_vector
from arignote.tensor.shape import Shape_i

__all__ = ["MakeVector", "make_vector", "Shape_i"]
