"""Loops in the graph: ``scan`` and the views built on it (Theano's ``scan_module``).

``op`` holds the Scan Op (the loop, its inner graph compiled once),
``basic`` the ``scan`` function that builds it from a step function, ``views``
``map``/``reduce``/``foldl``/``foldr``, ``checkpoints`` ``scan_checkpoints`` (a loop
whose gradient recomputes chunks of steps instead of storing them), and ``grad`` the gradient of a loop,
itself a loop running backwards, ``rewrites`` the rewrites of loops (unused inputs, merging),
``utils`` graph tools for loops and ``names`` Theano's names for a Scan's parts.

On a GPU device the loop runs there as a whole: the placement pass turns a
Scan into ``GpuScan`` (``backends/gpu/scan.py``), whose outer sequences,
state buffers, carried values and non-sequences are GPU arrays, and whose
inner graph takes and returns GPU arrays, so compiling it places its nodes on
the same device. The Scan takes GPU inputs and outputs, rather than keeping
host arrays and transferring at its boundary, because a host loop would have
to upload each step's inputs and download each step's outputs for an inner
graph on the device: transfers per step instead of at most one per call.
Rows of the device buffers are views, and each step's results are copied into
place by a device kernel. Integer scalars per step, non-array values (numpy
random states) and dtypes the device lacks stay on the host.
"""
from arignote.scan_module.op import Scan
from arignote.scan_module.basic import scan, until
from arignote.scan_module.views import foldl, foldr, map, reduce  # noqa: A004 - Theano's names
from arignote.scan_module.checkpoints import scan_checkpoints
from arignote.scan_module import grad  # noqa: F401,E402  (registers the gradient of Scan)
from arignote.scan_module import rewrites  # noqa: F401,E402  (registers the loop rewrites)

__all__ = ["Scan", "scan", "until", "map", "reduce", "foldl", "foldr", "scan_checkpoints"]
