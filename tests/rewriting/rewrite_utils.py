"""What the rewrite tests share: compiling with and without rewrites, and naming a graph's ops."""
import numpy as np

from arignote import function
from arignote.compile.mode import Mode
from arignote.tensor.elemwise import Elemwise

NO_REWRITES = Mode(optimizer=None)


def phase_mode(*phases: str) -> Mode:
    """Only the rewrites of ``phases`` (and merging)."""
    return Mode(optimizer=None).including(*phases)


def op_names(f) -> list[str]:
    """The ops of a compiled function in run order: scalar op names for Elemwise, else class names."""
    return [n.op.scalar_op.name if isinstance(n.op, Elemwise) else type(n.op).__name__
            for n in f.maker.fgraph.toposort()]


def check_same_values(inputs, output, mode, values, rtol=1e-7, atol=0.0):
    """Compile ``output`` with ``mode`` and without rewrites; both give the same values.

    Returns the rewritten function so the caller can look at its graph.
    """
    f = function(inputs, output, mode=mode, on_unused_input="ignore")
    g = function(inputs, output, mode=NO_REWRITES, on_unused_input="ignore")
    with np.errstate(all="ignore"):
        got, expected = f(*values), g(*values)
    got = got if isinstance(got, list) else [got]
    expected = expected if isinstance(expected, list) else [expected]
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    return f
