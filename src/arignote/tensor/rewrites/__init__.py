"""Tensor rewrites; importing this package registers them in the rewrite database.

Phases, in the order they run: ``canonicalize`` (identities, DimShuffles,
shapes), ``stabilize`` (numerically safer forms), ``specialize`` (faster
forms: powers, sums of squares, gemm), ``fusion``, ``inplace``.
"""
from arignote.tensor.rewrites import (bn, canonicalize, erf, fusion, inplace, inverses, known_values,  # noqa: F401
                                      nnet_compound, reductions,
                                      shape_feature, specialize, stabilize)
