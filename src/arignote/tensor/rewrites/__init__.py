"""Tensor rewrites; importing this package registers them in the rewrite database.

Phases, in the order they run: ``canonicalize`` (identities, DimShuffles,
shapes), ``stabilize`` (numerically safer forms), ``specialize`` (faster
forms: powers, sums of squares, gemm), ``fusion``, ``inplace``.
"""
from arignote.tensor.rewrites import (bn, canonicalize, fusion, inplace, shape_feature,  # noqa: F401
                                      specialize, stabilize)
