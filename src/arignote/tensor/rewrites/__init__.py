"""Tensor rewrites; importing this package registers them in the rewrite database.

Phases, in the order they run: ``canonicalize`` (identities, DimShuffles,
shapes), ``stabilize`` (numerically safer forms), ``specialize`` (faster
forms: powers, sums of squares, gemm), ``fusion``, ``inplace``.
"""
from arignote.tensor.rewrites import (blas, blocksparse, bn, canonicalize, comparisons, erf, fusion,  # noqa: F401
                                      inplace, inverses,
                                      known_values,
                                      nnet_compound, reductions,
                                      shape_feature, specialize, stabilize, subtensors)
