"""Tensor rewrites; importing this package registers them in the rewrite database.

Phases, in the order they run: ``canonicalize`` (identities, DimShuffles,
shapes), ``stabilize`` (numerically safer forms), ``specialize`` (faster
forms: powers, sums of squares, gemm), ``fusion``, ``inplace``.
"""
from arignote.tensor.rewrites import (blocksparse, bn, canonicalize, comparisons, erf, fusion, inplace, inverses,  # noqa: F401
                                      known_values,
                                      nnet_compound, reductions,
                                      shape_feature, specialize, stabilize)
