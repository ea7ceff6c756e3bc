"""``theano.tensor.opt``: the ops Theano defined beside its graph rewrites (MakeVector, Shape_i,
Assert) and the decorators that put a user's rewrite into a phase (``register_canonicalize``...)."""
from arignote.compat.theano.opt import in2out, local_optimizer, out2in
from arignote.compat.theano.optdb import (register_canonicalize, register_specialize,
                                          register_specialize_device, register_stabilize,
                                          register_uncanonicalize)
from arignote.tensor.checks import Assert, assert_op
from arignote.tensor.join import MakeVector, make_vector
from arignote.tensor.shape import Shape_i, shape_i

__all__ = ["MakeVector", "make_vector", "Shape_i", "shape_i", "Assert", "assert_op", "assert_",
           "register_canonicalize", "register_stabilize", "register_specialize", "register_uncanonicalize",
           "register_specialize_device", "local_optimizer", "in2out", "out2in"]

assert_ = assert_op  # Theano's other name for it
