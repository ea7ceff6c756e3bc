"""Indexing: ``x[index]``, ``set_subtensor`` and ``inc_subtensor``, with numpy's semantics.

The pieces, in the order an index meets them:

* ``index`` - the ``idx_list`` an index is parsed into when the graph is
  built, and the numpy index it becomes at run time;
* ``layout`` - the type and the symbolic shape of ``x[index]``, and
  ``slice_length``;
* ``read`` - ``getitem`` and the ops that read (``Subtensor`` is a view; the
  advanced ops copy);
* ``write`` - ``set_subtensor``/``inc_subtensor`` and the ops that write into
  a copy of ``x``.
"""
from arignote.tensor.subtensor.index import IndexSlice, index_error, numpy_index
from arignote.tensor.subtensor.layout import slice_length  # noqa: F401 - public, kept out of tensor.*
from arignote.tensor.subtensor.read import AdvancedSubtensor, AdvancedSubtensor1, Subtensor, getitem
from arignote.tensor.subtensor.write import (AdvancedIncSubtensor, AdvancedIncSubtensor1, IncSubtensor,
                                             inc_subtensor, set_subtensor)

__all__ = ["Subtensor", "IncSubtensor", "AdvancedSubtensor1", "AdvancedIncSubtensor1",
           "AdvancedSubtensor", "AdvancedIncSubtensor", "IndexSlice", "getitem",
           "set_subtensor", "inc_subtensor"]

# The names backends/gpu/ops.py imports from here (the public ones live in .index).
_numpy_index = numpy_index
_index_error = index_error
