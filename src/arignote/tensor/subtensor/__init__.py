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
from arignote.tensor.subtensor.layout import (get_canonical_form_slice,  # noqa: F401 - public,
                                              slice_length)  # kept out of tensor.*
from arignote.tensor.subtensor.read import (AdvancedBooleanSubtensor, AdvancedSubtensor, AdvancedSubtensor1,
                                            Subtensor,
                                            advanced_subtensor, advanced_subtensor1, getitem)
from arignote.tensor.subtensor.write import (AdvancedBooleanIncSubtensor, AdvancedIncSubtensor,
                                             AdvancedIncSubtensor1, IncSubtensor,
                                             advanced_inc_subtensor, advanced_inc_subtensor1,
                                             advanced_set_subtensor, advanced_set_subtensor1,
                                             inc_subtensor, set_subtensor)

__all__ = ["Subtensor", "IncSubtensor", "AdvancedSubtensor1", "AdvancedIncSubtensor1",
           "AdvancedSubtensor", "AdvancedIncSubtensor", "AdvancedBooleanSubtensor",
           "AdvancedBooleanIncSubtensor", "IndexSlice", "getitem",
           "set_subtensor", "inc_subtensor", "advanced_subtensor", "advanced_subtensor1",
           "advanced_inc_subtensor", "advanced_set_subtensor", "advanced_inc_subtensor1",
           "advanced_set_subtensor1"]

# The names backends/gpu/ops.py imports from here (the public ones live in .index).
_numpy_index = numpy_index
_index_error = index_error
