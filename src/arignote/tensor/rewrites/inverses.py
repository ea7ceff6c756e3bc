"""Functions undone by the next one: elementwise inverses and casts through a wider dtype.

``rad2deg(deg2rad(x))`` is ``x`` (computed, it is ``x`` up to two roundings);
``arctanh(tanh(x))`` is ``x`` even where ``tanh`` rounds to 1 and the pair gives
``inf``. Pairs that hold only on part of the line (``arccosh(cosh(x)) = |x|``,
``tanh(arctanh(x))`` is NaN outside (-1, 1)) are not in ``INVERSES``. A cast to a
dtype that holds every value of the input, then another cast, is the second
cast alone (``float32 -> float64 -> float32`` is no cast at all).
"""
from __future__ import annotations

import numpy as np

from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.scalar.ops import Cast
from arignote.tensor import math as _math
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.rewrites.utils import op_name, retype

# (inner, outer) with outer(inner(x)) == x wherever inner is defined.
INVERSES = frozenset({("deg2rad", "rad2deg"), ("rad2deg", "deg2rad"), ("sinh", "arcsinh"),
                      ("arcsinh", "sinh"), ("tanh", "arctanh"), ("conj", "conj")})


@node_rewriter([Elemwise])
def local_func_inverse(fgraph: FunctionGraph, node: Apply):
    """``f_inverse(f(x))`` -> ``x`` for the pairs of ``INVERSES``."""
    out, inner = node.outputs[0], node.inputs[0]
    if (op_name(inner), op_name(out)) not in INVERSES:
        return None
    return [retype(inner.owner.inputs[0], out)]


def _cast_dtype(node: Apply) -> str | None:
    op = node.op
    if isinstance(op, Elemwise) and not op.inplace_pattern and isinstance(op.scalar_op, Cast):
        return op.scalar_op.dtype
    return None


@node_rewriter([Elemwise])
def local_cast_cast(fgraph: FunctionGraph, node: Apply):
    """``cast(cast(x, wide), d)`` -> ``cast(x, d)`` (``x`` itself when ``d`` is its dtype) when
    ``wide`` holds every value of ``x``'s dtype: the first cast then changed nothing."""
    outer, inner = _cast_dtype(node), node.inputs[0].owner
    if outer is None or inner is None or _cast_dtype(inner) is None:
        return None
    x = inner.inputs[0]
    if not np.can_cast(x.dtype, _cast_dtype(inner), "safe"):
        return None
    return [retype(x if x.dtype == outer else _math.cast(x, outer), node.outputs[0])]


for _rewriter in (local_func_inverse, local_cast_cast):
    rewrites.register(_rewriter, "canonicalize", "fast_run")
