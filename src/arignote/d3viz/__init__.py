"""Theano's ``d3viz``: a compiled function's graph as an interactive HTML page (``d3viz``),
as DOT text (``d3write``) or as a pydot graph (``formatting.PyDotFormatter``)."""
from arignote.d3viz import formatting  # noqa: F401
from arignote.d3viz.page import d3viz, d3write  # noqa: F401
