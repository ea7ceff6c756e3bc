"""``theano.tensor.opt``: the ops Theano defined beside its graph rewrites (MakeVector, Shape_i, Assert)."""
from arignote.tensor.checks import Assert, assert_op
from arignote.tensor.join import MakeVector, make_vector
from arignote.tensor.shape import Shape_i

__all__ = ["MakeVector", "make_vector", "Shape_i", "Assert", "assert_op"]

assert_ = assert_op  # Theano's other name for it
__all__ += ["assert_"]
