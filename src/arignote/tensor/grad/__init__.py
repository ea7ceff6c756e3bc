"""Gradient rules, one module per op family; importing this package registers them.

``arignote.gradient`` imports this package after defining ``register_grad``,
which every rule module imports, so the rules are in place whenever gradients
are used.
"""
from arignote.tensor.grad import (activations, alloc, blas, blocksparse, bn, builders, conv, dimshuffle,  # noqa: F401
                                  elemwise, extra_ops, gradient_ops, join, linalg, neighbours, nnet,
                                  pool, reduction, shape, subtensor)
