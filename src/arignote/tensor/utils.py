"""``tensor.utils``: ``hash_from_ndarray`` (a content key for arrays) and
``shape_of_variables`` (every variable's shape in a graph, from its inputs' shapes,
without computing the graph)."""
from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from arignote.graph.basic import Variable
from arignote.graph.fg import FunctionGraph

__all__ = ["hash_from_ndarray", "shape_of_variables"]


def hash_from_ndarray(data: np.ndarray) -> str:
    """A hex digest of ``data``'s values, shape and dtype: equal for an array and its copy (views
    included, whatever their strides), different when any of the three differs."""
    data = np.ascontiguousarray(data)
    h = hashlib.sha256()
    h.update(data.tobytes())
    h.update(repr((data.shape, data.dtype.str)).encode())
    return h.hexdigest()


def shape_of_variables(fgraph: FunctionGraph, input_shapes: Mapping[Variable, Sequence[int]]
                       ) -> dict[Variable, tuple[int, ...]]:
    """The shape of every tensor in ``fgraph`` when its inputs have ``input_shapes``.

    Works from the ops' shape inference; the inputs' values are never read (a
    variable whose shape depends on values, the output of ``nonzero`` say, gets
    the shape of its computation on zeros).
    """
    from arignote.compile.function import function
    from arignote.tensor.rewrites.shape_feature import shape_feature

    for var in input_shapes:
        if var not in fgraph.inputs:
            raise ValueError(f"shape_of_variables: {var} is not an input of the graph (a FunctionGraph "
                             "built with clone=True has copies of the variables): pass its inputs, "
                             "fgraph.inputs")
    missing = [v for v in fgraph.inputs if hasattr(v.type, "ndim") and v not in input_shapes]
    if missing:
        raise ValueError(f"shape_of_variables: no shape given for the inputs {missing}")
    feature = shape_feature(fgraph)
    variables = [v for v in fgraph.variables if hasattr(v.type, "ndim")]
    entries = [list(feature.shape(v)) for v in variables]
    symbolic = [(k, d) for k, shape in enumerate(entries) for d, e in enumerate(shape)
                if isinstance(e, Variable)]
    inputs = [v for v in fgraph.inputs if hasattr(v.type, "ndim")]
    if symbolic:
        lengths = function(inputs, [entries[k][d] for k, d in symbolic], on_unused_input="ignore")
        # Zero-strided views: any shape for the price of one element.
        values = [np.broadcast_to(np.zeros((), v.type.dtype), tuple(input_shapes[v])) for v in inputs]
        for (k, d), value in zip(symbolic, lengths(*values)):
            entries[k][d] = int(value)
    return {v: tuple(int(e) for e in shape) for v, shape in zip(variables, entries)}
