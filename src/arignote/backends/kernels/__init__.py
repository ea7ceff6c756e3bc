"""The one kernel renderer shared by the backends: C-family source written once
against a dialect table (``render.py``), plus the indexing kernels
(``render_index.py``)."""
