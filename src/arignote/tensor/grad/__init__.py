"""Gradient rules, one module per op family; importing this package registers them.

``arignote.gradient`` imports this package after defining ``register_grad``,
which every rule module imports, so the rules are in place whenever gradients
are used.
"""
from arignote.tensor.grad import (alloc, blas, builders, dimshuffle, elemwise, extra_ops,  # noqa: F401
                                  gradient_ops, join, linalg, nnet, reduction, shape, subtensor)
