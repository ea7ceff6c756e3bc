"""``theano.tensor.opt``: the ops Theano defined beside its graph rewrites (MakeVector, Shape_i,
Assert) and the decorators that put a user's rewrite into a phase (``register_canonicalize``...)."""
from arignote.compat.theano.opt import RewriteAsLocalOptimizer, in2out, local_optimizer, out2in
from arignote.compat.theano.optdb import (register_canonicalize, register_specialize,
                                          register_specialize_device, register_stabilize,
                                          register_uncanonicalize)
from arignote.tensor.checks import Assert, assert_op
from arignote.tensor.join import MakeVector, make_vector
from arignote.tensor.rewrites import canonicalize as _canon
from arignote.tensor.rewrites import comparisons as _comparisons
from arignote.tensor.rewrites import known_values as _known
from arignote.tensor.rewrites import reductions as _reductions
from arignote.tensor.rewrites.shape_feature import ShapeFeature  # noqa: F401  (in __all__)
from arignote.tensor.shape import Shape_i, shape_i

__all__ = ["MakeVector", "make_vector", "Shape_i", "shape_i", "Assert", "assert_op", "assert_",
           "register_canonicalize", "register_stabilize", "register_specialize", "register_uncanonicalize",
           "register_specialize_device", "local_optimizer", "in2out", "out2in"]

assert_ = assert_op  # Theano's other name for it

# Theano's names of its rewrites, as local optimizers made of ours (``out2in(local_dimshuffle_lift)``).
_THEANO_REWRITES = {
    "local_dimshuffle_lift": (_canon.local_dimshuffle_lift, _canon.local_dimshuffle_merge,
                              _canon.local_dimshuffle_identity),
    "local_useless_alloc": (_known.local_useless_alloc,), "local_merge_alloc": (_known.local_merge_alloc,), "local_canonicalize_alloc": (_known.local_useless_alloc,),
    "local_useless_reshape": (_canon.local_useless_reshape,), "local_useless_switch": (_known.local_useless_switch,),
    "local_incsubtensor_of_zeros": (_known.local_incsubtensor_of_zeros,),
    "local_setsubtensor_of_constants": (_known.local_incsubtensor_of_zeros,), "local_0_dot_x": (_known.local_0_dot_x,),
    "local_zero_div": (_known.local_div_of_known,), "local_intdiv_by_one": (_known.local_div_of_known,),
    "local_reduce_broadcastable": (_reductions.local_reduce_broadcastable,),
    "local_cut_useless_reduce": (_reductions.local_reduce_broadcastable,),
    "local_sum_prod_mul_by_scalar": (_reductions.local_reduce_scaled,),
    "local_op_of_op": (_reductions.local_reduce_merge,), "local_reduce_join": (_reductions.local_reduce_join,),
    "local_sum_prod_alloc": (_reductions.local_reduce_alloc,),
    "local_lift_transpose_through_dot": (_canon.local_lift_transpose_through_dot,),
    "local_useless_elemwise": (_canon.local_useless_elemwise, _comparisons.local_useless_elemwise_comparison),
}
globals().update({name: RewriteAsLocalOptimizer(name, *rules) for name, rules in _THEANO_REWRITES.items()})
